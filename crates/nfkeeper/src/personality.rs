//! The iptables personalities (`iptables`, `ip6tables`, `*-save`,
//! `*-restore`): the one front-end (`iptables::tool`) over the backend the
//! settings choose — the daemon when it answers, else the kernel directly
//! (`keeper::Session`), or an offline model in a file.

use crate::settings::Settings;
use crate::Personality;
use iptables::bytes::Unmap;
use iptables::tool::{self, Backend};
use ruleset::Family;
use std::io::{Read, Write};

fn wire_family(f: Family) -> proto::Fam {
    match f {
        Family::Ipv4 => proto::Fam::V4,
        _ => proto::Fam::V6,
    }
}

fn family_of(p: Personality) -> Family {
    match p {
        Personality::Iptables | Personality::Save | Personality::Restore => Family::Ipv4,
        _ => Family::Ipv6,
    }
}

/// Open the backend: offline when a state file is configured, else the
/// kernel of the current network namespace.
fn backend(family: Family, s: &Settings) -> Result<Box<dyn Backend>, String> {
    if let Some(path) = &s.offline {
        return crate::offline::State::load(family, path).map(|b| Box::new(b) as Box<dyn Backend>);
    }
    keeper::Session::open(family, s.command_engine())
        .map(|b| Box::new(b) as Box<dyn Backend>)
        .map_err(|e| {
            e.to_iptables()
                .render("nfkeeper", None)
                .trim_end()
                .to_string()
        })
}

/// Run one personality; returns the exit code.
pub fn run(p: Personality, prog: &str, args: &[String], s: &Settings) -> i32 {
    let family = family_of(p);
    // Text leaves as the bytes it came in as (iptables::bytes).
    let stdout = std::io::stdout();
    let mut out = Unmap::new(std::io::BufWriter::with_capacity(1 << 16, stdout.lock()));
    let mut err = Unmap::new(std::io::stderr());
    let code = match p {
        Personality::Iptables | Personality::Ip6tables => {
            iptables(family, prog, args, s, &mut out, &mut err)
        }
        Personality::Save | Personality::Save6 => save(family, prog, args, s, &mut out, &mut err),
        Personality::Restore | Personality::Restore6 => {
            restore(family, prog, args, s, &mut out, &mut err)
        }
    };
    let _ = out.flush();
    code
}

fn iptables(
    family: Family,
    prog: &str,
    args: &[String],
    s: &Settings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    // The daemon runs the same front-end on its side.
    let req = proto::Request::Iptables {
        family: wire_family(family),
        prog: prog.to_string(),
        args: args.to_vec(),
    };
    if let Some(code) = crate::via_daemon::run(&req, prog, s, out) {
        return code;
    }
    let mut b = match backend(family, s) {
        Ok(b) => b,
        Err(msg) => {
            let _ = writeln!(err, "{msg}");
            return 1;
        }
    };
    tool::iptables(family, prog, &tool::words(args), b.as_mut(), out, err)
}

fn save(
    family: Family,
    prog: &str,
    args: &[String],
    s: &Settings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let a = match tool::save_args(prog, &tool::words(args), out, err) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let mut file;
    let out: &mut dyn Write = match &a.file {
        None => out,
        Some(f) => match std::fs::File::create(f) {
            Ok(h) => {
                file = Unmap::new(std::io::BufWriter::with_capacity(1 << 16, h));
                &mut file
            }
            Err(e) => {
                let _ = writeln!(
                    err,
                    "Failed to open file, error: {}",
                    keeper::error::strerror(e.raw_os_error().unwrap_or(0))
                );
                return 1;
            }
        },
    };
    let req = proto::Request::Save {
        family: wire_family(family),
        prog: prog.to_string(),
        counters: a.counters,
        table: a.table.map(|t| t.name().to_string()),
    };
    let code = match crate::via_daemon::run(&req, prog, s, out) {
        Some(code) => code,
        None => match backend(family, s) {
            Ok(mut b) => tool::save(prog, family, &a, b.as_mut(), out, err),
            Err(msg) => {
                let _ = writeln!(err, "{msg}");
                1
            }
        },
    };
    let _ = out.flush();
    code
}

/// Bytes reserved before reading a restore from standard input (untouched
/// pages cost nothing).
const STDIN_START: usize = 256 * 1024;

fn restore(
    family: Family,
    prog: &str,
    args: &[String],
    s: &Settings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let a = match tool::restore_args(prog, &tool::words(args), out, err) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let mut input = Vec::new();
    let read = match &a.file {
        Some(f) => std::fs::File::open(f).and_then(|mut h| h.read_to_end(&mut input)),
        None => {
            // A pipe gives no size: start where a big restore's reads stop
            // being small (from 32 bytes up, a 700 KB input took 17 reads).
            input.reserve(STDIN_START);
            std::io::stdin().read_to_end(&mut input)
        }
    };
    if let Err(e) = read {
        let _ = writeln!(
            err,
            "Can't open {}: {}",
            a.file.as_deref().unwrap_or("stdin"),
            keeper::error::strerror(e.raw_os_error().unwrap_or(0))
        );
        return 1;
    }
    restore_payload(family, prog, &a, input, s, out, err)
}

/// Restore `input` (the bytes of a restore file) as `prog` with options
/// `a`: through the daemon when it answers, else the backend. The path of
/// every restore, `nfkeeper migrate`'s included.
pub fn restore_payload(
    family: Family,
    prog: &str,
    a: &tool::RestoreArgs,
    input: Vec<u8>,
    s: &Settings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let req = proto::Request::Restore {
        family: wire_family(family),
        prog: prog.to_string(),
        noflush: a.noflush,
        counters: a.counters,
        test: a.test,
        table: a.table.clone(),
        payload: input,
    };
    if let Some(code) = crate::via_daemon::run(&req, prog, s, out) {
        return code;
    }
    let proto::Request::Restore { payload, .. } = req else {
        unreachable!("built above")
    };
    let input = iptables::bytes::decode(&payload);
    match backend(family, s) {
        Ok(mut b) => tool::restore(family, prog, a, &input, b.as_mut(), err),
        Err(msg) => {
            let _ = writeln!(err, "{msg}");
            1
        }
    }
}

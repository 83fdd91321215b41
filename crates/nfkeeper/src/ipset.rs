//! The `ipset` personality (argv[0] `ipset`, or `nfkeeper ipset ARGS`):
//! ipset 7.21's command line over nfkeeper's native nftables sets
//! (`keeper::ipset`). The program's I/O is here: restore input from stdin
//! or `-file`, listings to stdout or `-file`, messages, the exit status.

use crate::settings::Settings;
use ipset::exec::Output;
use ipset::parse::{verb, Cmd};
use std::io::{Read, Write};

/// The `-file`/`-f` value of a command line, if any.
fn file_arg(args: &[String]) -> Option<&str> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let a = a.strip_prefix('-').unwrap_or(a);
        if matches!(a, "-f" | "-file" | "f" | "file") {
            return it.next().map(String::as_str);
        }
    }
    None
}

/// Run `ipset ARGS`; returns the exit status.
pub fn run(args: &[String], s: &Settings) -> i32 {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let cmd = verb(&words).map(|(c, _)| c);
    let file = file_arg(args);
    let mut input = None;
    if cmd == Some(Cmd::Restore) {
        let mut text = Vec::new();
        let read = match file {
            Some(f) => std::fs::File::open(f).and_then(|mut h| h.read_to_end(&mut text)),
            None => std::io::stdin().read_to_end(&mut text),
        };
        if let Err(e) = read {
            eprintln!(
                "ipset v{}: Cannot open {} for reading: {}",
                ipset::error::VERSION,
                file.unwrap_or("stdin"),
                keeper::error::strerror(e.raw_os_error().unwrap_or(0))
            );
            return 1;
        }
        input = Some(String::from_utf8_lossy(&text).into_owned());
    }
    let req = proto::Request::Ipset {
        args: args.to_vec(),
        input: input.as_ref().map(|t| t.as_bytes().to_vec()),
    };
    match crate::via_daemon::collect(&req, "ipset", s) {
        Some(Ok((stdout, stderr, code))) => {
            return emit(
                Output {
                    stdout,
                    stderr,
                    code,
                },
                cmd,
                file,
            )
        }
        Some(Err(code)) => return code,
        None => {}
    }
    let job = keeper::ipset::Job {
        args: args.to_vec(),
        input,
    };
    let out = match keeper::Session::open(ruleset::Family::Ipv4, s.command_engine()) {
        Ok(mut sess) => sess.ipset(job),
        Err(e) => keeper::ipset::txn::failure(&e, false),
    };
    emit(out, cmd, file)
}

/// Print a command's output (a listing to `-file` when given) and return
/// its status.
fn emit(out: Output, cmd: Option<Cmd>, file: Option<&str>) -> i32 {
    let to_file = matches!(cmd, Some(Cmd::List | Cmd::Save)) && file.is_some();
    if to_file && out.code == 0 {
        let path = file.expect("checked");
        if let Err(e) = std::fs::write(path, out.stdout.as_bytes()) {
            eprintln!(
                "ipset v{}: Cannot open {path} for writing: {}",
                ipset::error::VERSION,
                keeper::error::strerror(e.raw_os_error().unwrap_or(0))
            );
            return 1;
        }
    } else {
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(out.stdout.as_bytes());
        let _ = o.flush();
    }
    let _ = std::io::stderr().write_all(out.stderr.as_bytes());
    out.code
}

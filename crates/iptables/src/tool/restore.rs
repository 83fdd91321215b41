//! `iptables-restore` / `ip6tables-restore`.

use super::{finish, Backend};
use crate::exec::RestoreOpts;
use crate::parse::getopt::{getopt_long, HasArg, Item, LongOpt};
use ruleset::{Family, TableKind};
use std::io::Write;

/// What the command line asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestoreArgs {
    pub counters: bool,
    pub verbose: bool,
    /// `-t`: parse and check only.
    pub test: bool,
    pub noflush: bool,
    /// `-T NAME`: only that table's sections. A name that is no table
    /// matches no section (iptables then restores nothing).
    pub table: Option<String>,
    /// `-w [SECONDS]` (see `ListFlags::wait`).
    pub wait: Option<Option<u32>>,
    /// The input file; standard input when `None` (the caller reads it).
    pub file: Option<String>,
}

impl RestoreArgs {
    /// The table `-T` selects, and whether it names one at all.
    fn only(&self) -> (Option<TableKind>, bool) {
        match &self.table {
            None => (None, true),
            Some(n) => {
                let k = TableKind::from_name(n);
                (k, k.is_some())
            }
        }
    }
}

const fn opt(name: &'static str, has_arg: HasArg, val: char) -> LongOpt {
    LongOpt { name, has_arg, val }
}

const LONG: &[LongOpt] = &[
    opt("counters", HasArg::No, 'c'),
    opt("verbose", HasArg::No, 'v'),
    opt("version", HasArg::No, 'V'),
    opt("test", HasArg::No, 't'),
    opt("help", HasArg::No, 'h'),
    opt("noflush", HasArg::No, 'n'),
    opt("modprobe", HasArg::Required, 'M'),
    opt("table", HasArg::Required, 'T'),
    opt("ipv4", HasArg::No, '4'),
    opt("ipv6", HasArg::No, '6'),
    opt("wait", HasArg::OptionalOrNext, 'w'),
    opt("wait-interval", HasArg::OptionalOrNext, 'W'),
];

/// iptables-restore's usage text (printed on stderr, as iptables does).
pub fn usage(prog: &str) -> String {
    format!(
        "Usage: {prog} [-c] [-v] [-V] [-t] [-h] [-n] [-T table] [-M command] [-4] [-6] [file]\n\
         \t   [ --counters ]\n\
         \t   [ --verbose ]\n\
         \t   [ --version]\n\
         \t   [ --test ]\n\
         \t   [ --help ]\n\
         \t   [ --noflush ]\n\
         \t   [ --table=<TABLE> ]\n\
         \t   [ --modprobe=<command> ]\n\
         \t   [ --ipv4 ]\n\
         \t   [ --ipv6 ]\n"
    )
}

/// Parse iptables-restore's options as iptables 1.8.11 (nft) does. `Err`
/// is the exit code, after the messages (or `-V`/`-h` output) were
/// written.
pub fn restore_args(
    prog: &str,
    args: &[&str],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<RestoreArgs, i32> {
    let p = getopt_long(args, "bcvVthnM:T:w?W?", LONG);
    let mut a = RestoreArgs::default();
    let tryhelp = |err: &mut dyn Write| {
        let _ = writeln!(err, "Try `{prog} -h' for more information.");
        Err(1)
    };
    for item in p.items {
        let o = match item {
            Item::Opt(o) => o,
            Item::Bad(msg) => {
                let _ = writeln!(err, "{prog}: {msg}");
                return tryhelp(err);
            }
        };
        match o.val {
            'b' => {
                let _ = writeln!(err, "-b/--binary option is not implemented");
            }
            'c' => a.counters = true,
            'v' => a.verbose = true,
            'V' => {
                let _ = writeln!(out, "{prog} v{}", crate::VERSION);
                return Err(0);
            }
            't' => a.test = true,
            'h' => {
                let _ = err.write_all(usage(prog).as_bytes());
                return Err(0);
            }
            'n' => a.noflush = true,
            'M' => {}
            'T' => a.table = o.arg.map(str::to_string),
            // iptables-restore ignores -w/-W (and their value).
            'w' => a.wait = Some(o.arg.and_then(|s| s.trim().parse().ok())),
            'W' => {}
            // --ipv4/--ipv6 are in the long table but not handled: getopt
            // returns '4'/'6' and iptables-restore takes its default case.
            _ => return tryhelp(err),
        }
    }
    match p.operands.as_slice() {
        [] => {}
        [f] => a.file = Some(f.to_string()),
        _ => {
            let _ = writeln!(err, "Unknown arguments found on commandline");
            return Err(1);
        }
    }
    Ok(a)
}

/// Run iptables-restore of `input`; returns the exit code.
pub fn restore(
    family: Family,
    prog: &str,
    a: &RestoreArgs,
    input: &str,
    b: &mut dyn Backend,
    err: &mut dyn Write,
) -> i32 {
    let (table, named) = a.only();
    if !named {
        // No section matches a name that is no table.
        return finish(b, err, 0);
    }
    let o = RestoreOpts {
        family,
        noflush: a.noflush,
        counters: a.counters,
        test: a.test,
        table,
        prog,
    };
    let code = match b.restore(input, &o, a.wait) {
        Ok(stats) => {
            for w in &stats.warnings {
                let _ = writeln!(err, "{w}");
            }
            0
        }
        Err(e) => {
            let _ = err.write_all(e.render(prog).as_bytes());
            e.exit_code()
        }
    };
    finish(b, err, code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_as_iptables_restore() {
        type Case = (
            &'static [&'static str],
            Result<RestoreArgs, i32>,
            &'static str,
        );
        let base = RestoreArgs::default();
        let cases: Vec<Case> = vec![
            (&[], Ok(base.clone()), ""),
            (
                &["-nc", "--table=filter"],
                Ok(RestoreArgs {
                    noflush: true,
                    counters: true,
                    table: Some("filter".into()),
                    ..base.clone()
                }),
                "",
            ),
            (
                &["--noflu", "-w", "3", "rules"],
                Ok(RestoreArgs {
                    noflush: true,
                    wait: Some(Some(3)),
                    file: Some("rules".into()),
                    ..base.clone()
                }),
                "",
            ),
            (
                &["-w", "rules"],
                Ok(RestoreArgs {
                    wait: Some(None),
                    ..base.clone()
                }),
                "",
            ),
            (
                &["--t"],
                Err(1),
                "iptables-restore: option '--t' is ambiguous; possibilities: '--test' '--table'\nTry `iptables-restore -h' for more information.\n",
            ),
            (
                &["-4"],
                Err(1),
                "iptables-restore: invalid option -- '4'\nTry `iptables-restore -h' for more information.\n",
            ),
            (
                &["--ipv4"],
                Err(1),
                "Try `iptables-restore -h' for more information.\n",
            ),
            (
                &["a", "b"],
                Err(1),
                "Unknown arguments found on commandline\n",
            ),
        ];
        for (argv, want, e) in cases {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let got = restore_args("iptables-restore", argv, &mut out, &mut err);
            assert_eq!(got, want, "{argv:?}");
            assert_eq!(String::from_utf8_lossy(&err), e, "{argv:?}");
        }
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(restore_args("x", &["-h"], &mut out, &mut err), Err(0));
        assert!(String::from_utf8_lossy(&err).starts_with("Usage: x [-c]"));
    }
}

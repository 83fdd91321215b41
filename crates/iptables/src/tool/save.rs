//! `iptables-save` / `ip6tables-save`.

use super::{finish, Backend};
use crate::parse::getopt::{getopt_long, HasArg, Item, LongOpt};
use ruleset::{Family, TableKind};
use std::io::Write;

/// What the command line asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SaveArgs {
    /// `-c`: rule and policy counters.
    pub counters: bool,
    /// `-t TABLE`: only that table (printed even if it does not exist).
    pub table: Option<TableKind>,
    /// `-f FILE`: write there instead of stdout (the caller opens it).
    pub file: Option<String>,
}

const LONG: &[LongOpt] = &[
    LongOpt {
        name: "counters",
        has_arg: HasArg::No,
        val: 'c',
    },
    LongOpt {
        name: "version",
        has_arg: HasArg::No,
        val: 'V',
    },
    LongOpt {
        name: "dump",
        has_arg: HasArg::No,
        val: 'd',
    },
    LongOpt {
        name: "table",
        has_arg: HasArg::Required,
        val: 't',
    },
    LongOpt {
        name: "modprobe",
        has_arg: HasArg::Required,
        val: 'M',
    },
    LongOpt {
        name: "file",
        has_arg: HasArg::Required,
        val: 'f',
    },
];

/// Parse iptables-save's options as iptables 1.8.11 (nft) does. `Err` is
/// the exit code, after the messages (or `-V`'s output) were written.
pub fn save_args(
    prog: &str,
    args: &[&str],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<SaveArgs, i32> {
    let p = getopt_long(args, "bcdt:M:f:V", LONG);
    let mut a = SaveArgs::default();
    for item in p.items {
        let o = match item {
            Item::Opt(o) => o,
            Item::Bad(msg) => {
                let _ = writeln!(err, "{prog}: {msg}");
                let _ = writeln!(err, "Look at manual page `{prog}.8' for more information.");
                return Err(1);
            }
        };
        match o.val {
            'b' => {
                let _ = writeln!(err, "-b/--binary option is not implemented");
            }
            'c' => a.counters = true,
            't' => {
                let name = o.arg.unwrap_or_default();
                match TableKind::from_name(name) {
                    Some(k) => a.table = Some(k),
                    None => {
                        let _ = writeln!(err, "Table `{name}' does not exist");
                        return Err(1);
                    }
                }
            }
            'f' => a.file = o.arg.map(str::to_string),
            'V' => {
                let _ = writeln!(out, "{prog} v{}", crate::VERSION);
                return Err(0);
            }
            // -d (dump: the same output), -M (module loader): no effect.
            _ => {}
        }
    }
    if !p.operands.is_empty() {
        let _ = writeln!(err, "Unknown arguments found on commandline");
        return Err(1);
    }
    Ok(a)
}

/// Run iptables-save; returns the exit code.
pub fn save(
    prog: &str,
    family: Family,
    a: &SaveArgs,
    b: &mut dyn Backend,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let code = match b.save(a.counters, a.table, prog, out) {
        Ok(()) => {
            let _ = out.flush();
            for w in b.others(family).warnings(family, true) {
                let _ = writeln!(err, "{w}");
            }
            0
        }
        Err(e) => {
            let _ = out.flush();
            let _ = err.write_all(e.render(prog, None).as_bytes());
            e.exit_code()
        }
    };
    finish(b, err, code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_as_iptables_save() {
        // (argv, result, stdout, stderr)
        type Case = (
            &'static [&'static str],
            Result<SaveArgs, i32>,
            &'static str,
            &'static str,
        );
        let ok = |counters, table: Option<TableKind>| {
            Ok(SaveArgs {
                counters,
                table,
                file: None,
            })
        };
        let cases: Vec<Case> = vec![
            (&[], ok(false, None), "", ""),
            (&["-c"], ok(true, None), "", ""),
            (&["--coun", "-tnat"], ok(true, Some(TableKind::Nat)), "", ""),
            (&["--table=filter"], ok(false, Some(TableKind::Filter)), "", ""),
            (&["-d", "-M", "x"], ok(false, None), "", ""),
            (
                &["-b"],
                ok(false, None),
                "",
                "-b/--binary option is not implemented\n",
            ),
            (
                &["-t", "bogus"],
                Err(1),
                "",
                "Table `bogus' does not exist\n",
            ),
            (
                &["-h"],
                Err(1),
                "",
                "iptables-save: invalid option -- 'h'\nLook at manual page `iptables-save.8' for more information.\n",
            ),
            (
                &["foo"],
                Err(1),
                "",
                "Unknown arguments found on commandline\n",
            ),
            (&["-V"], Err(0), "iptables-save v1.8.11 (nfkeeper)\n", ""),
        ];
        for (argv, want, o, e) in cases {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let got = save_args("iptables-save", argv, &mut out, &mut err);
            assert_eq!(got, want, "{argv:?}");
            assert_eq!(String::from_utf8_lossy(&out), o, "{argv:?}");
            assert_eq!(String::from_utf8_lossy(&err), e, "{argv:?}");
        }
    }
}

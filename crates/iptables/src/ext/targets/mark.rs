//! `-j MARK`: set/modify the packet mark (iptables' libxt_MARK, revision 2).
//!
//! Every form reduces to "clear the bits of `mask`, then XOR `mark`", which is
//! what the kernel stores and what iptables saves (`--set-xmark MARK/MASK`).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mark {
    pub mark: u32,
    pub mask: u32,
}

const SET_MARK: u8 = 0;
const AND_MARK: u8 = 1;
const OR_MARK: u8 = 2;
const XOR_MARK: u8 = 3;
const SET_XMARK: u8 = 4;
const ANY: u32 = 1 << SET_MARK | 1 << AND_MARK | 1 << OR_MARK | 1 << XOR_MARK | 1 << SET_XMARK;

/// xtables' XTTYPE_MARKMASK32 (`value[/mask]`, any base, mask defaults to
/// 0xffffffff) with its error messages. Shared with CONNMARK.
pub(crate) fn parse_markmask(c: &Call) -> Result<(u32, u32)> {
    let bad = || {
        Error::param(format!(
            "{}: bad integer value for option \"--{}\", or out of range.\n",
            c.ext, c.opt.name
        ))
    };
    let garbage = || {
        Error::param(format!(
            "{}: trailing garbage after value for option \"--{}\".\n",
            c.ext, c.opt.name
        ))
    };
    // One number with whatever follows it, as xtables_strtoui with an end
    // pointer reads it: no leading '-', at least one digit, fits 32 bits.
    let num = |s: &'_ str| -> Option<(u32, usize)> {
        if s.trim_start().starts_with('-') {
            return None;
        }
        let (v, rest) = opt::strtoul(s, 0)?;
        let v = u32::try_from(v).ok()?;
        Some((v, s.len() - rest.len()))
    };
    let (mark, used) = num(c.arg).ok_or_else(bad)?;
    let rest = &c.arg[used..];
    if rest.is_empty() {
        return Ok((mark, u32::MAX));
    }
    let Some(m) = rest.strip_prefix('/') else {
        return Err(garbage());
    };
    let (mask, used) = num(m).ok_or_else(bad)?;
    if used != m.len() {
        return Err(garbage());
    }
    Ok((mark, mask))
}

impl Ext for Mark {
    const NAME: &'static str = "MARK";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("set-xmark", SET_XMARK, Arg::Required).excl(ANY),
        OptDef::new("set-mark", SET_MARK, Arg::Required).excl(ANY),
        OptDef::new("and-mark", AND_MARK, Arg::Required).excl(ANY),
        OptDef::new("or-mark", OR_MARK, Arg::Required).excl(ANY),
        OptDef::new("xor-mark", XOR_MARK, Arg::Required).excl(ANY),
    ];

    fn new(_: &ParseCtx) -> Self {
        Mark { mark: 0, mask: 0 }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let u32_arg = |c: &Call| c.uint(0, u32::MAX as u64).map(|v| v as u32);
        (self.mark, self.mask) = match c.opt.id {
            SET_XMARK => parse_markmask(c)?,
            SET_MARK => {
                let (v, m) = parse_markmask(c)?;
                (v, v | m)
            }
            AND_MARK => (0, !u32_arg(c)?),
            OR_MARK => {
                let v = u32_arg(c)?;
                (v, v)
            }
            XOR_MARK => (u32_arg(c)?, 0),
            _ => return Ok(()),
        };
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        if seen & ANY == 0 {
            return Err(Error::param(
                "MARK: One of the --set-xmark, --{and,or,xor,set}-mark options is required",
            ));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(out, " --set-xmark {:#x}/{:#x}", self.mark, self.mask);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        let _ = if self.mark == 0 {
            write!(out, " MARK and {:#x}", !self.mask)
        } else if self.mark == self.mask {
            write!(out, " MARK or {:#x}", self.mark)
        } else if self.mask == 0 {
            write!(out, " MARK xor {:#x}", self.mark)
        } else if self.mask == u32::MAX {
            write!(out, " MARK set {:#x}", self.mark)
        } else {
            write!(out, " MARK xset {:#x}/{:#x}", self.mark, self.mask)
        };
    }
}

/// Shared by the unit tests of the target modules: parse one rule and print
/// its target extension.
#[cfg(test)]
pub(crate) mod testutil {
    use crate::ext::PrintCtx;
    use crate::parse::{parse, Command, ParseOpts};
    use crate::rule::Target;
    use ruleset::{Family, TableKind};

    /// `-A CHAIN RULE` (RULE split on spaces) in `table`; on success the
    /// target's (save, list, list -n) texts, else the error message.
    pub fn run(
        family: Family,
        table: TableKind,
        chain: &str,
        rule: &str,
    ) -> Result<(String, String, String), String> {
        let mut argv: Vec<&str> = vec!["-A", chain];
        argv.extend(rule.split_whitespace());
        let o = ParseOpts {
            family,
            restore: false,
            table: Some(table),
            prog: "iptables",
        };
        let parsed = parse(&argv, o).map_err(|e| e.msg)?;
        assert_eq!(parsed.command, Command::Append(chain.into()));
        let r = &parsed.rules[0];
        let Target::Ext(t) = &r.target else {
            panic!("no target extension in {rule}");
        };
        let mut out = [String::new(), String::new(), String::new()];
        for (i, numeric) in [false, false, true].into_iter().enumerate() {
            let ctx = PrintCtx {
                family,
                proto: r.proto,
                numeric,
            };
            if i == 0 {
                t.save(&ctx, &mut out[0]);
            } else {
                t.list(&ctx, &mut out[i]);
            }
        }
        let [s, l, n] = out;
        Ok((s, l, n))
    }

    /// The error message of a rule that must be rejected.
    pub fn err(family: Family, table: TableKind, chain: &str, rule: &str) -> String {
        match run(family, table, chain, rule) {
            Ok(r) => panic!("accepted: {rule} -> {r:?}"),
            Err(e) => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::{err, run};
    use ruleset::{Family, TableKind};

    fn ok(rule: &str) -> (String, String, String) {
        run(Family::Ipv4, TableKind::Filter, "INPUT", rule).unwrap()
    }

    #[test]
    fn forms() {
        // rule, save, -L
        let cases: &[(&str, &str, &str)] = &[
            (
                "-j MARK --set-xmark 0xfeedcafe/0xfeedcafe",
                " --set-xmark 0xfeedcafe/0xfeedcafe",
                " MARK or 0xfeedcafe",
            ),
            (
                "-j MARK --set-xmark 0x0",
                " --set-xmark 0x0/0xffffffff",
                " MARK and 0x0",
            ),
            (
                "-j MARK --set-xmark 5/0xff",
                " --set-xmark 0x5/0xff",
                " MARK xset 0x5/0xff",
            ),
            (
                "-j MARK --set-xmark 5/0",
                " --set-xmark 0x5/0x0",
                " MARK xor 0x5",
            ),
            (
                "-j MARK --set-mark 10",
                " --set-xmark 0xa/0xffffffff",
                " MARK set 0xa",
            ),
            (
                "-j MARK --set-mark 0x10/0x30",
                " --set-xmark 0x10/0x30",
                " MARK xset 0x10/0x30",
            ),
            (
                "-j MARK --set-mark 0x3/0x30",
                " --set-xmark 0x3/0x33",
                " MARK xset 0x3/0x33",
            ),
            (
                "-j MARK --and-mark 0xf0",
                " --set-xmark 0x0/0xffffff0f",
                " MARK and 0xf0",
            ),
            (
                "-j MARK --or-mark 017",
                " --set-xmark 0xf/0xf",
                " MARK or 0xf",
            ),
            (
                "-j MARK --xor-mark 0x100",
                " --set-xmark 0x100/0x0",
                " MARK xor 0x100",
            ),
        ];
        for (rule, save, list) in cases {
            let (s, l, n) = ok(rule);
            assert_eq!(s, *save, "{rule}");
            assert_eq!(l, *list, "{rule}");
            assert_eq!(n, *list, "{rule} -n");
        }
    }

    #[test]
    fn same_rule_different_spelling() {
        let a = run(
            Family::Ipv6,
            TableKind::Mangle,
            "PREROUTING",
            "-j MARK --or-mark 7",
        );
        let b = run(
            Family::Ipv6,
            TableKind::Mangle,
            "PREROUTING",
            "-j MARK --set-xmark 7/7",
        );
        assert_eq!(a, b);
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str)] = &[
            (
                "-j MARK",
                "MARK: One of the --set-xmark, --{and,or,xor,set}-mark options is required",
            ),
            (
                "-j MARK --set-xmark 4294967296",
                "MARK: bad integer value for option \"--set-xmark\", or out of range.\n",
            ),
            (
                "-j MARK --set-xmark -1",
                "MARK: bad integer value for option \"--set-xmark\", or out of range.\n",
            ),
            (
                "-j MARK --set-mark 1/x",
                "MARK: bad integer value for option \"--set-mark\", or out of range.\n",
            ),
            (
                "-j MARK --set-mark 1x",
                "MARK: trailing garbage after value for option \"--set-mark\".\n",
            ),
            (
                "-j MARK --set-mark 1/2/3",
                "MARK: trailing garbage after value for option \"--set-mark\".\n",
            ),
            (
                "-j MARK --and-mark 1/2",
                "MARK: bad value for option \"--and-mark\", or out of range (0-4294967295).\n",
            ),
            (
                "-j MARK --or-mark 1 --xor-mark 2",
                "MARK: option \"--or-mark\" cannot be used together with \"--xor-mark\".\n",
            ),
            (
                "-j MARK --set-mark 1 --set-mark 2",
                "MARK: option \"--set-mark\" can only be used once.\n",
            ),
        ];
        for (rule, want) in cases {
            assert_eq!(
                err(Family::Ipv4, TableKind::Filter, "INPUT", rule),
                *want,
                "{rule}"
            );
        }
    }
}

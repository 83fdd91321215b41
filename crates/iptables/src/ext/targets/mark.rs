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

/// The (mark, mask) of one of the five options MARK and CONNMARK share,
/// as "clear the bits of `mask`, then XOR `mark`": `--set-xmark V[/M]`,
/// `--set-mark V[/M]`, `--and-mark V`, `--or-mark V`, `--xor-mark V`.
/// `None` for any other option.
pub(crate) fn parse_xmark(c: &Call) -> Result<Option<(u32, u32)>> {
    let u32_arg = |c: &Call| c.uint(0, u32::MAX as u64).map(|v| v as u32);
    // xtables' XTTYPE_MARKMASK32: `value[/mask]`, mask 0xffffffff by default.
    let markmask = |c: &Call| opt::parse_val_mask(c.ext, c.opt.name, c.arg);
    Ok(Some(match c.opt.name {
        "set-xmark" => markmask(c)?,
        "set-mark" => {
            let (v, m) = markmask(c)?;
            (v, v | m)
        }
        "and-mark" => (0, !u32_arg(c)?),
        "or-mark" => {
            let v = u32_arg(c)?;
            (v, v)
        }
        "xor-mark" => (u32_arg(c)?, 0),
        _ => return Ok(None),
    }))
}

/// `-L` form of a (mark, mask) pair: ` NAME and|or|xor|set|xset ...`.
pub(crate) fn list_xmark(out: &mut String, name: &str, mark: u32, mask: u32) {
    let _ = if mark == 0 {
        write!(out, " {name} and {:#x}", !mask)
    } else if mark == mask {
        write!(out, " {name} or {mark:#x}")
    } else if mask == 0 {
        write!(out, " {name} xor {mark:#x}")
    } else if mask == u32::MAX {
        write!(out, " {name} set {mark:#x}")
    } else {
        write!(out, " {name} xset {mark:#x}/{mask:#x}")
    };
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
        if let Some((mark, mask)) = parse_xmark(c)? {
            (self.mark, self.mask) = (mark, mask);
        }
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
        list_xmark(out, "MARK", self.mark, self.mask);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok, run, Printed};
    use ruleset::{Family, TableKind};

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
            let Printed {
                save: s,
                list: l,
                list_numeric: n,
            } = ok(rule);
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
                err_in(Family::Ipv4, TableKind::Filter, "INPUT", rule),
                *want,
                "{rule}"
            );
        }
    }
}

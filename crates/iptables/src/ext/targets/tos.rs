//! `-j TOS`: change the IPv4 TOS / IPv6 traffic class byte (iptables'
//! libxt_TOS, revision 1: "clear the bits of the mask, then XOR the value").
//! Mangle table only.

use super::snat::check_table;
use crate::error::{Error, Result};
use crate::ext::matches::tos::{parse_tos_mask, TOS_NAMES};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tos {
    pub value: u8,
    pub mask: u8,
}

const SET_TOS: u8 = 0;
const AND_TOS: u8 = 1;
const OR_TOS: u8 = 2;
const XOR_TOS: u8 = 3;
const ANY: u32 = 1 << SET_TOS | 1 << AND_TOS | 1 << OR_TOS | 1 << XOR_TOS;

/// The mask a symbolic `--set-tos` name implies in revision 1.
const NAME_MASK: u8 = 0x3f;

impl Ext for Tos {
    const NAME: &'static str = "TOS";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("set-tos", SET_TOS, Arg::Required).excl(ANY),
        OptDef::new("and-tos", AND_TOS, Arg::Required).excl(ANY),
        OptDef::new("or-tos", OR_TOS, Arg::Required).excl(ANY),
        OptDef::new("xor-tos", XOR_TOS, Arg::Required).excl(ANY),
    ];

    fn new(_: &ParseCtx) -> Self {
        Tos { value: 0, mask: 0 }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let u8_arg = |c: &Call| c.uint(0, 255).map(|v| v as u8);
        (self.value, self.mask) = match c.opt.id {
            SET_TOS => parse_tos_mask(c.arg, NAME_MASK)?,
            AND_TOS => (0, !u8_arg(c)?),
            OR_TOS => {
                let v = u8_arg(c)?;
                (v, v)
            }
            _ => (u8_arg(c)?, 0),
        };
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        if seen & ANY == 0 {
            return Err(Error::param("TOS: An action is required"));
        }
        crate::ext::postcheck(Self::NAME, Self::OPTS, seen)?;
        check_table("TOS", ctx, TableKind::Mangle)
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(out, " --set-tos 0x{:02x}/0x{:02x}", self.value, self.mask);
    }

    // A symbolic name prints with a leading double space and no space after
    // "set", as iptables does.
    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        let (v, m) = (self.value, self.mask);
        let name = (!ctx.numeric && m == NAME_MASK)
            .then(|| TOS_NAMES.iter().find(|e| e.1 == v))
            .flatten();
        let _ = if ctx.numeric {
            write!(out, " TOS set 0x{v:02x}/0x{m:02x}")
        } else if let Some((n, _)) = name {
            write!(out, "  TOS set{n}")
        } else if v == 0 {
            write!(out, " TOS and 0x{:02x}", !m)
        } else if v == m {
            write!(out, " TOS or 0x{v:02x}")
        } else if m == 0 {
            write!(out, " TOS xor 0x{v:02x}")
        } else {
            write!(out, " TOS set 0x{v:02x}/0x{m:02x}")
        };
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // rule, save, -L, -L -n
        let cases: &[(&str, &str, &str, &str)] = &[
            (
                "-j TOS --set-tos 0x1f",
                " --set-tos 0x1f/0xff",
                " TOS set 0x1f/0xff",
                " TOS set 0x1f/0xff",
            ),
            (
                "-j TOS --set-tos 0x1f/0x1f",
                " --set-tos 0x1f/0x1f",
                " TOS or 0x1f",
                " TOS set 0x1f/0x1f",
            ),
            (
                "-j TOS --set-tos Minimize-Delay",
                " --set-tos 0x10/0x3f",
                "  TOS setMinimize-Delay",
                " TOS set 0x10/0x3f",
            ),
            (
                "-j TOS --set-tos normal-service",
                " --set-tos 0x00/0x3f",
                "  TOS setNormal-Service",
                " TOS set 0x00/0x3f",
            ),
            (
                "-j TOS --set-tos 0x02/0x3f",
                " --set-tos 0x02/0x3f",
                "  TOS setMinimize-Cost",
                " TOS set 0x02/0x3f",
            ),
            (
                "-j TOS --and-tos 0x12",
                " --set-tos 0x00/0xed",
                " TOS and 0x12",
                " TOS set 0x00/0xed",
            ),
            (
                "-j TOS --or-tos 0x12",
                " --set-tos 0x12/0x12",
                " TOS or 0x12",
                " TOS set 0x12/0x12",
            ),
            (
                "-j TOS --xor-tos 0x12",
                " --set-tos 0x12/0x00",
                " TOS xor 0x12",
                " TOS set 0x12/0x00",
            ),
            (
                "-j TOS --set-tos 0x12/0x30",
                " --set-tos 0x12/0x30",
                " TOS set 0x12/0x30",
                " TOS set 0x12/0x30",
            ),
        ];
        for fam in [Family::Ipv4, Family::Ipv6] {
            for (rule, save, list, listn) in cases {
                let got = ok_in(fam, TableKind::Mangle, "PREROUTING", rule);
                assert_eq!(got.save, *save, "{rule}");
                assert_eq!(got.list, *list, "{rule}");
                assert_eq!(got.list_numeric, *listn, "{rule}");
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(TableKind, &str, &str)] = &[
            (TableKind::Mangle, "-j TOS", "TOS: An action is required"),
            (
                TableKind::Mangle,
                "-j TOS --set-tos 0x100",
                "Symbolic name \"0x100\" is unknown",
            ),
            (
                TableKind::Mangle,
                "-j TOS --set-tos 1/x",
                "Illegal value: \"1/x\"",
            ),
            (
                TableKind::Mangle,
                "-j TOS --and-tos 256",
                "TOS: bad value for option \"--and-tos\", or out of range (0-255).\n",
            ),
            (
                TableKind::Mangle,
                "-j TOS --or-tos 1 --xor-tos 2",
                "TOS: option \"--or-tos\" cannot be used together with \"--xor-tos\".\n",
            ),
            (
                TableKind::Nat,
                "-j TOS --or-tos 1",
                "Invalid argument: TOS target: only valid in mangle table, not nat.",
            ),
        ];
        for (table, rule, want) in cases {
            assert_eq!(
                err_in(Family::Ipv4, *table, "OUTPUT", rule),
                *want,
                "{rule}"
            );
        }
    }
}

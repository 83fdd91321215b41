//! `-j DSCP`: set the DSCP field of the IPv4 TOS / IPv6 traffic class byte
//! (iptables' libxt_DSCP). Mangle table only.

use super::snat::check_table;
use crate::error::{Error, Result};
use crate::ext::matches::dscp::class_to_dscp;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dscp {
    /// The 6-bit code point (0..=0x3f).
    pub dscp: u8,
}

const SET_DSCP: u8 = 0;
const SET_DSCP_CLASS: u8 = 1;

impl Ext for Dscp {
    const NAME: &'static str = "DSCP";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("set-dscp", SET_DSCP, Arg::Required).excl(1 << SET_DSCP_CLASS),
        OptDef::new("set-dscp-class", SET_DSCP_CLASS, Arg::Required).excl(1 << SET_DSCP),
    ];

    fn new(_: &ParseCtx) -> Self {
        Dscp { dscp: 0 }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.dscp = match c.opt.id {
            SET_DSCP => c.uint(0, 0x3f)? as u8,
            _ => class_to_dscp(c.arg)?,
        };
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        if seen == 0 {
            return Err(Error::param(
                "DSCP target: Parameter --set-dscp is required",
            ));
        }
        crate::ext::postcheck(Self::NAME, Self::OPTS, seen)?;
        check_table("DSCP", ctx, TableKind::Mangle)
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(out, " --set-dscp 0x{:02x}", self.dscp);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(out, " DSCP set 0x{:02x}", self.dscp);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        let cases: &[(&str, &str, &str)] = &[
            ("-j DSCP --set-dscp 0", " --set-dscp 0x00", " DSCP set 0x00"),
            (
                "-j DSCP --set-dscp 0x3f",
                " --set-dscp 0x3f",
                " DSCP set 0x3f",
            ),
            (
                "-j DSCP --set-dscp 010",
                " --set-dscp 0x08",
                " DSCP set 0x08",
            ),
            (
                "-j DSCP --set-dscp-class EF",
                " --set-dscp 0x2e",
                " DSCP set 0x2e",
            ),
            (
                "-j DSCP --set-dscp-class af41",
                " --set-dscp 0x22",
                " DSCP set 0x22",
            ),
            (
                "-j DSCP --set-dscp-class cs7x",
                " --set-dscp 0x38",
                " DSCP set 0x38",
            ),
        ];
        for fam in [Family::Ipv4, Family::Ipv6] {
            for chain in ["PREROUTING", "POSTROUTING", "mychain"] {
                for (rule, save, list) in cases {
                    let want = Printed {
                        save: save.to_string(),
                        list: list.to_string(),
                        list_numeric: list.to_string(),
                    };
                    assert_eq!(ok_in(fam, TableKind::Mangle, chain, rule), want, "{rule}");
                }
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(TableKind, &str, &str)] = &[
            (
                TableKind::Mangle,
                "-j DSCP",
                "DSCP target: Parameter --set-dscp is required",
            ),
            (
                TableKind::Mangle,
                "-j DSCP --set-dscp 0x40",
                "DSCP: bad value for option \"--set-dscp\", or out of range (0-63).\n",
            ),
            (
                TableKind::Mangle,
                "-j DSCP --set-dscp -1",
                "DSCP: bad value for option \"--set-dscp\", or out of range (0-63).\n",
            ),
            (
                TableKind::Mangle,
                "-j DSCP --set-dscp 0x3f --set-dscp-class CS0",
                "DSCP: option \"--set-dscp\" cannot be used together with \"--set-dscp-class\".\n",
            ),
            (
                TableKind::Mangle,
                "-j DSCP --set-dscp-class XX",
                "Invalid DSCP value `XX'",
            ),
            (
                TableKind::Filter,
                "-j DSCP --set-dscp 1",
                "Invalid argument: DSCP target: only valid in mangle table, not filter.",
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

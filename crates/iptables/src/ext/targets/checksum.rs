//! `-j CHECKSUM`: fill in the checksum of packets that lack one (iptables'
//! libxt_CHECKSUM). Mangle table only.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;

/// `--checksum-fill` is mandatory, so every value is the same operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Checksum {
    pub fill: bool,
}

const CHECKSUM_FILL: u8 = 0;

impl Ext for Checksum {
    const NAME: &'static str = "CHECKSUM";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] =
        &[OptDef::new("checksum-fill", CHECKSUM_FILL, Arg::None).mand()];

    fn new(_: &ParseCtx) -> Self {
        Checksum { fill: false }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        if c.opt.id == CHECKSUM_FILL {
            self.fill = true;
        }
        Ok(())
    }

    fn finish(&mut self, _: u32, ctx: &ParseCtx) -> Result<()> {
        if ctx.table != TableKind::Mangle {
            return Err(Error::op(format!(
                "Invalid argument: CHECKSUM target: only valid in mangle table, not {}.",
                ctx.table.name()
            )));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.fill {
            out.push_str(" --checksum-fill");
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" CHECKSUM");
        if self.fill {
            out.push_str(" fill");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, run, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        for family in [Family::Ipv4, Family::Ipv6] {
            let got = run(
                family,
                TableKind::Mangle,
                "POSTROUTING",
                "-p udp --dport 68 -j CHECKSUM --checksum-fill",
            )
            .unwrap();
            assert_eq!(
                got,
                Printed {
                    save: " --checksum-fill".into(),
                    list: " CHECKSUM fill".into(),
                    list_numeric: " CHECKSUM fill".into(),
                }
            );
        }
    }

    #[test]
    fn errors() {
        let cases: &[(TableKind, &str, &str)] = &[
            (
                TableKind::Mangle,
                "-j CHECKSUM",
                "CHECKSUM: option \"--checksum-fill\" must be specified\n",
            ),
            (
                TableKind::Mangle,
                "-j CHECKSUM --checksum-fill --checksum-fill",
                "CHECKSUM: option \"--checksum-fill\" can only be used once.\n",
            ),
            (
                TableKind::Mangle,
                "-j CHECKSUM ! --checksum-fill",
                "CHECKSUM: option \"--checksum-fill\" cannot be inverted.\n",
            ),
            (
                TableKind::Filter,
                "-j CHECKSUM --checksum-fill",
                "Invalid argument: CHECKSUM target: only valid in mangle table, not filter.",
            ),
            (
                TableKind::Raw,
                "-j CHECKSUM --checksum-fill",
                "Invalid argument: CHECKSUM target: only valid in mangle table, not raw.",
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

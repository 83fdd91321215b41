//! `-j TRACE`: mark packets for tracing (raw table only; no options).

use crate::error::{Error, Result};
use crate::ext::{Call, Ext, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Trace;

impl Ext for Trace {
    const NAME: &'static str = "TRACE";
    const OPTS: &'static [OptDef] = &[];

    fn new(_: &ParseCtx) -> Self {
        Trace
    }

    fn parse(&mut self, _: &mut Call) -> Result<()> {
        Ok(())
    }

    fn finish(&mut self, _: u32, ctx: &ParseCtx) -> Result<()> {
        // The kernel accepts TRACE in the raw table only.
        if ctx.table != TableKind::Raw {
            return Err(Error::op(format!(
                "Invalid argument: TRACE target: only valid in raw table, not {}.",
                ctx.table.name()
            )));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, _: &mut String) {}

    fn list(&self, _: &PrintCtx, _: &mut String) {}
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, run, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        for family in [Family::Ipv4, Family::Ipv6] {
            for chain in ["PREROUTING", "OUTPUT", "mychain"] {
                let got = run(family, TableKind::Raw, chain, "-p tcp -j TRACE").unwrap();
                assert_eq!(
                    got,
                    Printed {
                        save: String::new(),
                        list: String::new(),
                        list_numeric: String::new(),
                    }
                );
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(TableKind, &str, &str)] = &[
            (
                TableKind::Filter,
                "-j TRACE",
                "Invalid argument: TRACE target: only valid in raw table, not filter.",
            ),
            (
                TableKind::Mangle,
                "-j TRACE",
                "Invalid argument: TRACE target: only valid in raw table, not mangle.",
            ),
            (
                TableKind::Security,
                "-j TRACE",
                "Invalid argument: TRACE target: only valid in raw table, not security.",
            ),
            (TableKind::Raw, "-j TRACE --foo", "unknown option \"--foo\""),
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

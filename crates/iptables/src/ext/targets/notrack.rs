//! `-j NOTRACK`: do not track the connection. iptables 1.8 sends it to the
//! kernel as `CT` with the notrack and alias flags and prints it back as
//! `-j NOTRACK` (no options). Raw table only.

use super::ct::check_raw;
use crate::error::Result;
use crate::ext::{Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Notrack;

impl Ext for Notrack {
    const NAME: &'static str = "NOTRACK";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[];

    fn new(_: &ParseCtx) -> Self {
        Notrack
    }

    fn parse(&mut self, _: &mut Call) -> Result<()> {
        Ok(())
    }

    fn finish(&mut self, _: u32, ctx: &ParseCtx) -> Result<()> {
        check_raw(ctx)
    }

    fn save(&self, _: &PrintCtx, _: &mut String) {}

    /// The CT printer's alias branch.
    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" NOTRACK");
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, run, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        for family in [Family::Ipv4, Family::Ipv6] {
            for chain in ["PREROUTING", "OUTPUT", "user"] {
                let got = run(family, TableKind::Raw, chain, "-p udp -j NOTRACK").unwrap();
                assert_eq!(
                    got,
                    Printed {
                        save: String::new(),
                        list: " NOTRACK".into(),
                        list_numeric: " NOTRACK".into(),
                    },
                    "{family:?} {chain}"
                );
            }
        }
    }

    #[test]
    fn errors() {
        assert_eq!(
            err_in(Family::Ipv4, TableKind::Filter, "INPUT", "-j NOTRACK"),
            "Invalid argument: CT target: only valid in raw table, not filter."
        );
        assert_eq!(
            err_in(Family::Ipv4, TableKind::Nat, "OUTPUT", "-j NOTRACK"),
            "Invalid argument: CT target: only valid in raw table, not nat."
        );
        assert_eq!(
            err_in(
                Family::Ipv4,
                TableKind::Raw,
                "OUTPUT",
                "-j NOTRACK --notrack"
            ),
            "unknown option \"--notrack\""
        );
    }
}

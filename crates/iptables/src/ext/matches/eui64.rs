//! `-m eui64`: the IPv6 source address carries the EUI-64 interface id of
//! the source MAC address (ip6tables' libip6t_eui64). No options.

use crate::error::Result;
use crate::ext::{Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Eui64;

impl Ext for Eui64 {
    const NAME: &'static str = "eui64";
    const FAMILY: Fam = Fam::V6;
    const OPTS: &'static [OptDef] = &[];

    fn new(_: &ParseCtx) -> Self {
        Eui64
    }

    fn parse(&mut self, _: &mut Call) -> Result<()> {
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        // The kernel's hook mask: a source MAC exists on input only.
        opt::check_hooks(
            "eui64 match",
            ctx.table,
            ctx.chain,
            &["PREROUTING", "INPUT", "FORWARD"],
        )
    }

    fn save(&self, _: &PrintCtx, _: &mut String) {}

    /// The extension has no print function: iptables-nft prints nothing.
    fn list(&self, _: &PrintCtx, _: &mut String) {}
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms_and_hooks() {
        for (table, chain) in [
            (TableKind::Raw, "PREROUTING"),
            (TableKind::Filter, "INPUT"),
            (TableKind::Filter, "FORWARD"),
            (TableKind::Filter, "user"),
        ] {
            let p = ok_in(Family::Ipv6, table, chain, "-m eui64");
            assert_eq!((p.save.as_str(), p.list.as_str()), ("", ""), "{chain}");
        }
        assert_eq!(
            err_in(Family::Ipv6, TableKind::Filter, "OUTPUT", "-m eui64"),
            "Invalid argument: eui64 match: used from hooks OUTPUT, but only valid from PREROUTING/INPUT/FORWARD."
        );
        assert_eq!(
            err_in(Family::Ipv4, TableKind::Filter, "INPUT", "-m eui64"),
            "Couldn't load match `eui64':No such file or directory\n"
        );
    }
}

//! `-m rpfilter`: reverse path filter by a route lookup (iptables'
//! libxt_rpfilter). The kernel allows it only in PREROUTING of the raw and
//! mangle tables.

use crate::error::Result;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use ruleset::TableKind;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rpfilter {
    pub loose: bool,
    pub validmark: bool,
    pub accept_local: bool,
    pub invert: bool,
}

const LOOSE: u8 = 0;
const VALIDMARK: u8 = 1;
const ACCEPT_LOCAL: u8 = 2;
const INVERT: u8 = 3;

impl Rpfilter {
    fn put(&self, out: &mut String, prefix: &str) {
        for (on, name) in [
            (self.loose, "loose"),
            (self.validmark, "validmark"),
            (self.accept_local, "accept-local"),
            (self.invert, "invert"),
        ] {
            if on {
                out.push(' ');
                out.push_str(prefix);
                out.push_str(name);
            }
        }
    }
}

impl Ext for Rpfilter {
    const NAME: &'static str = "rpfilter";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("loose", LOOSE, Arg::None),
        OptDef::new("validmark", VALIDMARK, Arg::None),
        OptDef::new("accept-local", ACCEPT_LOCAL, Arg::None),
        OptDef::new("invert", INVERT, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Rpfilter {
            loose: false,
            validmark: false,
            accept_local: false,
            invert: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            LOOSE => self.loose = true,
            VALIDMARK => self.validmark = true,
            ACCEPT_LOCAL => self.accept_local = true,
            _ => self.invert = true,
        }
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        // x_tables checks the hook before the match's own table check.
        opt::check_hooks("rpfilter match", ctx.table, ctx.chain, &["PREROUTING"])?;
        if !matches!(ctx.table, TableKind::Raw | TableKind::Mangle) {
            return Err(opt::einval(&format!(
                "rpfilter match: only valid in 'raw' or 'mangle' table, not '{}'",
                ctx.table.name()
            )));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.put(out, "--");
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" rpfilter");
        self.put(out, "");
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, list_in, save_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn list_output() {
        let cases = [
            ("-m rpfilter", " rpfilter"),
            (
                "-m rpfilter --invert --accept-local --validmark --loose",
                " rpfilter loose validmark accept-local invert",
            ),
            ("-m rpfilter --validmark", " rpfilter validmark"),
        ];
        for (args, want) in cases {
            for numeric in [false, true] {
                let got = list_in(Family::Ipv4, TableKind::Raw, "PREROUTING", args, numeric);
                assert_eq!(got, want, "{args}");
            }
        }
    }

    #[test]
    fn save_output() {
        assert_eq!(
            save_in(
                Family::Ipv6,
                TableKind::Mangle,
                "PREROUTING",
                "-m rpfilter --invert --loose"
            ),
            " --loose --invert"
        );
        assert_eq!(
            save_in(Family::Ipv4, TableKind::Raw, "mychain", "-m rpfilter"),
            ""
        );
    }

    #[test]
    fn errors() {
        let cases = [
            (
                TableKind::Mangle,
                "INPUT",
                "-m rpfilter",
                "Invalid argument: rpfilter match: used from hooks INPUT, but only valid from PREROUTING.",
            ),
            (
                TableKind::Nat,
                "PREROUTING",
                "-m rpfilter",
                "Invalid argument: rpfilter match: only valid in 'raw' or 'mangle' table, not 'nat'.",
            ),
            (
                TableKind::Raw,
                "PREROUTING",
                "-m rpfilter --loose --loose",
                "rpfilter: option \"--loose\" can only be used once.\n",
            ),
            (
                TableKind::Raw,
                "PREROUTING",
                "-m rpfilter ! --loose",
                "rpfilter: option \"--loose\" cannot be inverted.\n",
            ),
        ];
        for (table, chain, args, want) in cases {
            assert_eq!(err_in(Family::Ipv4, table, chain, args), want, "{args}");
        }
    }
}

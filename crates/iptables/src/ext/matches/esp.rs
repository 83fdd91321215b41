//! `-m esp`: IPsec ESP SPI (iptables' libxt_esp).

use super::ah::{list_u32_range, parse_u32_range, save_u32_range};
use crate::error::Result;
use crate::ext::{require_proto, Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Esp {
    pub spis: (u32, u32),
    pub inv: bool,
}

const SPI: u8 = 0;

impl Ext for Esp {
    const NAME: &'static str = "esp";
    const OPTS: &'static [OptDef] = &[OptDef::new("espspi", SPI, Arg::Required).inv()];

    fn new(_: &ParseCtx) -> Self {
        Esp {
            spis: (0, u32::MAX),
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.spis = parse_u32_range(c)?;
        self.inv |= c.inv;
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        require_proto("esp match", ctx, &[50])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        save_u32_range(out, "espspi", self.spis, self.inv);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" esp");
        if self.spis != (0, u32::MAX) || self.inv {
            out.push(' ');
            list_u32_range(out, "spi", self.spis, self.inv);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::print_ext;
    use ruleset::Family;

    #[test]
    fn list_and_save_forms() {
        let cases: &[((u32, u32), bool, &str, &str)] = &[
            ((0, u32::MAX), false, " esp", ""),
            (
                (0, u32::MAX),
                true,
                " esp spis:!0:4294967295",
                " ! --espspi 0:4294967295",
            ),
            ((4, 4), false, " esp spi:4", " --espspi 4"),
            ((3, 4), true, " esp spis:!3:4", " ! --espspi 3:4"),
        ];
        for &(spis, inv, list, save) in cases {
            let m = Esp { spis, inv };
            for family in [Family::Ipv4, Family::Ipv6] {
                let p = print_ext(&m, family, 50);
                assert_eq!(p.list_numeric, list);
                assert_eq!(p.save, save);
            }
        }
    }
}

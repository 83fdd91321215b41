//! `-m ipcomp`: IPComp CPI (iptables' libxt_ipcomp). Without `--ipcompspi`
//! the range is 0:0 (the extension has no init), so the rule matches CPI 0
//! only and prints `--ipcompspi 0`.

use super::ah::{list_u32_range, parse_u32_range, save_u32_range};
use crate::error::Result;
use crate::ext::{require_proto, Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ipcomp {
    pub spis: (u32, u32),
    pub inv: bool,
    /// `--compres` (the kernel ignores it).
    pub hdrres: bool,
}

const SPI: u8 = 0;
const RES: u8 = 1;

impl Ext for Ipcomp {
    const NAME: &'static str = "ipcomp";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("ipcompspi", SPI, Arg::Required).inv(),
        OptDef::new("compres", RES, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Ipcomp {
            spis: (0, 0),
            inv: false,
            hdrres: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        if c.opt.id == RES {
            self.hdrres = true;
            return Ok(());
        }
        self.spis = parse_u32_range(c)?;
        self.inv |= c.inv;
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        require_proto("ipcomp match", ctx, &[108])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        save_u32_range(out, "ipcompspi", self.spis, self.inv);
        if self.hdrres {
            out.push_str(" --compres");
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" comp ");
        list_u32_range(out, "spi", self.spis, self.inv);
        if self.hdrres {
            out.push_str(" reserved");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

    #[test]
    fn forms() {
        let cases = [
            ("-p ipcomp -m ipcomp", " --ipcompspi 0", " comp spi:0"),
            ("-p ipcomp -m ipcomp --ipcompspi :", "", " comp "),
            (
                "-p 108 -m ipcomp ! --ipcompspi 3:4 --compres",
                " ! --ipcompspi 3:4 --compres",
                " comp spis:!3:4 reserved",
            ),
            (
                "-p ipcomp -m ipcomp --ipcompspi 4:",
                " --ipcompspi 4:4294967295",
                " comp spis:4:4294967295",
            ),
        ];
        for (args, s, l) in cases {
            assert_eq!(save(args), s, "{args}");
            assert_eq!(list(args, false), l, "{args}");
            assert_eq!(list(args, true), l, "{args} -n");
        }
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m ipcomp --ipcompspi 1",
                "Invalid argument: ipcomp match: only valid for protocol 108.",
            ),
            (
                "-p ipcomp -m ipcomp --ipcompspi 4:3",
                "ipcomp: bad value for option \"--ipcompspi\" near \"3\", or out of range (4-4294967295).\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

//! `-m length`: packet length or range (iptables' libxt_length).

use crate::error::Result;
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Length {
    pub min: u16,
    pub max: u16,
    pub inv: bool,
}

const LENGTH: u8 = 0;

impl Length {
    fn write_range(&self, out: &mut String) {
        if self.min == self.max {
            let _ = write!(out, "{}", self.min);
        } else {
            let _ = write!(out, "{}:{}", self.min, self.max);
        }
    }
}

impl Ext for Length {
    const NAME: &'static str = "length";
    const OPTS: &'static [OptDef] = &[OptDef::new("length", LENGTH, Arg::Required).inv().mand()];

    fn new(_: &ParseCtx) -> Self {
        Length {
            min: 0,
            max: 0,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let (lo, hi) = opt::parse_uint_range(c.ext, c.opt.name, c.arg, u16::MAX as u64)?;
        self.min = lo as u16;
        self.max = hi.unwrap_or(lo) as u16;
        self.inv |= c.inv;
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(if self.inv {
            " ! --length "
        } else {
            " --length "
        });
        self.write_range(out);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(if self.inv { " length !" } else { " length " });
        self.write_range(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::print_ext;
    use ruleset::Family;

    #[test]
    fn list_and_save_forms() {
        let cases: &[(u16, u16, bool, &str, &str)] = &[
            (1, 1, false, " length 1", " --length 1"),
            (0, 65535, true, " length !0:65535", " ! --length 0:65535"),
            (4, 9, false, " length 4:9", " --length 4:9"),
        ];
        for &(min, max, inv, list, save) in cases {
            let p = print_ext(&Length { min, max, inv }, Family::Ipv4, 0);
            assert_eq!(p.list, list);
            assert_eq!(p.save, save);
        }
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str)] = &[
            (
                "0:65536",
                "length: bad value for option \"--length\" near \"65536\", or out of range (0-65535).\n",
            ),
            (
                "-1:65535",
                "length: bad value for option \"--length\" near \"-1:65535\", or out of range (0-65535).\n",
            ),
        ];
        for (arg, want) in cases {
            let e = opt::parse_uint_range("length", "length", arg, 65535).unwrap_err();
            assert_eq!(e.msg, *want, "{arg}");
        }
    }
}

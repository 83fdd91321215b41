//! `-m ttl`: IPv4 time to live (iptables' libipt_ttl).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

/// Comparison modes (kernel values, shared with `hl`).
pub const EQ: u8 = 0;
pub const NE: u8 = 1;
pub const LT: u8 = 2;
pub const GT: u8 = 3;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ttl {
    pub mode: u8,
    pub ttl: u8,
}

const O_EQ: u8 = 0;
const O_LT: u8 = 1;
const O_GT: u8 = 2;
const ANY: u32 = 0b111;

/// Mode from the option given (`--x-eq` inverted is "not equal").
pub(crate) fn mode_of(id: u8, inv: bool) -> u8 {
    match id {
        O_LT => LT,
        O_GT => GT,
        _ if inv => NE,
        _ => EQ,
    }
}

impl Ext for Ttl {
    const NAME: &'static str = "ttl";
    const FAMILY: Fam = Fam::V4;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("ttl-lt", O_LT, Arg::Required).excl(ANY),
        OptDef::new("ttl-gt", O_GT, Arg::Required).excl(ANY),
        OptDef::new("ttl-eq", O_EQ, Arg::Required).inv().excl(ANY),
        OptDef::new("ttl", O_EQ, Arg::Required).excl(ANY),
    ];

    fn new(_: &ParseCtx) -> Self {
        Ttl { mode: EQ, ttl: 0 }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.ttl = c.uint(0, 255)? as u8;
        self.mode = mode_of(c.opt.id, c.inv);
        Ok(())
    }

    fn finish(&mut self, seen: u32, _ctx: &ParseCtx) -> Result<()> {
        if seen & ANY == 0 {
            return Err(Error::param(
                "TTL match: You must specify one of `--ttl-eq', `--ttl-lt', `--ttl-gt",
            ));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(match self.mode {
            EQ => " --ttl-eq",
            NE => " ! --ttl-eq",
            LT => " --ttl-lt",
            _ => " --ttl-gt",
        });
        let _ = write!(out, " {}", self.ttl);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" TTL match ");
        out.push_str(match self.mode {
            EQ => "TTL ==",
            NE => "TTL !=",
            LT => "TTL <",
            _ => "TTL >",
        });
        let _ = write!(out, " {}", self.ttl);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::print_ext;
    use ruleset::Family;

    #[test]
    fn list_and_save_forms() {
        let cases: &[(u8, u8, &str, &str)] = &[
            (EQ, 0, " TTL match TTL == 0", " --ttl-eq 0"),
            (NE, 255, " TTL match TTL != 255", " ! --ttl-eq 255"),
            (LT, 5, " TTL match TTL < 5", " --ttl-lt 5"),
            (GT, 64, " TTL match TTL > 64", " --ttl-gt 64"),
        ];
        for &(mode, ttl, list, save) in cases {
            let p = print_ext(&Ttl { mode, ttl }, Family::Ipv4, 0);
            assert_eq!(p.list_numeric, list);
            assert_eq!(p.save, save);
        }
        assert_eq!(mode_of(O_EQ, true), NE);
        assert_eq!(mode_of(O_GT, false), GT);
    }
}

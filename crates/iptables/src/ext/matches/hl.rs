//! `-m hl`: IPv6 hop limit (ip6tables' libip6t_hl).

use super::ttl::{mode_of, EQ, GT, LT, NE};
use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Hl {
    pub mode: u8,
    pub hop_limit: u8,
}

const O_EQ: u8 = 0;
const O_LT: u8 = 1;
const O_GT: u8 = 2;
const ANY: u32 = 0b111;

impl Ext for Hl {
    const NAME: &'static str = "hl";
    const FAMILY: Fam = Fam::V6;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("hl-lt", O_LT, Arg::Required).excl(ANY),
        OptDef::new("hl-gt", O_GT, Arg::Required).excl(ANY),
        OptDef::new("hl-eq", O_EQ, Arg::Required).inv().excl(ANY),
        OptDef::new("hl", O_EQ, Arg::Required).excl(ANY),
    ];

    fn new(_: &ParseCtx) -> Self {
        Hl {
            mode: EQ,
            hop_limit: 0,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.hop_limit = c.uint(0, 255)? as u8;
        self.mode = mode_of(c.opt.id, c.inv);
        Ok(())
    }

    fn finish(&mut self, seen: u32, _ctx: &ParseCtx) -> Result<()> {
        if seen & ANY == 0 {
            return Err(Error::param(
                "HL match: You must specify one of `--hl-eq', `--hl-lt', `--hl-gt'",
            ));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        let op = match self.mode {
            EQ => "--hl-eq",
            NE => "! --hl-eq",
            LT => "--hl-lt",
            _ => "--hl-gt",
        };
        let _ = write!(out, " {op} {}", self.hop_limit);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        let op = match self.mode {
            EQ => "==",
            NE => "!=",
            LT => "<",
            GT => ">",
            _ => "",
        };
        let _ = write!(out, " HL match HL {op} {}", self.hop_limit);
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
            (EQ, 42, " HL match HL == 42", " --hl-eq 42"),
            (NE, 42, " HL match HL != 42", " ! --hl-eq 42"),
            (LT, 1, " HL match HL < 1", " --hl-lt 1"),
            (GT, 255, " HL match HL > 255", " --hl-gt 255"),
        ];
        for &(mode, hop_limit, list, save) in cases {
            let p = print_ext(&Hl { mode, hop_limit }, Family::Ipv6, 0);
            assert_eq!(p.list, list);
            assert_eq!(p.save, save);
        }
    }
}

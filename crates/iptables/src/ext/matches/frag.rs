//! `-m frag`: IPv6 fragment header (ip6tables' libip6t_frag).

use super::ah::{list_u32_range, parse_u32_range, save_u32_range};
use crate::error::Result;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Frag {
    pub ids: (u32, u32),
    pub inv_ids: bool,
    /// `--fraglen` given (the kernel does not check it).
    pub len: Option<u32>,
    pub inv_len: bool,
    pub res: bool,
    pub first: bool,
    pub more: bool,
    pub last: bool,
}

const ID: u8 = 0;
const LEN: u8 = 1;
const RES: u8 = 2;
const FIRST: u8 = 3;
const MORE: u8 = 4;
const LAST: u8 = 5;

impl Ext for Frag {
    const NAME: &'static str = "frag";
    const FAMILY: Fam = Fam::V6;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("fragid", ID, Arg::Required).inv(),
        OptDef::new("fraglen", LEN, Arg::Required).inv(),
        OptDef::new("fragres", RES, Arg::None),
        OptDef::new("fragfirst", FIRST, Arg::None),
        OptDef::new("fragmore", MORE, Arg::None).excl(1 << LAST),
        OptDef::new("fraglast", LAST, Arg::None).excl(1 << MORE),
    ];

    fn new(_: &ParseCtx) -> Self {
        Frag {
            ids: (0, u32::MAX),
            inv_ids: false,
            len: None,
            inv_len: false,
            res: false,
            first: false,
            more: false,
            last: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            ID => {
                self.ids = parse_u32_range(c)?;
                self.inv_ids |= c.inv;
            }
            LEN => {
                self.len = Some(c.uint(0, u32::MAX as u64)? as u32);
                self.inv_len |= c.inv;
            }
            RES => self.res = true,
            FIRST => self.first = true,
            MORE => self.more = true,
            _ => self.last = true,
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        save_u32_range(out, "fragid", self.ids, self.inv_ids);
        if let Some(len) = self.len {
            let _ = write!(
                out,
                "{} --fraglen {len}",
                if self.inv_len { " !" } else { "" }
            );
        }
        for (on, word) in [
            (self.res, " --fragres"),
            (self.first, " --fragfirst"),
            (self.more, " --fragmore"),
            (self.last, " --fraglast"),
        ] {
            if on {
                out.push_str(word);
            }
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" frag ");
        list_u32_range(out, "id", self.ids, self.inv_ids);
        if let Some(len) = self.len {
            let _ = write!(out, " length:{}{len}", if self.inv_len { "!" } else { "" });
        }
        for (on, word) in [
            (self.res, " reserved"),
            (self.first, " first"),
            (self.more, " more"),
            (self.last, " last"),
        ] {
            if on {
                out.push_str(word);
            }
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
        let base = Frag::new(&ParseCtx {
            family: Family::Ipv6,
            table: ruleset::TableKind::Filter,
            chain: "INPUT",
            proto: 0,
            inv_proto: false,
        });
        let cases: Vec<(Frag, &str, &str)> = vec![
            (base.clone(), " frag ", ""),
            (
                Frag {
                    ids: (1, 1),
                    inv_ids: true,
                    len: Some(42),
                    inv_len: true,
                    res: true,
                    first: true,
                    ..base.clone()
                },
                " frag id:!1 length:!42 reserved first",
                " ! --fragid 1 ! --fraglen 42 --fragres --fragfirst",
            ),
            (
                Frag {
                    ids: (0, 42),
                    more: true,
                    ..base.clone()
                },
                " frag ids:0:42 more",
                " --fragid 0:42 --fragmore",
            ),
            (
                Frag {
                    last: true,
                    ..base.clone()
                },
                " frag  last",
                " --fraglast",
            ),
            (
                Frag {
                    inv_ids: true,
                    ..base.clone()
                },
                " frag ids:!0:4294967295",
                " ! --fragid 0:4294967295",
            ),
        ];
        for (m, list, save) in cases {
            let p = print_ext(&m, Family::Ipv6, 0);
            assert_eq!(p.list, list);
            assert_eq!(p.save, save);
        }
    }
}

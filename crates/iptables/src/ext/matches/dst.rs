//! `-m dst`: IPv6 destination options header (ip6tables' libip6t_dst);
//! the same test as `-m hbh` on the other header.

use super::hbh::{OptsHeader, Words, LEN, OPTS};
use crate::error::Result;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dst(pub OptsHeader);

const WORDS: Words = Words {
    name: "dst",
    pad0: "PAD0 hasn't got length",
};

impl Ext for Dst {
    const NAME: &'static str = "dst";
    const FAMILY: Fam = Fam::V6;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("dst-len", LEN, Arg::Required).inv(),
        OptDef::new("dst-opts", OPTS, Arg::Required),
    ];

    fn new(_: &ParseCtx) -> Self {
        Dst(OptsHeader::default())
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.0.parse(&WORDS, c)
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.0.save("dst", out);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        self.0.list("dst", out);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, list_in, save_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms_and_errors() {
        let cases = [
            ("-m dst --dst-len 0", " --dst-len 0", " dst length:0"),
            (
                "-m dst ! --dst-len 42 --dst-opts 149:92,12:12,123:12",
                " ! --dst-len 42 --dst-opts 149:92,12:12,123:12",
                " dst length:!42 opts 149:92,12:12,123:12",
            ),
        ];
        for (args, s, l) in cases {
            assert_eq!(save_in(Family::Ipv6, TableKind::Filter, "INPUT", args), s);
            for numeric in [false, true] {
                let got = list_in(Family::Ipv6, TableKind::Filter, "INPUT", args, numeric);
                assert_eq!(got, l, "{args}");
            }
        }
        let cases = [
            ("-m dst --dst-opts 256:3", "PAD0 hasn't got length"),
            ("-m dst --dst-opts 1:", "dst: no valid digits in length `'"),
        ];
        for (args, want) in cases {
            assert_eq!(err_in(Family::Ipv6, TableKind::Filter, "INPUT", args), want);
        }
    }
}

//! `-m state`: the connection state (iptables' libxt_state, which today is
//! an alias of conntrack revision 3 with the "state alias" flag; it keeps
//! printing as `-m state --state ...`).

use super::conntrack::{fmt_states, parse_states};
use crate::error::Result;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// XT_CONNTRACK_STATE_* bits.
    pub mask: u32,
    pub inv: bool,
}

const O_STATE: u8 = 0;

impl Ext for State {
    const NAME: &'static str = "state";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[OptDef::new("state", O_STATE, Arg::Required).inv().mand()];

    fn new(_: &ParseCtx) -> Self {
        State {
            mask: 0,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.mask = parse_states(c.arg)?;
        self.inv = c.inv;
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        out.push_str(" --state");
        fmt_states(out, self.mask);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        out.push_str(" state");
        fmt_states(out, self.mask);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::{match_words, run_words, Opt, Printed};
    use ruleset::{Family, TableKind};

    fn build(args: &[(bool, &str)]) -> Result<Printed> {
        let opts: Vec<Opt> = args.iter().map(|&(inv, a)| ("state", inv, a)).collect();
        let words = match_words::<State>(&opts);
        run_words(Family::Ipv4, TableKind::Filter, "INPUT", &words)
    }

    #[test]
    fn list_and_save() {
        let cases: &[(bool, &str, &str, &str)] = &[
            (false, "NEW", " state NEW", " --state NEW"),
            (
                false,
                "established,related,new,invalid,untracked",
                " state INVALID,NEW,RELATED,ESTABLISHED,UNTRACKED",
                " --state INVALID,NEW,RELATED,ESTABLISHED,UNTRACKED",
            ),
            (
                true,
                "E,R",
                " ! state RELATED,ESTABLISHED",
                " ! --state RELATED,ESTABLISHED",
            ),
        ];
        for (inv, arg, list, save) in cases {
            let p = build(&[(*inv, arg)]).unwrap();
            for numeric in [false, true] {
                assert_eq!(p.listed(numeric), *list);
                assert_eq!(p.save, *save);
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(&[(bool, &str)], &str)] = &[
            (&[], "state: option \"--state\" must be specified\n"),
            (&[(false, "NEW,SNAT")], "Bad state \"SNAT\""),
            (&[(false, "foo,NEW")], "Bad state \"foo,NEW\""),
            (
                &[(false, "NEW,")],
                "\"--state\" requires a list of states with no spaces, e.g. ESTABLISHED,RELATED",
            ),
            (
                &[(false, "NEW"), (false, "NEW")],
                "state: option \"--state\" can only be used once.\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(build(args).unwrap_err().msg, *want, "{args:?}");
        }
    }
}

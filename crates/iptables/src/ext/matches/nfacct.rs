//! `-m nfacct`: count in an extended accounting object (iptables'
//! libxt_nfacct).
//!
//! The kernel refuses a rule naming an accounting object that does not
//! exist; nfkeeper accepts any name here and leaves that check to the later
//! layers that apply the ruleset.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Nfacct {
    pub name: String,
}

const NAME: u8 = 0;

/// NFACCT_NAME_MAX - 1: longer names are cut, as iptables copies them.
const MAX_NAME: usize = 31;

impl Ext for Nfacct {
    const NAME: &'static str = "nfacct";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[OptDef::new("nfacct-name", NAME, Arg::Required).mand()];

    fn new(_: &ParseCtx) -> Self {
        Nfacct {
            name: String::new(),
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        if c.arg.is_empty() {
            return Err(Error::param(
                "Argument must have a minimum length of 1 characters\n",
            ));
        }
        let mut end = c.arg.len().min(MAX_NAME);
        while !c.arg.is_char_boundary(end) {
            end -= 1;
        }
        self.name = c.arg[..end].to_string();
        if c.arg.contains('\n') {
            return Err(Error::param("Newlines not allowed in --nfacct-name"));
        }
        Ok(())
    }

    // iptables prints "nfacct-name " and then the quoted name with its own
    // leading space: two spaces.
    fn save(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" --nfacct-name ");
        opt::save_string(out, &self.name);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" nfacct-name ");
        opt::save_string(out, &self.name);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, rule, rule_words, save};
    use crate::ext::Match;
    use ruleset::{Family, TableKind};

    #[test]
    fn list_output() {
        let cases = [
            ("-m nfacct --nfacct-name test", " nfacct-name  test"),
            ("-m nfacct --nfacct-name a.b", " nfacct-name  \"a.b\""),
        ];
        for (args, want) in cases {
            assert_eq!(list(args, false), want, "{args}");
            assert_eq!(list(args, true), want, "{args} -n");
        }
    }

    #[test]
    fn save_output() {
        assert_eq!(
            save("-m nfacct --nfacct-name x_1-y"),
            " --nfacct-name  x_1-y"
        );
        assert_eq!(
            save("-m nfacct --nfacct-name abcdefghijklmnopqrstuvwxyz0123456789"),
            " --nfacct-name  abcdefghijklmnopqrstuvwxyz01234"
        );
    }

    #[test]
    fn errors() {
        assert_eq!(
            err("-m nfacct"),
            "nfacct: option \"--nfacct-name\" must be specified\n"
        );
        let cases = [
            ("", "Argument must have a minimum length of 1 characters\n"),
            ("a\nb", "Newlines not allowed in --nfacct-name"),
        ];
        for (name, want) in cases {
            let e = rule_words(
                Family::Ipv4,
                TableKind::Filter,
                "INPUT",
                &["-m", "nfacct", "--nfacct-name", name],
            );
            assert_eq!(e.map_err(|e| e.msg), Err(want.to_string()), "{name:?}");
        }
        // Any name is accepted: existence is checked when the ruleset is applied.
        let ok = rule(
            Family::Ipv4,
            TableKind::Filter,
            "INPUT",
            "-m nfacct --nfacct-name wrong",
        )
        .map(|r| matches!(r.matches[0], Match::Nfacct(_)));
        assert_eq!(ok, Ok(true));
    }
}

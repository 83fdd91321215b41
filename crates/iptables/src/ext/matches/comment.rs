//! `-m comment --comment TEXT` (iptables' libxt_comment): up to 255 bytes,
//! longer text is cut as iptables cuts it.

use crate::error::Result;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;

/// Room in the kernel structure, including the terminating NUL.
const MAX_COMMENT_LEN: usize = 256;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Comment {
    pub text: String,
}

const O_COMMENT: u8 = 0;

impl Ext for Comment {
    const NAME: &'static str = "comment";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[OptDef::new("comment", O_COMMENT, Arg::Required).mand()];

    fn new(_: &ParseCtx) -> Self {
        Comment {
            text: String::new(),
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        // iptables copies at most 255 bytes; we cut at a character boundary
        // at or below that so the text stays valid UTF-8.
        let mut end = c.arg.len().min(MAX_COMMENT_LEN - 1);
        while !c.arg.is_char_boundary(end) {
            end -= 1;
        }
        self.text = c.arg[..end].to_string();
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" --comment");
        opt::save_string(out, &self.text);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" /* ");
        out.push_str(&self.text);
        out.push_str(" */");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::{match_words, print, rule_words, Opt};
    use crate::ext::Match;
    use crate::rule::Rule;
    use ruleset::{Family, TableKind};

    fn build(args: &[&str]) -> Result<Rule> {
        let opts: Vec<Opt> = args.iter().map(|a| ("comment", false, *a)).collect();
        let words = match_words::<Comment>(&opts);
        rule_words(Family::Ipv6, TableKind::Filter, "INPUT", &words)
    }

    fn text(r: Rule) -> String {
        match &r.matches[0] {
            Match::Comment(c) => c.text.clone(),
            m => panic!("not a comment: {m:?}"),
        }
    }

    #[test]
    fn list_and_save() {
        let cases: &[(&str, &str, &str)] = &[
            ("foo", " /* foo */", " --comment foo"),
            ("a b", " /* a b */", " --comment \"a b\""),
            (
                "say \"hi\"",
                " /* say \"hi\" */",
                " --comment \"say \\\"hi\\\"\"",
            ),
            ("", " /*  */", " --comment \"\""),
        ];
        for (arg, list, save) in cases {
            let p = print(Family::Ipv6, &build(&[arg]).unwrap());
            assert_eq!(p.list_numeric, *list);
            assert_eq!(p.save, *save);
        }
    }

    #[test]
    fn length_limit() {
        let long = "x".repeat(300);
        assert_eq!(text(build(&[&long]).unwrap()).len(), 255);
        let exact = "y".repeat(255);
        assert_eq!(text(build(&[&exact]).unwrap()), exact);
        // A multi-byte character straddling the limit is dropped whole.
        let mb = format!("{}é", "z".repeat(254));
        assert_eq!(text(build(&[&mb]).unwrap()), "z".repeat(254));
    }

    #[test]
    fn errors() {
        assert_eq!(
            build(&[]).unwrap_err().msg,
            "comment: option \"--comment\" must be specified\n"
        );
        assert_eq!(
            build(&["a", "b"]).unwrap_err().msg,
            "comment: option \"--comment\" can only be used once.\n"
        );
    }
}

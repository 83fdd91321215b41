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
    use crate::ext::Cursor;
    use ruleset::{Family, TableKind};

    fn build(args: &[&str]) -> Result<Comment> {
        let ctx = ParseCtx {
            family: Family::Ipv6,
            table: TableKind::Filter,
            chain: "INPUT",
            proto: 0,
            inv_proto: false,
        };
        let mut m = Comment::new(&ctx);
        let mut seen = 0u32;
        let o = &Comment::OPTS[0];
        for arg in args {
            crate::ext::precheck("comment", o, false, seen)?;
            let words: [&str; 0] = [];
            let mut cur = Cursor::new(&words);
            let mut c = Call {
                ext: "comment",
                opt: o,
                inv: false,
                arg,
                rest: &mut cur,
                ctx: &ctx,
            };
            m.parse(&mut c)?;
            seen |= 1 << o.id;
        }
        crate::ext::postcheck("comment", Comment::OPTS, seen)?;
        Ok(m)
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
        let p = PrintCtx {
            family: Family::Ipv6,
            proto: 0,
            numeric: true,
        };
        for (arg, list, save) in cases {
            let m = build(&[arg]).unwrap();
            let mut s = String::new();
            m.list(&p, &mut s);
            assert_eq!(s, *list);
            let mut s = String::new();
            m.save(&p, &mut s);
            assert_eq!(s, *save);
        }
    }

    #[test]
    fn length_limit() {
        let long = "x".repeat(300);
        assert_eq!(build(&[&long]).unwrap().text.len(), 255);
        let exact = "y".repeat(255);
        assert_eq!(build(&[&exact]).unwrap().text, exact);
        // A multi-byte character straddling the limit is dropped whole.
        let mb = format!("{}é", "z".repeat(254));
        assert_eq!(build(&[&mb]).unwrap().text, "z".repeat(254));
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

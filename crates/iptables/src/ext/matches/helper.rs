//! `-m helper`: the conntrack helper of the connection (iptables'
//! libxt_helper).

use crate::error::Result;
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Helper {
    /// At most `NAME_MAX` bytes: longer arguments are cut, as xtables cuts
    /// a string option to its field (`char name[30]`).
    pub name: String,
    pub inv: bool,
}

const HELPER: u8 = 0;
/// `struct xt_helper_info.name` holds 29 bytes and the terminating NUL.
pub const NAME_MAX: usize = 29;

/// Cut `s` to at most `max` bytes of input, as xtables cuts a string
/// option to its field (C bytes: a multi-byte character cut in two leaves
/// its first bytes, carried as `crate::bytes` stand-ins).
pub(crate) fn cut(s: &str, max: usize) -> String {
    let raw = crate::bytes::encode(s);
    if raw.len() <= max {
        return s.to_string();
    }
    crate::bytes::decode(&raw[..max]).into_owned()
}

impl Ext for Helper {
    const NAME: &'static str = "helper";
    const OPTS: &'static [OptDef] = &[OptDef::new("helper", HELPER, Arg::Required).inv().mand()];

    fn new(_: &ParseCtx) -> Self {
        Helper {
            name: String::new(),
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.name = cut(c.arg, NAME_MAX);
        self.inv = c.inv;
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        out.push_str(" --helper");
        opt::save_string(out, &self.name);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(
            out,
            " helper match {}\"{}\"",
            if self.inv { "! " } else { "" },
            self.name
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

    #[test]
    fn forms() {
        let cases = [
            (
                "-m helper --helper ftp",
                " --helper ftp",
                " helper match \"ftp\"",
            ),
            (
                "-m helper ! --helper ftp-2121",
                " ! --helper ftp-2121",
                " helper match ! \"ftp-2121\"",
            ),
            (
                "-m helper --helper \"a b\"",
                " --helper \"a b\"",
                " helper match \"a b\"",
            ),
            (
                "-m helper --helper 0123456789012345678901234567890123",
                " --helper 01234567890123456789012345678",
                " helper match \"01234567890123456789012345678\"",
            ),
            (
                // 28 bytes, then a 2-byte character cut after its first.
                "-m helper --helper 0123456789012345678901234567é",
                " --helper \"0123456789012345678901234567\u{10fec3}\"",
                " helper match \"0123456789012345678901234567\u{10fec3}\"",
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
        assert_eq!(
            err("-m helper"),
            "helper: option \"--helper\" must be specified\n"
        );
    }
}

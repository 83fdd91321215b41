//! `-m quota`: a byte budget shared by the rule's packets (iptables'
//! libxt_quota).

use crate::error::Result;
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Quota {
    /// Bytes.
    pub quota: u64,
    pub inv: bool,
}

const QUOTA: u8 = 0;

impl Ext for Quota {
    const NAME: &'static str = "quota";
    const OPTS: &'static [OptDef] = &[OptDef::new("quota", QUOTA, Arg::Required).inv().mand()];

    fn new(_: &ParseCtx) -> Self {
        Quota {
            quota: 0,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.quota = c.uint(0, u64::MAX)?;
        self.inv = c.inv;
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(
            out,
            "{} --quota {}",
            if self.inv { " !" } else { "" },
            self.quota
        );
    }

    /// iptables does not show the inversion in `-L`.
    fn list(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(out, " quota: {} bytes", self.quota);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

    #[test]
    fn forms() {
        let cases = [
            ("-m quota --quota 0", " --quota 0", " quota: 0 bytes"),
            ("-m quota ! --quota 010", " ! --quota 8", " quota: 8 bytes"),
            (
                "-m quota --quota 18446744073709551615",
                " --quota 18446744073709551615",
                " quota: 18446744073709551615 bytes",
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
        let cases = [
            ("-m quota", "quota: option \"--quota\" must be specified\n"),
            (
                "-m quota --quota 18446744073709551616",
                "quota: bad value for option \"--quota\", or out of range (0-18446744073709551615).\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

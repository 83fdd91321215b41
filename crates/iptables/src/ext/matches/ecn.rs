//! `-m ecn`: ECN bits of the TCP header and the IP header's ECN codepoint
//! (iptables' libxt_ecn).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

/// One test of the match: given, and inverted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Test {
    pub on: bool,
    pub inv: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ecn {
    /// TCP ECE flag set.
    pub ece: Test,
    /// TCP CWR flag set.
    pub cwr: Test,
    /// IP ECN codepoint equals `ect` (0..=3).
    pub ip: Test,
    pub ect: u8,
}

const CWR: u8 = 0;
const ECE: u8 = 1;
const ECT: u8 = 2;

impl Ext for Ecn {
    const NAME: &'static str = "ecn";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("ecn-tcp-cwr", CWR, Arg::None).inv(),
        OptDef::new("ecn-tcp-ece", ECE, Arg::None).inv(),
        OptDef::new("ecn-ip-ect", ECT, Arg::Required).inv(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Ecn {
            ece: Test::default(),
            cwr: Test::default(),
            ip: Test::default(),
            ect: 0,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let t = Test {
            on: true,
            inv: c.inv,
        };
        match c.opt.id {
            CWR => self.cwr = t,
            ECE => self.ece = t,
            _ => {
                self.ect = c.uint(0, 3)? as u8;
                self.ip = t;
            }
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        if seen == 0 {
            return Err(Error::param("ECN match: some option required"));
        }
        if (self.ece.on || self.cwr.on) && (ctx.proto != 6 || ctx.inv_proto) {
            return Err(opt::einval(
                "ecn match: cannot match TCP bits for non-tcp packets",
            ));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        for (t, word) in [(self.ece, " --ecn-tcp-ece"), (self.cwr, " --ecn-tcp-cwr")] {
            if t.on {
                if t.inv {
                    out.push_str(" !");
                }
                out.push_str(word);
            }
        }
        if self.ip.on {
            if self.ip.inv {
                out.push_str(" !");
            }
            let _ = write!(out, " --ecn-ip-ect {}", self.ect);
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" ECN match");
        let bang = |t: Test| if t.inv { "!" } else { "" };
        if self.ece.on {
            let _ = write!(out, " {}ECE", bang(self.ece));
        }
        if self.cwr.on {
            let _ = write!(out, " {}CWR", bang(self.cwr));
        }
        if self.ip.on {
            let _ = write!(out, " {}ECT={}", bang(self.ip), self.ect);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

    #[test]
    fn forms() {
        let cases = [
            (
                "-p tcp -m ecn --ecn-tcp-cwr",
                " --ecn-tcp-cwr",
                " ECN match CWR",
            ),
            (
                "-p tcp -m ecn --ecn-tcp-cwr ! --ecn-ip-ect 2 ! --ecn-tcp-ece",
                " ! --ecn-tcp-ece --ecn-tcp-cwr ! --ecn-ip-ect 2",
                " ECN match !ECE CWR !ECT=2",
            ),
            (
                "-m ecn --ecn-ip-ect 3",
                " --ecn-ip-ect 3",
                " ECN match ECT=3",
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
            ("-m ecn", "ECN match: some option required"),
            (
                "-m ecn --ecn-tcp-cwr",
                "Invalid argument: ecn match: cannot match TCP bits for non-tcp packets.",
            ),
            (
                "! -p tcp -m ecn --ecn-tcp-ece",
                "Invalid argument: ecn match: cannot match TCP bits for non-tcp packets.",
            ),
            (
                "-m ecn --ecn-ip-ect 4",
                "ecn: bad value for option \"--ecn-ip-ect\", or out of range (0-3).\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

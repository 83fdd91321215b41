//! `-m tcpmss`: the MSS option of TCP SYN packets (iptables' libxt_tcpmss).

use crate::error::Result;
use crate::ext::{require_proto, Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tcpmss {
    pub min: u16,
    pub max: u16,
    pub inv: bool,
}

const MSS: u8 = 0;

impl Tcpmss {
    fn put(&self, out: &mut String) {
        if self.min == self.max {
            let _ = write!(out, "{}", self.min);
        } else {
            let _ = write!(out, "{}:{}", self.min, self.max);
        }
    }
}

impl Ext for Tcpmss {
    const NAME: &'static str = "tcpmss";
    const OPTS: &'static [OptDef] = &[OptDef::new("mss", MSS, Arg::Required).inv().mand()];

    fn new(_: &ParseCtx) -> Self {
        Tcpmss {
            min: 0,
            max: 0,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let (lo, hi) = opt::parse_uint_range(c.ext, c.opt.name, c.arg, u16::MAX as u64)?;
        self.min = lo as u16;
        self.max = hi.unwrap_or(lo) as u16;
        self.inv = c.inv;
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        require_proto("tcpmss match", ctx, &[6])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(if self.inv { " ! --mss " } else { " --mss " });
        self.put(out);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(if self.inv {
            " tcpmss match !"
        } else {
            " tcpmss match "
        });
        self.put(out);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

    #[test]
    fn forms() {
        let cases = [
            ("-p tcp -m tcpmss --mss 42", " --mss 42", " tcpmss match 42"),
            (
                "-p tcp -m tcpmss --mss :",
                " --mss 0:65535",
                " tcpmss match 0:65535",
            ),
            (
                "-p tcp -m tcpmss ! --mss 42:42",
                " ! --mss 42",
                " tcpmss match !42",
            ),
            (
                "-p 6 -m tcpmss --mss 42:",
                " --mss 42:65535",
                " tcpmss match 42:65535",
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
            (
                "-m tcpmss --mss 42",
                "Invalid argument: tcpmss match: only valid for protocol 6.",
            ),
            ("-p tcp -m tcpmss", "tcpmss: option \"--mss\" must be specified\n"),
            (
                "-p tcp -m tcpmss --mss 42:65536",
                "tcpmss: bad value for option \"--mss\" near \"65536\", or out of range (42-65535).\n",
            ),
            (
                "-p tcp -m tcpmss --mss 65535:1000",
                "tcpmss: bad value for option \"--mss\" near \"1000\", or out of range (65535-65535).\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

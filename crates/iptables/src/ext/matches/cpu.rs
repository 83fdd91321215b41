//! `-m cpu`: the CPU handling the packet (iptables' libxt_cpu).

use crate::error::Result;
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cpu {
    pub cpu: u32,
    pub inv: bool,
}

const CPU: u8 = 0;

impl Ext for Cpu {
    const NAME: &'static str = "cpu";
    const OPTS: &'static [OptDef] = &[OptDef::new("cpu", CPU, Arg::Required).inv().mand()];

    fn new(_: &ParseCtx) -> Self {
        Cpu { cpu: 0, inv: false }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.cpu = c.uint(0, u32::MAX as u64)? as u32;
        self.inv = c.inv;
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(
            out,
            "{} --cpu {}",
            if self.inv { " !" } else { "" },
            self.cpu
        );
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(out, " cpu {}{}", if self.inv { "! " } else { "" }, self.cpu);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

    #[test]
    fn forms() {
        let cases = [
            ("-m cpu --cpu 0", " --cpu 0", " cpu 0"),
            ("-m cpu ! --cpu 3", " ! --cpu 3", " cpu ! 3"),
            ("-m cpu --cpu 0x10", " --cpu 16", " cpu 16"),
            (
                "-m cpu --cpu 4294967295",
                " --cpu 4294967295",
                " cpu 4294967295",
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
            ("-m cpu", "cpu: option \"--cpu\" must be specified\n"),
            (
                "-m cpu --cpu 4294967296",
                "cpu: bad value for option \"--cpu\", or out of range (0-4294967295).\n",
            ),
            (
                "-m cpu --cpu 1 --cpu 2",
                "cpu: option \"--cpu\" can only be used once.\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

//! `-m dscp`: the DSCP field, by value or DiffServ class (iptables'
//! libxt_dscp).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dscp {
    pub dscp: u8,
    pub inv: bool,
}

const DSCP: u8 = 0;
const CLASS: u8 = 1;

/// XT_DSCP_MAX
const DSCP_MAX: u64 = 0x3f;

/// DiffServ class names and their code points, in lookup order.
pub const DS_CLASSES: &[(&str, u8)] = &[
    ("CS0", 0x00),
    ("CS1", 0x08),
    ("CS2", 0x10),
    ("CS3", 0x18),
    ("CS4", 0x20),
    ("CS5", 0x28),
    ("CS6", 0x30),
    ("CS7", 0x38),
    ("BE", 0x00),
    ("AF11", 0x0a),
    ("AF12", 0x0c),
    ("AF13", 0x0e),
    ("AF21", 0x12),
    ("AF22", 0x14),
    ("AF23", 0x16),
    ("AF31", 0x1a),
    ("AF32", 0x1c),
    ("AF33", 0x1e),
    ("AF41", 0x22),
    ("AF42", 0x24),
    ("AF43", 0x26),
    ("EF", 0x2e),
];

/// A class name; like iptables, only the class name's length of the
/// argument is compared (case-insensitively), so "ef-foo" is EF.
pub fn class_to_dscp(name: &str) -> Result<u8> {
    let n = name.as_bytes();
    DS_CLASSES
        .iter()
        .find(|(c, _)| n.len() >= c.len() && n[..c.len()].eq_ignore_ascii_case(c.as_bytes()))
        .map(|e| e.1)
        .ok_or_else(|| Error::param(format!("Invalid DSCP value `{name}'")))
}

impl Ext for Dscp {
    const NAME: &'static str = "dscp";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("dscp", DSCP, Arg::Required)
            .inv()
            .excl(1 << CLASS),
        OptDef::new("dscp-class", CLASS, Arg::Required)
            .inv()
            .excl(1 << DSCP),
    ];

    fn new(_: &ParseCtx) -> Self {
        Dscp {
            dscp: 0,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.dscp = if c.opt.id == DSCP {
            c.uint(0, DSCP_MAX)? as u8
        } else {
            class_to_dscp(c.arg)?
        };
        self.inv |= c.inv;
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        if seen == 0 {
            return Err(Error::param("DSCP match: Parameter --dscp is required"));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        let _ = write!(out, " --dscp 0x{:02x}", self.dscp);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(
            out,
            " DSCP match {}0x{:02x}",
            if self.inv { "!" } else { "" },
            self.dscp
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

    #[test]
    fn list_output() {
        let cases = [
            ("-m dscp --dscp 0x3f", " DSCP match 0x3f"),
            ("-m dscp ! --dscp 10", " DSCP match !0x0a"),
            ("-m dscp --dscp-class af41", " DSCP match 0x22"),
            ("-m dscp ! --dscp-class EFx", " DSCP match !0x2e"),
        ];
        for (args, want) in cases {
            assert_eq!(list(args, false), want, "{args}");
            assert_eq!(list(args, true), want, "{args} -n");
        }
    }

    #[test]
    fn save_output() {
        assert_eq!(save("-m dscp --dscp-class CS7"), " --dscp 0x38");
        assert_eq!(save("-m dscp ! --dscp 0"), " ! --dscp 0x00");
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m dscp --dscp 0x40",
                "dscp: bad value for option \"--dscp\", or out of range (0-63).\n",
            ),
            (
                "-m dscp --dscp -1",
                "dscp: bad value for option \"--dscp\", or out of range (0-63).\n",
            ),
            ("-m dscp --dscp-class AF1", "Invalid DSCP value `AF1'"),
            (
                "-m dscp --dscp 0x3f --dscp-class CS0",
                "dscp: option \"--dscp\" cannot be used together with \"--dscp-class\".\n",
            ),
            ("-m dscp", "DSCP match: Parameter --dscp is required"),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

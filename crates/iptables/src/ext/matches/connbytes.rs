//! `-m connbytes`: the connection's packet/byte count or average packet
//! size (iptables' libxt_connbytes). The range is kept as the kernel gets
//! it: an inverted range is stored swapped (`from > to`), which is also how
//! it prints back.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Connbytes {
    pub from: u64,
    pub to: u64,
    /// XT_CONNBYTES_PKTS 0, _BYTES 1, _AVGPKT 2.
    pub what: u8,
    /// XT_CONNBYTES_DIR_ORIGINAL 0, _REPLY 1, _BOTH 2.
    pub dir: u8,
}

const COUNT: u8 = 0;
const DIR: u8 = 1;
const MODE: u8 = 2;

const MODES: &[&str] = &["packets", "bytes", "avgpkt"];
const DIRS: &[&str] = &["original", "reply", "both"];

impl Connbytes {
    fn put(&self, out: &mut String, prefix: &str) {
        let (from, to) = if self.from > self.to {
            out.push_str(" !");
            (self.to, self.from)
        } else {
            (self.from, self.to)
        };
        let _ = write!(out, " {prefix}connbytes {from}");
        if to != 0 && to < u64::MAX {
            let _ = write!(out, ":{to}");
        }
    }
}

fn word(names: &[&'static str], i: u8) -> &'static str {
    names.get(i as usize).copied().unwrap_or("unknown")
}

impl Ext for Connbytes {
    const NAME: &'static str = "connbytes";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("connbytes", COUNT, Arg::Required).inv().mand(),
        OptDef::new("connbytes-dir", DIR, Arg::Required).mand(),
        OptDef::new("connbytes-mode", MODE, Arg::Required).mand(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Connbytes {
            from: 0,
            to: 0,
            what: 0,
            dir: 0,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            COUNT => {
                let (lo, hi) = opt::parse_uint_range(c.ext, c.opt.name, c.arg, u64::MAX)?;
                (self.from, self.to) = (lo, hi.unwrap_or(u64::MAX));
                if c.inv {
                    (self.from, self.to) = (self.to, self.from);
                }
            }
            DIR => {
                let i = DIRS
                    .iter()
                    .position(|d| *d == c.arg)
                    .ok_or_else(|| Error::param(format!("Unknown --connbytes-dir `{}'", c.arg)))?;
                self.dir = i as u8;
            }
            _ => {
                let i = MODES
                    .iter()
                    .position(|m| *m == c.arg)
                    .ok_or_else(|| Error::param(format!("Unknown --connbytes-mode `{}'", c.arg)))?;
                self.what = i as u8;
            }
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.put(out, "--");
        let _ = write!(
            out,
            " --connbytes-mode {} --connbytes-dir {}",
            word(MODES, self.what),
            word(DIRS, self.dir)
        );
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        self.put(out, "");
        let _ = write!(
            out,
            " connbytes mode {} connbytes direction {}",
            word(MODES, self.what),
            word(DIRS, self.dir)
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

    const TAIL: &str = "--connbytes-mode avgpkt --connbytes-dir both";

    #[test]
    fn forms() {
        let cases = [
            ("0:1000", " --connbytes 0:1000", " connbytes 0:1000"),
            (":", " --connbytes 0", " connbytes 0"),
            ("1000:", " --connbytes 1000", " connbytes 1000"),
            ("0:0", " --connbytes 0", " connbytes 0"),
            ("5:5", " --connbytes 5:5", " connbytes 5:5"),
            ("0:18446744073709551615", " --connbytes 0", " connbytes 0"),
        ];
        for (range, s, l) in cases {
            for inv in [false, true] {
                let args = format!(
                    "-m connbytes {}--connbytes {range} {TAIL}",
                    if inv { "! " } else { "" }
                );
                // An inverted equal range is not told apart from the
                // plain one (from > to is what marks an inversion).
                let bang = if inv && !range.starts_with("5:") && range != "0:0" {
                    " !"
                } else {
                    ""
                };
                assert_eq!(
                    save(&args),
                    format!("{bang}{s} --connbytes-mode avgpkt --connbytes-dir both"),
                    "{args}"
                );
                let want = format!("{bang}{l} connbytes mode avgpkt connbytes direction both");
                assert_eq!(list(&args, false), want, "{args}");
                assert_eq!(list(&args, true), want, "{args} -n");
            }
        }
    }

    #[test]
    fn errors() {
        let cases = [
            ("-m connbytes", "connbytes: option \"--connbytes\" must be specified\n"),
            (
                "-m connbytes --connbytes 1 --connbytes-mode bytes",
                "connbytes: option \"--connbytes-dir\" must be specified\n",
            ),
            (
                "-m connbytes --connbytes 1 --connbytes-mode wrong",
                "Unknown --connbytes-mode `wrong'",
            ),
            (
                "-m connbytes --connbytes 1 --connbytes-dir Both",
                "Unknown --connbytes-dir `Both'",
            ),
            (
                "-m connbytes --connbytes 1000:0",
                "connbytes: bad value for option \"--connbytes\" near \"0\", or out of range (1000-18446744073709551615).\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

//! `-m connlabel`: a conntrack label bit, by number or by a name of
//! `/etc/xtables/connlabel.conf` (iptables' libxt_connlabel). The value is
//! the bit; names are looked up when printing, as iptables does.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;
use std::sync::OnceLock;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Connlabel {
    pub bit: u16,
    pub inv: bool,
    /// `--set`: also set the label on the connection.
    pub set: bool,
}

const LABEL: u8 = 0;
const SET: u8 = 1;
/// XT_CONNLABEL_MAXBIT: the kernel refuses higher bits.
pub const MAXBIT: u16 = 127;
const CONF: &str = "/etc/xtables/connlabel.conf";

/// The label map: `BIT NAME` lines (bit in any base), `#` comments.
pub fn parse_map(text: &str) -> Vec<(u16, String)> {
    let mut v = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with('#') {
            continue;
        }
        let Some((bit, rest)) = opt::strtoul(t, 0) else {
            continue;
        };
        let name = rest.trim();
        if bit <= MAXBIT as u64 && !name.is_empty() && rest.len() != name.len() {
            v.push((bit as u16, name.to_string()));
        }
    }
    v
}

fn map() -> &'static [(u16, String)] {
    static MAP: OnceLock<Vec<(u16, String)>> = OnceLock::new();
    MAP.get_or_init(|| parse_map(&std::fs::read_to_string(CONF).unwrap_or_default()))
}

fn name_of(bit: u16) -> Option<&'static str> {
    map().iter().find(|e| e.0 == bit).map(|e| e.1.as_str())
}

/// connlabel_value_parse: the whole string read by `strtoul(.., 0)`, cut to
/// a C int; a negative int (overflow included) is "not a number".
fn value(s: &str) -> Option<u16> {
    match opt::c_strtoul(s, 0)? {
        (v, _, "") => {
            let int = v as u32 as i32;
            (int >= 0).then_some(int as u16)
        }
        _ => None,
    }
}

impl Ext for Connlabel {
    const NAME: &'static str = "connlabel";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("label", LABEL, Arg::Required).inv().mand(),
        OptDef::new("set", SET, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Connlabel {
            bit: 0,
            inv: false,
            set: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        if c.opt.id == SET {
            self.set = true;
            return Ok(());
        }
        // The option's minimum length is 1.
        if c.arg.is_empty() {
            return Err(Error::param(
                "Argument must have a minimum length of 1 characters\n",
            ));
        }
        let by_name = || map().iter().find(|e| e.1 == c.arg).map(|e| e.0);
        self.bit = value(c.arg)
            .or_else(by_name)
            .ok_or_else(|| Error::param(format!("label '{}' not found or invalid value", c.arg)))?;
        self.inv = c.inv;
        Ok(())
    }

    fn finish(&mut self, _seen: u32, _: &ParseCtx) -> Result<()> {
        if self.bit > MAXBIT {
            return Err(Error::op(format!(
                "Numerical result out of range: connlabel match: label bit {} is above {MAXBIT}.",
                self.bit
            )));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        match name_of(self.bit) {
            Some(n) => {
                let _ = write!(out, " --label \"{n}\"");
            }
            None => {
                let _ = write!(out, " --label \"{}\"", self.bit);
            }
        }
        if self.set {
            out.push_str(" --set");
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" connlabel");
        if self.inv {
            out.push_str(" !");
        }
        match name_of(self.bit).filter(|_| !ctx.numeric) {
            Some(n) => {
                let _ = write!(out, " '{n}'");
            }
            None => {
                let _ = write!(out, " {}", self.bit);
            }
        }
        if self.set {
            out.push_str(" set");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::{err, list, save};

    // The tests assume no /etc/xtables/connlabel.conf names bits 0-127.
    #[test]
    fn forms() {
        let cases = [
            (
                "-m connlabel --label 40",
                " --label \"40\"",
                " connlabel 40",
            ),
            (
                "-m connlabel ! --label 0x29 --set",
                " ! --label \"41\" --set",
                " connlabel ! 41 set",
            ),
            (
                "-m connlabel --label -4294967200",
                " --label \"96\"",
                " connlabel 96",
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
                "-m connlabel --label 2048",
                "Numerical result out of range: connlabel match: label bit 2048 is above 127.",
            ),
            (
                "-m connlabel --label foobar_not_there",
                "label 'foobar_not_there' not found or invalid value",
            ),
            (
                "-m connlabel --label -1",
                "label '-1' not found or invalid value",
            ),
            (
                "-m connlabel --label 2147483648",
                "label '2147483648' not found or invalid value",
            ),
            (
                "-m connlabel --label \"\"",
                "Argument must have a minimum length of 1 characters\n",
            ),
            (
                "-m connlabel --set",
                "connlabel: option \"--label\" must be specified\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }

    #[test]
    fn map_file() {
        let m = parse_map("# labels\n0 eth0-in\n1\tbulk traffic \n0x2 hex\n200 big\nx bad\n3\n");
        let want: Vec<(u16, String)> = vec![
            (0, "eth0-in".into()),
            (1, "bulk traffic".into()),
            (2, "hex".into()),
        ];
        assert_eq!(m, want);
    }
}

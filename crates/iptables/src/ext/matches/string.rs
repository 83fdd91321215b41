//! `-m string`: a byte pattern in the packet (iptables' libxt_string,
//! revision 1).

use crate::error::{Error, Result};
use crate::ext::matches::helper::cut;
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StringMatch {
    pub from: u16,
    pub to: u16,
    /// Text search algorithm (at most `ALGO_MAX` bytes).
    pub algo: String,
    /// At most `PATTERN_MAX` bytes.
    pub pattern: Vec<u8>,
    pub inv: bool,
    pub icase: bool,
}

const FROM: u8 = 0;
const TO: u8 = 1;
const ALGO: u8 = 2;
const ICASE: u8 = 3;
const STRING: u8 = 4;
const HEX_STRING: u8 = 5;
/// XT_STRING_MAX_PATTERN_SIZE.
pub const PATTERN_MAX: usize = 128;
/// XT_STRING_MAX_ALGO_NAME_SIZE less the NUL.
pub const ALGO_MAX: usize = 15;
/// The kernel's text search algorithms.
const ALGOS: &[&str] = &["bm", "kmp", "fsm"];

/// `--hex-string` as iptables reads it: text with `|hex hex ...|` blocks
/// and `\c` literals outside them. `b` is the argument's bytes, `s` the
/// argument as messages quote it.
pub fn parse_hex_string(b: &[u8], s: &str) -> Result<Vec<u8>> {
    if b.is_empty() {
        return Err(Error::param("STRING must contain at least one char"));
    }
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let mut out = Vec::new();
    let (mut i, mut hex, mut literal) = (0usize, false, false);
    while i < b.len() {
        if out.len() >= PATTERN_MAX {
            return Err(Error::param(format!("STRING too long \"{s}\"")));
        }
        if b[i] == b'\\' && !hex {
            literal = true;
        } else if b[i] == b'\\' {
            return Err(Error::param("Cannot include literals in hex data"));
        } else if b[i] == b'|' {
            if hex {
                hex = false;
            } else {
                hex = true;
                while at(i + 1) == b' ' {
                    i += 1;
                }
            }
            if i + 1 >= b.len() {
                break;
            }
            i += 1;
        }
        if literal {
            if i + 1 >= b.len() {
                return Err(Error::param("Bad literal placement at end of string"));
            }
            out.push(b[i + 1]);
            i += 2;
            literal = false;
        } else if hex {
            if i + 1 >= b.len() {
                return Err(Error::param("Odd number of hex digits"));
            }
            if i + 2 >= b.len() {
                return Err(Error::param("Invalid hex block"));
            }
            for c in [b[i], b[i + 1]] {
                if !c.is_ascii_hexdigit() {
                    let shown = crate::bytes::decode(&[c]).into_owned();
                    return Err(Error::param(format!("Invalid hex char '{shown}'")));
                }
            }
            let hi = (b[i] as char).to_digit(16).unwrap_or(0) as u8;
            let lo = (b[i + 1] as char).to_digit(16).unwrap_or(0) as u8;
            out.push(hi << 4 | lo);
            i += if b[i + 2] == b' ' { 3 } else { 2 };
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

impl StringMatch {
    /// iptables prints the pattern in hex when a byte is not printable or
    /// the last one is a backslash.
    fn is_hex(&self) -> bool {
        self.pattern.iter().any(|c| !(0x20..0x7f).contains(c))
            || self.pattern.last() == Some(&b'\\')
    }

    fn put_pattern(&self, out: &mut String) {
        if self.is_hex() {
            out.push_str(" \"|");
            for c in &self.pattern {
                let _ = write!(out, "{c:02x}");
            }
            out.push_str("|\"");
        } else {
            out.push_str(" \"");
            for &c in &self.pattern {
                if c == b'"' || c == b'\\' {
                    out.push('\\');
                }
                out.push(c as char);
            }
            out.push('"');
        }
    }
}

impl Ext for StringMatch {
    const NAME: &'static str = "string";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("from", FROM, Arg::Required),
        OptDef::new("to", TO, Arg::Required),
        OptDef::new("algo", ALGO, Arg::Required).mand(),
        OptDef::new("string", STRING, Arg::Required)
            .inv()
            .excl(1 << HEX_STRING),
        OptDef::new("hex-string", HEX_STRING, Arg::Required)
            .inv()
            .excl(1 << STRING),
        OptDef::new("icase", ICASE, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        StringMatch {
            from: 0,
            to: u16::MAX,
            algo: String::new(),
            pattern: Vec::new(),
            inv: false,
            icase: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            FROM => self.from = c.uint(0, 65535)? as u16,
            TO => self.to = c.uint(0, 65535)? as u16,
            ALGO => self.algo = cut(c.arg, ALGO_MAX),
            ICASE => self.icase = true,
            id => {
                // The pattern is the argument's bytes (crate::bytes).
                let raw = crate::bytes::encode(c.arg);
                self.pattern = if id == STRING {
                    if raw.len() > PATTERN_MAX {
                        return Err(Error::param(format!("STRING too long \"{}\"", c.arg)));
                    }
                    raw.into_owned()
                } else {
                    parse_hex_string(&raw, c.arg)?
                };
                self.inv |= c.inv;
            }
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        if seen & ((1 << STRING) | (1 << HEX_STRING)) == 0 {
            return Err(Error::param(
                "STRING match: You must specify `--string' or `--hex-string'",
            ));
        }
        // The kernel's checks (xt_string and textsearch_prepare); only
        // whether an "fsm" pattern is a valid token table is left to it.
        if seen & (1 << ALGO) != 0 && !ALGOS.contains(&self.algo.as_str()) {
            return Err(Error::op(format!(
                "No such file or directory: string match: no text search algorithm \"{}\".",
                self.algo
            )));
        }
        if self.from > self.to {
            return Err(opt::einval("string match: --from is beyond --to"));
        }
        if self.pattern.is_empty() {
            return Err(opt::einval("string match: empty pattern"));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        out.push_str(if self.is_hex() {
            " --hex-string"
        } else {
            " --string"
        });
        self.put_pattern(out);
        let _ = write!(out, " --algo {}", self.algo);
        if self.from != 0 {
            let _ = write!(out, " --from {}", self.from);
        }
        if self.to != u16::MAX {
            let _ = write!(out, " --to {}", self.to);
        }
        if self.icase {
            out.push_str(" --icase");
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(if self.inv {
            " STRING match !"
        } else {
            " STRING match "
        });
        self.put_pattern(out);
        let _ = write!(out, " ALGO name {}", self.algo);
        if self.from != 0 {
            let _ = write!(out, " FROM {}", self.from);
        }
        if self.to != u16::MAX {
            let _ = write!(out, " TO {}", self.to);
        }
        if self.icase {
            out.push_str(" ICASE");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_hex_string;
    use crate::ext::testutil::{err, list, save};

    #[test]
    fn forms() {
        let cases = [
            (
                "-m string --algo bm --string test",
                " --string \"test\" --algo bm",
                " STRING match  \"test\" ALGO name bm",
            ),
            (
                "-m string ! --string \"a \\\"b\\\\c\" --algo kmp --from 1 --to 65534 --icase",
                " ! --string \"a \\\"b\\\\c\" --algo kmp --from 1 --to 65534 --icase",
                " STRING match ! \"a \\\"b\\\\c\" ALGO name kmp FROM 1 TO 65534 ICASE",
            ),
            (
                "-m string --hex-string \"|0a0a0a0a|\" --algo bm",
                " --hex-string \"|0a0a0a0a|\" --algo bm",
                " STRING match  \"|0a0a0a0a|\" ALGO name bm",
            ),
            (
                "-m string --hex-string \"ab|63 64|\" --algo bm --from 0 --to 65535",
                " --string \"abcd\" --algo bm",
                " STRING match  \"abcd\" ALGO name bm",
            ),
            (
                "-m string --string caf\u{10fee9} --algo bm",
                " --hex-string \"|636166e9|\" --algo bm",
                " STRING match  \"|636166e9|\" ALGO name bm",
            ),
            (
                "-m string --string \"a\\\\\" --algo bm",
                " --hex-string \"|615c|\" --algo bm",
                " STRING match  \"|615c|\" ALGO name bm",
            ),
        ];
        for (args, s, l) in cases {
            assert_eq!(save(args), s, "{args}");
            assert_eq!(list(args, false), l, "{args}");
            assert_eq!(list(args, true), l, "{args} -n");
        }
    }

    #[test]
    fn hex_strings() {
        let cases: &[(&str, Result<&[u8], &str>)] = &[
            ("|41|", Ok(b"A")),
            ("| 41 42|x", Ok(b"ABx")),
            ("a\\|b", Ok(b"a|b")),
            ("|4|", Err("Invalid hex block")),
            ("|4", Err("Odd number of hex digits")),
            ("|4g|", Err("Invalid hex char 'g'")),
            ("|41\\|", Err("Cannot include literals in hex data")),
            ("a\\", Err("Bad literal placement at end of string")),
            ("", Err("STRING must contain at least one char")),
        ];
        for (s, want) in cases {
            let got = parse_hex_string(s.as_bytes(), s).map_err(|e| e.msg);
            assert_eq!(
                got.as_deref(),
                want.map_err(str::to_string).as_deref(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn errors() {
        let long = "x".repeat(129);
        let cases = [
            (
                "-m string --algo bm".to_string(),
                "STRING match: You must specify `--string' or `--hex-string'".to_string(),
            ),
            (
                "-m string --string x".into(),
                "string: option \"--algo\" must be specified\n".into(),
            ),
            (
                format!("-m string --string {long} --algo bm"),
                format!("STRING too long \"{long}\""),
            ),
            (
                "-m string --string x --hex-string 41 --algo bm".into(),
                "string: option \"--string\" cannot be used together with \"--hex-string\".\n"
                    .into(),
            ),
            (
                "-m string --string x --algo wrong".into(),
                "No such file or directory: string match: no text search algorithm \"wrong\"."
                    .into(),
            ),
            (
                "-m string --string \"\" --algo bm".into(),
                "Invalid argument: string match: empty pattern.".into(),
            ),
            (
                "-m string --string x --algo bm --from 5 --to 4".into(),
                "Invalid argument: string match: --from is beyond --to.".into(),
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(&args), want, "{args}");
        }
    }
}

//! `-m u32`: tests on 32-bit words read at computed packet offsets
//! (iptables' libxt_u32).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

/// XT_U32_MAXSIZE: tests per rule, numbers per location, ranges per test.
pub const MAXSIZE: usize = 10;
pub const OP_AND: u8 = 0;
pub const OP_LEFTSH: u8 = 1;
pub const OP_RIGHTSH: u8 = 2;
pub const OP_AT: u8 = 3;

/// One `location = value[,value...]` test.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Test {
    /// (operator before the number, number); the first operator is unused
    /// (OP_AND, as the kernel gets it).
    pub location: Vec<(u8, u32)>,
    /// Ranges (min, max).
    pub values: Vec<(u32, u32)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct U32 {
    pub tests: Vec<Test>,
    pub inv: bool,
}

fn err(msg: String) -> Error {
    Error::param(msg)
}

/// A number at byte `pos` (xtables_strtoui, any base, no sign).
fn number(s: &str, pos: usize) -> Result<(u32, &str)> {
    let bad = || err(format!("u32: at char {pos}: not a number or out of range"));
    if s.trim_start().starts_with('-') {
        return Err(bad());
    }
    match opt::strtoul(s, 0) {
        Some((v, rest)) if v <= u32::MAX as u64 => Ok((v as u32, rest)),
        _ => Err(bad()),
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// The test language as iptables reads it, with its messages (`at char N`
/// counts bytes from the start of the argument).
pub fn parse_tests(arg: &str) -> Result<Vec<Test>> {
    let b = arg.as_bytes();
    let mut i = 0usize;
    let mut tests = vec![Test::default()];
    let mut reading_values = false;
    loop {
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        let ct = tests.last_mut().expect("a current test");
        if i == b.len() {
            if !reading_values {
                return Err(err(
                    "u32: abrupt end of input after location specifier".into()
                ));
            }
            if ct.values.is_empty() {
                return Err(err("u32: test ended with no value specified".into()));
            }
            if tests.len() > MAXSIZE {
                return Err(err(format!("u32: at char {i}: too many \"&&\"s")));
            }
            return Ok(tests);
        }
        if !reading_values {
            if b[i] == b'=' {
                if ct.location.is_empty() {
                    return Err(err(format!("u32: at char {i}: location spec missing")));
                }
                i += 1;
                reading_values = true;
                continue;
            }
            let mut op = OP_AND;
            if !ct.location.is_empty() {
                op = match b[i] {
                    b'&' => OP_AND,
                    b'<' | b'>' => {
                        let c = b[i];
                        i += 1;
                        if b.get(i) != Some(&c) {
                            let which = if c == b'<' { '<' } else { '>' };
                            return Err(err(format!(
                                "u32: at char {i}: a second '{which}' was expected"
                            )));
                        }
                        if c == b'<' {
                            OP_LEFTSH
                        } else {
                            OP_RIGHTSH
                        }
                    }
                    b'@' => OP_AT,
                    _ => return Err(err(format!("u32: at char {i}: operator expected"))),
                };
                i += 1;
            }
            let (n, rest) = number(&arg[i..], i)?;
            i = b.len() - rest.len();
            ct.location.push((op, n));
            if ct.location.len() > MAXSIZE {
                return Err(err(format!("u32: at char {i}: too many operators")));
            }
        } else if b[i] == b'&' {
            i += 1;
            if b.get(i) != Some(&b'&') {
                return Err(err(format!("u32: at char {i}: a second '&' was expected")));
            }
            if ct.values.is_empty() {
                return Err(err(format!("u32: at char {i}: value spec missing")));
            }
            tests.push(Test::default());
            if tests.len() > MAXSIZE + 1 {
                return Err(err(format!("u32: at char {i}: too many \"&&\"s")));
            }
            i += 1;
            reading_values = false;
        } else {
            if !ct.values.is_empty() {
                if b[i] != b',' {
                    return Err(err(format!("u32: at char {i}: expected \",\" or \"&&\"")));
                }
                i += 1;
            }
            let (min, rest) = number(&arg[i..], i)?;
            i = b.len() - rest.len();
            while i < b.len() && is_space(b[i]) {
                i += 1;
            }
            let mut max = min;
            if b.get(i) == Some(&b':') {
                i += 1;
                let (m, rest) = number(&arg[i..], i)?;
                i = b.len() - rest.len();
                max = m;
            }
            ct.values.push((min, max));
            if ct.values.len() > MAXSIZE {
                return Err(err(format!("u32: at char {i}: too many \",\"s")));
            }
        }
    }
}

impl U32 {
    fn dump(&self, out: &mut String) {
        out.push_str(" \"");
        for (t, test) in self.tests.iter().enumerate() {
            if t > 0 {
                out.push_str("&&");
            }
            for (i, (op, n)) in test.location.iter().enumerate() {
                if i > 0 {
                    out.push_str(match *op {
                        OP_AND => "&",
                        OP_LEFTSH => "<<",
                        OP_RIGHTSH => ">>",
                        _ => "@",
                    });
                }
                let _ = write!(out, "0x{n:x}");
            }
            out.push('=');
            for (i, (lo, hi)) in test.values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if lo == hi {
                    let _ = write!(out, "0x{lo:x}");
                } else {
                    let _ = write!(out, "0x{lo:x}:0x{hi:x}");
                }
            }
        }
        out.push('"');
    }
}

impl Ext for U32 {
    const NAME: &'static str = "u32";
    const OPTS: &'static [OptDef] = &[OptDef::new("u32", 0, Arg::Required).inv().mand()];

    fn new(_: &ParseCtx) -> Self {
        U32 {
            tests: Vec::new(),
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.inv = c.inv;
        self.tests = parse_tests(c.arg)?;
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        out.push_str(" --u32");
        self.dump(out);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" u32");
        if self.inv {
            out.push_str(" !");
        }
        self.dump(out);
    }
}

#[cfg(test)]
mod tests {
    use super::parse_tests;
    use crate::ext::testutil::{err, list, save};

    #[test]
    fn forms() {
        let cases = [
            (
                "-m u32 --u32 \"0x0=0x0&&0x0=0x1\"",
                " --u32 \"0x0=0x0&&0x0=0x1\"",
                " u32 \"0x0=0x0&&0x0=0x1\"",
            ),
            (
                "-m u32 ! --u32 \" 6 & 0xFF = 1 , 2:3 && 0>>22&0x3C@ 12>>26 << 2 @0 = 0x10:0x20\"",
                " ! --u32 \"0x6&0xff=0x1,0x2:0x3&&0x0>>0x16&0x3c@0xc>>0x1a<<0x2@0x0=0x10:0x20\"",
                " u32 ! \"0x6&0xff=0x1,0x2:0x3&&0x0>>0x16&0x3c@0xc>>0x1a<<0x2@0x0=0x10:0x20\"",
            ),
        ];
        for (args, s, l) in cases {
            assert_eq!(save(args), s, "{args}");
            assert_eq!(list(args, false), l, "{args}");
            assert_eq!(list(args, true), l, "{args} -n");
        }
    }

    #[test]
    fn language_errors() {
        let ten = ["0"; 10].join("&");
        let cases = [
            (
                "0".to_string(),
                "u32: abrupt end of input after location specifier".to_string(),
            ),
            (
                "0=".into(),
                "u32: test ended with no value specified".into(),
            ),
            ("=1".into(), "u32: at char 0: location spec missing".into()),
            (
                "0<1=1".into(),
                "u32: at char 2: a second '<' was expected".into(),
            ),
            (
                "0>1=1".into(),
                "u32: at char 2: a second '>' was expected".into(),
            ),
            ("0 x1=1".into(), "u32: at char 2: operator expected".into()),
            (
                "0=1&2".into(),
                "u32: at char 4: a second '&' was expected".into(),
            ),
            (
                "0=1 2".into(),
                "u32: at char 4: expected \",\" or \"&&\"".into(),
            ),
            (
                "0=&&1=1".into(),
                "u32: at char 3: value spec missing".into(),
            ),
            (
                "0=x".into(),
                "u32: at char 2: not a number or out of range".into(),
            ),
            (
                "0=-1".into(),
                "u32: at char 2: not a number or out of range".into(),
            ),
            (
                "0=0x100000000".into(),
                "u32: at char 2: not a number or out of range".into(),
            ),
            (
                format!("{ten}&0=1"),
                "u32: at char 21: too many operators".into(),
            ),
            (
                format!("0={}", ["1"; 11].join(",")),
                "u32: at char 23: too many \",\"s".into(),
            ),
            (
                ["0=1"; 11].join("&&"),
                "u32: at char 53: too many \"&&\"s".into(),
            ),
        ];
        for (s, want) in cases {
            assert_eq!(parse_tests(&s).unwrap_err().msg, want, "{s}");
        }
        assert_eq!(parse_tests(&["0=1"; 10].join("&&")).unwrap().len(), 10);
        assert_eq!(err("-m u32"), "u32: option \"--u32\" must be specified\n");
    }
}

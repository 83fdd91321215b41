//! `-m rateest`: compare rate estimators (from `-j RATEEST`) with each
//! other or with fixed rates (iptables' libxt_rateest). An old-style
//! extension: it checks repeats and inversions itself, with its own
//! messages, and the rate options take their value only when one follows.
//! Whether the named estimators exist is the kernel's check.

use crate::error::{Error, Result};
use crate::ext::matches::helper::cut;
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

pub const INVERT: u16 = 1 << 0;
pub const ABS: u16 = 1 << 1;
pub const REL: u16 = 1 << 2;
pub const DELTA: u16 = 1 << 3;
pub const BPS: u16 = 1 << 4;
pub const PPS: u16 = 1 << 5;
pub const MODE_EQ: u16 = 1;
pub const MODE_LT: u16 = 2;
pub const MODE_GT: u16 = 3;
/// IFNAMSIZ less the NUL.
pub const NAME_MAX: usize = 15;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rateest {
    pub name1: String,
    pub name2: String,
    /// INVERT | ABS | REL | DELTA | BPS | PPS.
    pub flags: u16,
    /// MODE_* (0 until one is given).
    pub mode: u16,
    /// Rates in bytes per second.
    pub bps1: u32,
    pub pps1: u32,
    pub bps2: u32,
    pub pps2: u32,
    /// Parse state: the options given (bit = option id); 0 once the rule
    /// is read.
    given: u16,
}

const RATEEST1: u8 = 0;
const RATEEST2: u8 = 1;
const BPS1: u8 = 2;
const PPS1: u8 = 3;
const BPS2: u8 = 4;
const PPS2: u8 = 5;
const O_DELTA: u8 = 6;
const LT: u8 = 7;
const GT: u8 = 8;
const EQ: u8 = 9;

/// Rate suffixes (iproute2's) and their bits per unit.
const SUFFIXES: &[(&str, f64)] = &[
    ("bit", 1.),
    ("Kibit", 1024.),
    ("kbit", 1000.),
    ("Mibit", 1024. * 1024.),
    ("mbit", 1_000_000.),
    ("Gibit", 1024. * 1024. * 1024.),
    ("gbit", 1_000_000_000.),
    ("Tibit", 1024. * 1024. * 1024. * 1024.),
    ("tbit", 1_000_000_000_000.),
    ("Bps", 8.),
    ("KiBps", 8. * 1024.),
    ("KBps", 8000.),
    ("MiBps", 8. * 1024. * 1024.),
    ("MBps", 8_000_000.),
    ("GiBps", 8. * 1024. * 1024. * 1024.),
    ("GBps", 8_000_000_000.),
    ("TiBps", 8. * 1024. * 1024. * 1024. * 1024.),
    ("TBps", 8_000_000_000_000.),
];

/// strtod on decimal input: the number at the start of `s` and the rest.
fn strtod(s: &str) -> Option<(f64, &str)> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let b = t.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let mut n = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        n += digits(&mut i);
    }
    if n == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if digits(&mut j) > 0 {
            i = j;
        }
    }
    Some((t[..i].parse().ok()?, &t[i..]))
}

/// A rate with an optional suffix (bytes per second without one... as
/// iptables has it: the number divided by 8) in bytes per second.
fn parse_rate(s: &str) -> Option<u32> {
    let (v, rest) = strtod(s)?;
    if rest.is_empty() {
        return Some((v / 8.) as u32);
    }
    SUFFIXES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(rest))
        .map(|(_, scale)| (v * scale / 8.) as u32)
}

/// A rate for people: bits per second in bit, Kbit or Mbit.
fn put_rate(out: &mut String, rate: u32, numeric: bool) {
    let bits = rate as f64 * 8.;
    if numeric {
        let _ = write!(out, " {rate}");
    } else if bits >= 1e9 {
        let _ = write!(out, " {:.0}Mbit", bits / 1e6);
    } else if bits >= 1e6 {
        let _ = write!(out, " {:.0}Kbit", bits / 1e3);
    } else {
        let _ = write!(out, " {bits:.0}bit");
    }
}

impl Rateest {
    fn put_mode(&self, out: &mut String, prefix: &str) {
        if self.flags & INVERT != 0 {
            out.push_str(" !");
        }
        let word = match self.mode {
            MODE_EQ => "eq",
            MODE_LT => "lt",
            _ => "gt",
        };
        let _ = write!(out, " {prefix}{word}");
    }

    fn save_rate(&self, out: &mut String, name: &str, r1: u32, r2: u32, numeric: bool) {
        if self.flags & DELTA != 0 {
            let _ = write!(out, " --rateest-{name}1");
            put_rate(out, r1, numeric);
            self.put_mode(out, "--rateest-");
            let _ = write!(out, " --rateest-{name}2");
        } else {
            self.put_mode(out, "--rateest-");
            let _ = write!(out, " --rateest-{name}");
        }
        if self.flags & (ABS | DELTA) != 0 {
            put_rate(out, r2, numeric);
        }
    }

    fn save_rates(&self, out: &mut String) {
        if self.flags & BPS != 0 {
            self.save_rate(out, "bps", self.bps1, self.bps2, false);
        }
        if self.flags & PPS != 0 {
            self.save_rate(out, "pps", self.pps1, self.pps2, true);
        }
    }
}

impl Ext for Rateest {
    const NAME: &'static str = "rateest";
    // Everything is `multi` and invertible here: the extension's own
    // messages come first.
    const OPTS: &'static [OptDef] = &[
        OptDef::new("rateest1", RATEEST1, Arg::Required)
            .multi()
            .inv(),
        OptDef::new("rateest", RATEEST1, Arg::Required)
            .multi()
            .inv(),
        OptDef::new("rateest2", RATEEST2, Arg::Required)
            .multi()
            .inv(),
        OptDef::new("rateest-bps1", BPS1, Arg::None).multi().inv(),
        OptDef::new("rateest-pps1", PPS1, Arg::None).multi().inv(),
        OptDef::new("rateest-bps2", BPS2, Arg::None).multi().inv(),
        OptDef::new("rateest-pps2", PPS2, Arg::None).multi().inv(),
        OptDef::new("rateest-bps", BPS2, Arg::None).multi().inv(),
        OptDef::new("rateest-pps", PPS2, Arg::None).multi().inv(),
        OptDef::new("rateest-delta", O_DELTA, Arg::None)
            .multi()
            .inv(),
        OptDef::new("rateest-lt", LT, Arg::None).multi().inv(),
        OptDef::new("rateest-gt", GT, Arg::None).multi().inv(),
        OptDef::new("rateest-eq", EQ, Arg::None).multi().inv(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Rateest {
            name1: String::new(),
            name2: String::new(),
            flags: 0,
            mode: 0,
            bps1: 0,
            pps1: 0,
            bps2: 0,
            pps2: 0,
            given: 0,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let id = c.opt.id;
        let err = |m: &str| Error::param(format!("rateest: {m}"));
        let e = |m: &str| Err(err(m));
        let what = match id {
            RATEEST1 | RATEEST2 => "rateest",
            BPS1 | BPS2 => "rateest-bps",
            PPS1 | PPS2 => "rateest-pps",
            O_DELTA => "rateest-delta",
            _ => "",
        };
        if c.inv && !what.is_empty() {
            return e(&format!("{what} can't be inverted"));
        }
        if self.given & (1 << id) != 0 {
            let name = match id {
                RATEEST1 => "--rateest1",
                RATEEST2 => "--rateest2",
                BPS1 => "--rateest-bps1",
                PPS1 => "--rateest-pps1",
                BPS2 => "--rateest-bps2",
                PPS2 => "--rateest-pps2",
                O_DELTA => "--rateest-delta",
                _ => return e("can't specify lt/gt/eq twice"),
            };
            return e(&format!("can't specify {name} twice"));
        }
        self.given |= 1 << id;
        match id {
            RATEEST1 => self.name1 = cut(c.arg, NAME_MAX),
            RATEEST2 => {
                self.name2 = cut(c.arg, NAME_MAX);
                self.flags |= REL;
            }
            BPS1 | BPS2 => {
                self.flags |= BPS;
                if let Some(w) = c.rest.next_plain() {
                    let r =
                        parse_rate(w).ok_or_else(|| err(&format!("could not parse rate `{w}'")))?;
                    *(if id == BPS1 {
                        &mut self.bps1
                    } else {
                        &mut self.bps2
                    }) = r;
                }
            }
            PPS1 | PPS2 => {
                self.flags |= PPS;
                if let Some(w) = c.rest.next_plain() {
                    let r = opt::parse_uint(w, 0, u32::MAX as u64)
                        .ok_or_else(|| err(&format!("could not parse pps `{w}'")))?;
                    *(if id == PPS1 {
                        &mut self.pps1
                    } else {
                        &mut self.pps2
                    }) = r as u32;
                }
            }
            O_DELTA => self.flags |= DELTA,
            _ => {
                self.mode = match id {
                    LT => MODE_LT,
                    GT => MODE_GT,
                    _ => MODE_EQ,
                };
                if c.inv {
                    self.flags |= INVERT;
                }
            }
        }
        Ok(())
    }

    fn finish(&mut self, _seen: u32, _: &ParseCtx) -> Result<()> {
        self.given = 0;
        if self.flags & REL == 0 {
            self.flags |= ABS;
        }
        // The kernel's checks (besides the estimators' existence).
        if self.flags & (BPS | PPS) == 0 {
            return Err(opt::einval("rateest match: neither bps nor pps to compare"));
        }
        if self.mode == 0 {
            return Err(opt::einval("rateest match: no --rateest-lt/gt/eq"));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.flags & DELTA != 0 {
            out.push_str(" --rateest-delta");
        }
        if self.flags & REL != 0 {
            let _ = write!(out, " --rateest1 {}", self.name1);
            self.save_rates(out);
            let _ = write!(out, " --rateest2 {}", self.name2);
        } else {
            let _ = write!(out, " --rateest {}", self.name1);
            self.save_rates(out);
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        let _ = write!(out, " rateest match {}", self.name1);
        let delta = self.flags & DELTA != 0;
        let abs = self.flags & ABS != 0;
        if delta {
            out.push_str(" delta");
        }
        if self.flags & BPS != 0 {
            out.push_str(" bps");
            if delta {
                put_rate(out, self.bps1, ctx.numeric);
            }
            if abs {
                put_rate(out, self.bps2, ctx.numeric);
                self.put_mode(out, "");
            }
        }
        if self.flags & PPS != 0 {
            out.push_str(" pps");
            if delta {
                let _ = write!(out, " {}", self.pps1);
            }
            if abs {
                self.put_mode(out, "");
                let _ = write!(out, " {}", self.pps2);
            }
        }
        if self.flags & REL != 0 {
            self.put_mode(out, "");
            let _ = write!(out, " {}", self.name2);
            if self.flags & BPS != 0 {
                out.push_str(" bps");
                if delta {
                    put_rate(out, self.bps2, ctx.numeric);
                }
            }
            if self.flags & PPS != 0 {
                out.push_str(" pps");
                if delta {
                    let _ = write!(out, " {}", self.pps2);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_rate;
    use crate::ext::testutil::{err, ok};

    #[test]
    fn forms() {
        // (options, save, -L, -L -n)
        let cases = [
            (
                "--rateest RE1 --rateest-lt --rateest-bps 8bit",
                " --rateest RE1 --rateest-lt --rateest-bps 8bit",
                " rateest match RE1 bps 8bit lt",
                " rateest match RE1 bps 1 lt",
            ),
            (
                "--rateest RE1 --rateest-gt --rateest-bps 5kbit",
                " --rateest RE1 --rateest-gt --rateest-bps 5000bit",
                " rateest match RE1 bps 5000bit gt",
                " rateest match RE1 bps 625 gt",
            ),
            (
                // Each of lt/gt/eq once; the last one given counts.
                "--rateest RE1 --rateest-lt ! --rateest-eq --rateest-pps 5",
                " --rateest RE1 ! --rateest-eq --rateest-pps 5",
                " rateest match RE1 pps ! eq 5",
                " rateest match RE1 pps ! eq 5",
            ),
            (
                "--rateest1 RE1 --rateest-lt --rateest-bps --rateest2 RE2",
                " --rateest1 RE1 --rateest-lt --rateest-bps --rateest2 RE2",
                " rateest match RE1 bps lt RE2 bps",
                " rateest match RE1 bps lt RE2 bps",
            ),
            (
                "--rateest-delta --rateest1 RE1 --rateest-pps1 0 --rateest-lt --rateest-pps2 42 --rateest2 RE2",
                " --rateest-delta --rateest1 RE1 --rateest-pps1 0 --rateest-lt --rateest-pps2 42 --rateest2 RE2",
                " rateest match RE1 delta pps 0 lt RE2 pps 42",
                " rateest match RE1 delta pps 0 lt RE2 pps 42",
            ),
            (
                "--rateest-delta --rateest RE1 --rateest-bps1 2mbit --rateest-gt --rateest-bps2 1.5GBps",
                " --rateest-delta --rateest RE1 --rateest-bps1 2000Kbit --rateest-gt --rateest-bps2 12000Mbit",
                " rateest match RE1 delta bps 2000Kbit 12000Mbit gt",
                " rateest match RE1 delta bps 250000 1500000000 gt",
            ),
        ];
        for (opts, s, l, n) in cases {
            let p = ok(&format!("-m rateest {opts}"));
            assert_eq!(
                (p.save.as_str(), p.list.as_str(), p.list_numeric.as_str()),
                (s, l, n),
                "{opts}"
            );
        }
    }

    #[test]
    fn rates() {
        let cases: &[(&str, Option<u32>)] = &[
            ("8", Some(1)),
            ("8bit", Some(1)),
            ("1KIBIT", Some(128)),
            ("1e3bit", Some(125)),
            (".5KBps", Some(500)),
            ("1kbps", Some(1000)),
            ("5furlongs", None),
            ("x", None),
        ];
        for (s, want) in cases {
            assert_eq!(parse_rate(s), *want, "{s}");
        }
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m rateest ! --rateest RE1",
                "rateest: rateest can't be inverted",
            ),
            (
                "-m rateest --rateest A --rateest1 B",
                "rateest: can't specify --rateest1 twice",
            ),
            (
                "-m rateest --rateest-lt --rateest-lt",
                "rateest: can't specify lt/gt/eq twice",
            ),
            (
                "-m rateest --rateest-bps 5 --rateest-bps",
                "rateest: can't specify --rateest-bps2 twice",
            ),
            (
                "-m rateest ! --rateest-pps1",
                "rateest: rateest-pps can't be inverted",
            ),
            (
                "-m rateest --rateest-bps 5x",
                "rateest: could not parse rate `5x'",
            ),
            (
                "-m rateest --rateest-pps1 1.5",
                "rateest: could not parse pps `1.5'",
            ),
            (
                "-m rateest --rateest A --rateest-lt",
                "Invalid argument: rateest match: neither bps nor pps to compare.",
            ),
            (
                "-m rateest --rateest A --rateest-pps 1",
                "Invalid argument: rateest match: no --rateest-lt/gt/eq.",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

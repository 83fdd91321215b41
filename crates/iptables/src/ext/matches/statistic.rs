//! `-m statistic`: random or every-nth packet (iptables' libxt_statistic).

use crate::error::{Error, Result};
use crate::ext::{postcheck, Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

/// The kernel's xt_statistic_info (user part): in random mode `val` is the
/// probability times 2^31, in nth mode it is `--every` minus one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Statistic {
    pub nth: bool,
    pub val: u32,
    /// Initial counter (`--packet`); 0 in random mode.
    pub packet: u32,
    pub inv: bool,
}

const O_MODE: u8 = 0;
const O_PROBABILITY: u8 = 1;
const O_EVERY: u8 = 2;
const O_PACKET: u8 = 3;
const F_PROBABILITY: u32 = 1 << O_PROBABILITY;
const F_EVERY: u32 = 1 << O_EVERY;
const F_PACKET: u32 = 1 << O_PACKET;

/// The option table with its constraints; iptables checks them after the
/// match's own final check, so `finish` applies them (not the framework).
const CHECKED_OPTS: &[OptDef] = &[
    OptDef::new("mode", O_MODE, Arg::Required).mand(),
    OptDef::new("probability", O_PROBABILITY, Arg::Required)
        .inv()
        .excl(F_EVERY | F_PACKET),
    OptDef::new("every", O_EVERY, Arg::Required)
        .inv()
        .excl(F_PROBABILITY)
        .also(F_PACKET),
    OptDef::new("packet", O_PACKET, Arg::Required)
        .excl(F_PROBABILITY)
        .also(F_EVERY),
];

/// C's strtod for the forms that matter here: white space, then a decimal
/// or hex float, "inf"/"infinity" or "nan" (any case); the whole string.
fn strtod(s: &str) -> Option<f64> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        parse_hex_float(h)?
    } else {
        // Rust's parser takes the decimal, inf, infinity and nan forms; it
        // also wants no sign here (handled above).
        if body.starts_with(['+', '-']) || body.is_empty() {
            return None;
        }
        body.parse::<f64>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// `h.hhh[p[+-]d]` after "0x".
fn parse_hex_float(s: &str) -> Option<f64> {
    let (mant, exp) = match s.find(['p', 'P']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (int, frac) = match mant.split_once('.') {
        Some((a, b)) => (a, b),
        None => (mant, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in int.chars() {
        v = v * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        v += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    if let Some(e) = exp {
        let e: i32 = e.parse().ok()?;
        v *= 2f64.powi(e);
    }
    Some(v)
}

/// C's lround of p * 2^31, kept in 32 bits as the kernel field does: the
/// `val` iptables stores for `--probability p`.
pub fn to_fixed(p: f64) -> u32 {
    let x = 2147483648.0 * p;
    if x.is_nan() {
        return 0;
    }
    // lround rounds halfway cases away from zero, as f64::round does.
    x.round() as i64 as u32
}

impl Statistic {
    fn print(&self, out: &mut String, prefix: &str) {
        let bang = if self.inv { " !" } else { "" };
        if self.nth {
            let every = self.val as u64 + 1;
            let _ = write!(out, " {prefix}mode nth{bang} {prefix}every {every}");
            if self.packet != 0 || !prefix.is_empty() {
                let _ = write!(out, " {prefix}packet {}", self.packet);
            }
        } else {
            let _ = write!(
                out,
                " {prefix}mode random{bang} {prefix}probability {:.11}",
                self.val as f64 / 2147483648.0
            );
        }
    }
}

impl Ext for Statistic {
    const NAME: &'static str = "statistic";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("mode", O_MODE, Arg::Required),
        OptDef::new("probability", O_PROBABILITY, Arg::Required).inv(),
        OptDef::new("every", O_EVERY, Arg::Required).inv(),
        OptDef::new("packet", O_PACKET, Arg::Required),
    ];

    fn new(_: &ParseCtx) -> Self {
        // The zeroed kernel structure: random mode, probability 0.
        Statistic {
            nth: false,
            val: 0,
            packet: 0,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        if c.inv {
            self.inv = true;
        }
        match c.opt.id {
            O_MODE => match c.arg {
                "random" => self.nth = false,
                "nth" => self.nth = true,
                _ => return Err(Error::param(format!("Bad mode \"{}\"", c.arg))),
            },
            O_PROBABILITY => {
                let p = strtod(c.arg)
                    .filter(|p| !(*p < 0.0 || *p > 1.0))
                    .ok_or_else(|| c.bad_value(0, 1))?;
                self.val = to_fixed(p);
            }
            O_EVERY => self.val = c.uint(1, u32::MAX as u64)? as u32 - 1,
            O_PACKET => self.packet = c.uint(0, u32::MAX as u64)? as u32,
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        if !self.nth && seen & F_PROBABILITY == 0 {
            return Err(Error::param(
                "--probability must be specified when using random mode",
            ));
        }
        if self.nth && seen & (F_EVERY | F_PACKET) == 0 {
            return Err(Error::param(
                "--every and --packet must be specified when using nth mode",
            ));
        }
        if self.packet > self.val {
            return Err(Error::param("the --packet p must be 0 <= p <= n-1"));
        }
        postcheck(Self::NAME, CHECKED_OPTS, seen)
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.print(out, "--");
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" statistic");
        self.print(out, "");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::{match_words, run_words, Printed};
    use ruleset::{Family, TableKind};

    type Args = &'static [(&'static str, bool, &'static str)];

    fn build(args: &[(&str, bool, &str)]) -> Result<Printed> {
        let words = match_words::<Statistic>(args);
        run_words(Family::Ipv4, TableKind::Filter, "OUTPUT", &words)
    }

    #[test]
    fn list_and_save() {
        let cases: &[(Args, &str, &str)] = &[
            (
                &[("mode", false, "random"), ("probability", false, "0.1")],
                " statistic mode random probability 0.10000000009",
                " --mode random --probability 0.10000000009",
            ),
            (
                &[("mode", false, "random"), ("probability", true, "1")],
                " statistic mode random ! probability 1.00000000000",
                " --mode random ! --probability 1.00000000000",
            ),
            (
                // 2^18 / 2^31 = 0.0001220703125: a tie, rounded to even.
                &[
                    ("probability", false, "0.0001220703125"),
                    ("mode", false, "random"),
                ],
                " statistic mode random probability 0.00012207031",
                " --mode random --probability 0.00012207031",
            ),
            (
                &[("mode", false, "random"), ("probability", false, "0x1p-1")],
                " statistic mode random probability 0.50000000000",
                " --mode random --probability 0.50000000000",
            ),
            (
                &[
                    ("mode", false, "nth"),
                    ("every", false, "10"),
                    ("packet", false, "0"),
                ],
                " statistic mode nth every 10",
                " --mode nth --every 10 --packet 0",
            ),
            (
                &[
                    ("mode", false, "nth"),
                    ("every", true, "5"),
                    ("packet", false, "4"),
                ],
                " statistic mode nth ! every 5 packet 4",
                " --mode nth ! --every 5 --packet 4",
            ),
        ];
        for (args, list, save) in cases {
            let p = build(args).unwrap();
            assert_eq!(p.list_numeric, *list, "{args:?}");
            assert_eq!(p.save, *save, "{args:?}");
        }
    }

    #[test]
    fn errors() {
        let cases: &[(Args, &str)] = &[
            (
                &[],
                "--probability must be specified when using random mode",
            ),
            (
                &[("probability", false, "0.5")],
                "statistic: option \"--mode\" must be specified\n",
            ),
            (&[("mode", false, "sometimes")], "Bad mode \"sometimes\""),
            (
                &[("mode", false, "random"), ("probability", false, "1.1")],
                "statistic: bad value for option \"--probability\", or out of range (0-1).\n",
            ),
            (
                &[("mode", false, "random"), ("probability", false, "0.5x")],
                "statistic: bad value for option \"--probability\", or out of range (0-1).\n",
            ),
            (
                &[("mode", false, "nth")],
                "--every and --packet must be specified when using nth mode",
            ),
            (
                &[("mode", false, "nth"), ("every", false, "5")],
                "statistic: option \"--every\" also requires \"--packet\".\n",
            ),
            (
                &[
                    ("mode", false, "nth"),
                    ("every", false, "5"),
                    ("packet", false, "5"),
                ],
                "the --packet p must be 0 <= p <= n-1",
            ),
            (
                &[("mode", false, "nth"), ("every", false, "0")],
                "statistic: bad value for option \"--every\", or out of range (1-4294967295).\n",
            ),
            (
                &[
                    ("mode", false, "random"),
                    ("probability", false, "0.5"),
                    ("every", false, "3"),
                    ("packet", false, "1"),
                ],
                "statistic: option \"--probability\" cannot be used together with \"--every\".\n",
            ),
            (
                &[("mode", false, "nth"), ("packet", true, "1")],
                "statistic: option \"--packet\" cannot be inverted.\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(build(args).unwrap_err().msg, *want, "{args:?}");
        }
    }
}

//! `-m limit`: packet rate limit (iptables' libxt_limit). The rate is kept
//! as the kernel's average interval (`avg`, in 1/10000 s per packet) and
//! printed in the largest unit that represents it well, as iptables does.
//! iptables-nft stores the rule as a native `limit` expression (rate per
//! unit) and reads it back; parsing applies that round trip so that the
//! value is canonical.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

/// XT_LIMIT_SCALE: `avg` units per second.
const SCALE: u32 = 10000;
const DEFAULT_BURST: u32 = 5;

/// Print units, largest first, with `avg` for one packet per unit.
const RATES: &[(&str, u32)] = &[
    ("day", SCALE * 24 * 60 * 60),
    ("hour", SCALE * 60 * 60),
    ("min", SCALE * 60),
    ("sec", SCALE),
];

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Limit {
    /// Average interval between packets, in 1/10000 s.
    pub avg: u32,
    pub burst: u32,
}

const O_LIMIT: u8 = 0;
const O_BURST: u8 = 1;

/// C's `atoi`: white space, a sign, digits; saturating as strtol, then cut
/// to an int.
fn atoi(s: &str) -> i32 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i128 = 0;
    for b in t.bytes().take_while(|b| b.is_ascii_digit()) {
        v = (v * 10 + (b - b'0') as i128).min(i64::MAX as i128 + 1);
    }
    let v = if neg { -v } else { v };
    let v = v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
    v as i32
}

/// `N[/second|/minute|/hour|/day]` (any case-insensitive prefix of the
/// unit) to `avg`. `Ok(None)` is a bad rate.
fn parse_rate(rate: &str) -> Result<Option<u32>> {
    let mut mult: u32 = 1;
    if let Some(i) = rate.find('/') {
        let unit = &rate[i + 1..];
        if unit.is_empty() {
            return Ok(None);
        }
        let is = |name: &str| {
            unit.len() <= name.len()
                && name.as_bytes()[..unit.len()].eq_ignore_ascii_case(unit.as_bytes())
        };
        mult = if is("second") {
            1
        } else if is("minute") {
            60
        } else if is("hour") {
            60 * 60
        } else if is("day") {
            24 * 60 * 60
        } else {
            return Ok(None);
        };
    }
    let r = atoi(rate) as u32;
    if r == 0 {
        return Ok(None);
    }
    let avg = SCALE * mult / r;
    if avg == 0 {
        return Err(Error::param(format!("Rate too fast \"{rate}\"")));
    }
    Ok(Some(avg))
}

/// The unit iptables picks for printing `avg` (index into `RATES`).
fn unit_index(avg: u32) -> usize {
    let mut i = 1;
    while i < RATES.len() {
        let m = RATES[i].1;
        if avg > m || m / avg < m % avg {
            break;
        }
        i += 1;
    }
    i - 1
}

/// What iptables-nft reads back after storing `avg` as rate per unit.
fn nft_round_trip(avg: u32) -> u32 {
    let m = RATES[unit_index(avg)].1;
    let rate = m / avg;
    m / rate
}

impl Limit {
    fn fmt_rate(&self, out: &mut String) {
        if self.avg == 0 {
            out.push_str(" inf");
            return;
        }
        let (name, m) = RATES[unit_index(self.avg)];
        let _ = write!(out, " {}/{}", m / self.avg, name);
    }
}

impl Ext for Limit {
    const NAME: &'static str = "limit";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("limit", O_LIMIT, Arg::Required),
        OptDef::new("limit-burst", O_BURST, Arg::Required),
    ];

    fn new(_: &ParseCtx) -> Self {
        // Default 3/hour.
        Limit {
            avg: SCALE * 60 * 60 / 3,
            burst: DEFAULT_BURST,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            O_LIMIT => {
                let avg = parse_rate(c.arg)?
                    .ok_or_else(|| Error::param(format!("bad rate \"{}\"'", c.arg)))?;
                self.avg = nft_round_trip(avg);
            }
            O_BURST => self.burst = c.uint(0, 10000)? as u32,
            _ => {}
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" --limit");
        self.fmt_rate(out);
        if self.burst != DEFAULT_BURST {
            let _ = write!(out, " --limit-burst {}", self.burst);
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" limit: avg");
        self.fmt_rate(out);
        let _ = write!(out, " burst {}", self.burst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::{match_words, run_words, Opt, Printed};
    use ruleset::{Family, TableKind};

    type Args = &'static [(&'static str, &'static str)];

    fn build(args: &[(&str, &str)]) -> Result<Printed> {
        let opts: Vec<Opt> = args.iter().map(|&(n, a)| (n, false, a)).collect();
        let words = match_words::<Limit>(&opts);
        run_words(Family::Ipv4, TableKind::Filter, "INPUT", &words)
    }

    #[test]
    fn list_and_save() {
        let cases: &[(Args, &str, &str)] = &[
            (&[], " limit: avg 3/hour burst 5", " --limit 3/hour"),
            (
                &[("limit", "1/s")],
                " limit: avg 1/sec burst 5",
                " --limit 1/sec",
            ),
            (
                &[("limit", "10")],
                " limit: avg 10/sec burst 5",
                " --limit 10/sec",
            ),
            (
                &[("limit", "60/MIN")],
                " limit: avg 1/sec burst 5",
                " --limit 1/sec",
            ),
            (
                &[("limit", "2/minute")],
                " limit: avg 2/min burst 5",
                " --limit 2/min",
            ),
            (
                &[("limit", "1000/h")],
                " limit: avg 1000/hour burst 5",
                " --limit 1000/hour",
            ),
            (
                &[("limit", "48/d")],
                " limit: avg 2/hour burst 5",
                " --limit 2/hour",
            ),
            (
                &[("limit", "1000/day")],
                " limit: avg 1000/day burst 5",
                " --limit 1000/day",
            ),
            (
                &[("limit", "7/min")],
                " limit: avg 7/min burst 5",
                " --limit 7/min",
            ),
            (
                &[("limit", "6000/sec")],
                " limit: avg 10000/sec burst 5",
                " --limit 10000/sec",
            ),
            (
                &[("limit", "5/sec"), ("limit-burst", "0")],
                " limit: avg 5/sec burst 0",
                " --limit 5/sec --limit-burst 0",
            ),
            (
                &[("limit-burst", "10")],
                " limit: avg 3/hour burst 10",
                " --limit 3/hour --limit-burst 10",
            ),
        ];
        for (args, list, save) in cases {
            let p = build(args).unwrap();
            assert_eq!(p.list, *list, "{args:?}");
            assert_eq!(p.save, *save, "{args:?}");
        }
    }

    #[test]
    fn errors() {
        let cases: &[(Args, &str)] = &[
            (&[("limit", "0/sec")], "bad rate \"0/sec\"'"),
            (&[("limit", "5/")], "bad rate \"5/\"'"),
            (&[("limit", "5/week")], "bad rate \"5/week\"'"),
            (&[("limit", "5/seconds")], "bad rate \"5/seconds\"'"),
            (&[("limit", "abc")], "bad rate \"abc\"'"),
            (&[("limit", "10001/sec")], "Rate too fast \"10001/sec\""),
            (
                &[("limit-burst", "10001")],
                "limit: bad value for option \"--limit-burst\", or out of range (0-10000).\n",
            ),
            (
                &[("limit", "1/s"), ("limit", "2/s")],
                "limit: option \"--limit\" can only be used once.\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(build(args).unwrap_err().msg, *want, "{args:?}");
        }
    }
}

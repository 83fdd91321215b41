//! `-j RATEEST`: feed the packet into a named rate estimator (iptables'
//! libxt_RATEEST; the `rateest` match reads it). Usable everywhere.
//!
//! The kernel takes the estimator's interval as `2^(interval+2)/4` seconds
//! and its averaging constant as a power of two; iptables derives both from
//! the times given, so several spellings give one rule.

use super::xtypes::{check_plain_word, put_string, strtod_prefix};
use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::hash::{Hash, Hasher};

/// IFNAMSIZ: the name's `char` array, NUL included.
pub const NAME_SIZE: usize = 16;

/// Microseconds per second (iproute's TIME_UNITS_PER_SEC).
const USEC: f64 = 1_000_000.0;

#[derive(Clone, Debug)]
pub struct Rateest {
    /// At most `NAME_SIZE - 1` bytes.
    pub name: String,
    /// -2..=3: the interval is `(1 << (interval + 2)) / 4` seconds.
    pub interval: i8,
    /// 1..=30.
    pub ewma_log: u8,
    /// The times given, in microseconds, until `finish` turns them into
    /// `interval` and `ewma_log` (xtables' udata; not part of the value).
    given: (u32, u32),
}

impl PartialEq for Rateest {
    fn eq(&self, o: &Self) -> bool {
        (&self.name, self.interval, self.ewma_log) == (&o.name, o.interval, o.ewma_log)
    }
}

impl Eq for Rateest {}

impl Hash for Rateest {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (&self.name, self.interval, self.ewma_log).hash(h);
    }
}

const NAME: u8 = 0;
const INTERVAL: u8 = 1;
const EWMALOG: u8 = 2;

/// A time as iproute reads it: a C float with an optional unit (s, sec,
/// secs, ms, msec, msecs, us, usec, usecs; any case); no unit means
/// microseconds. The value is converted to `unsigned int` as C does on
/// x86-64 (through a 64-bit integer, keeping the low 32 bits).
fn parse_time(s: &str) -> Option<u32> {
    let (t, unit) = strtod_prefix(s)?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" => 1.0,
        "s" | "sec" | "secs" => USEC,
        "ms" | "msec" | "msecs" => USEC / 1000.0,
        "us" | "usec" | "usecs" => 1.0,
        _ => return None,
    };
    let t = t * scale;
    Some(if t.is_finite() && t.abs() < 9.2e18 {
        t as i64 as u32
    } else {
        0
    })
}

/// RATEEST_print_time: seconds or milliseconds with one decimal, else
/// whole microseconds.
fn print_time(out: &mut String, time: u32) {
    use std::fmt::Write;
    let t = f64::from(time);
    let _ = if t >= USEC {
        write!(out, " {:.1}s", t / USEC)
    } else if t >= USEC / 1000.0 {
        write!(out, " {:.1}ms", t / (USEC / 1000.0))
    } else {
        write!(out, " {time}us")
    };
}

impl Rateest {
    /// The interval and averaging time the kernel values stand for, in
    /// microseconds (with C's 32-bit unsigned arithmetic).
    fn times(&self) -> (u32, u32) {
        let interval = (1_000_000u32 << (self.interval + 2) as u32) / 4;
        (interval, interval.wrapping_mul(1u32 << self.ewma_log))
    }

    fn print(&self, out: &mut String, prefix: &str) {
        let (interval, ewma) = self.times();
        out.push_str(&format!(" {prefix}name {}", self.name));
        out.push_str(&format!(" {prefix}interval"));
        print_time(out, interval);
        out.push_str(&format!(" {prefix}ewmalog"));
        print_time(out, ewma);
    }
}

impl Ext for Rateest {
    const NAME: &'static str = "RATEEST";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("rateest-name", NAME, Arg::Required).mand(),
        OptDef::new("rateest-interval", INTERVAL, Arg::Required).mand(),
        OptDef::new("rateest-ewmalog", EWMALOG, Arg::Required).mand(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Rateest {
            name: String::new(),
            interval: 0,
            ewma_log: 0,
            given: (0, 0),
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            NAME => self.name = put_string(c.arg, NAME_SIZE),
            INTERVAL => {
                self.given.0 = parse_time(c.arg).ok_or_else(|| {
                    Error::param(format!("RATEEST: bad interval value \"{}\"", c.arg))
                })?
            }
            _ => {
                self.given.1 = parse_time(c.arg).ok_or_else(|| {
                    Error::param(format!("RATEEST: bad ewmalog value \"{}\"", c.arg))
                })?
            }
        }
        Ok(())
    }

    /// RATEEST_final_check, which runs before the mandatory-option checks
    /// (so a rule without any option fails on the ewmalog range).
    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        let (interval, ewma) = self.given;
        let i = (0..=5u32)
            .find(|&i| interval <= (1 << i) * 250_000)
            .ok_or_else(|| Error::param("RATEEST: interval value is too large"))?;
        self.interval = i as i8 - 2;
        // The first power whose averaging time exceeds the one asked for,
        // less one.
        let e = (1..=30u32)
            .find(|&e| {
                let w = 1.0 - 1.0 / f64::from(1u32 << e);
                f64::from(interval) / -w.ln() > f64::from(ewma)
            })
            .map_or(31, |e| e - 1);
        if e == 0 || e >= 31 {
            return Err(Error::param("RATEEST: ewmalog value is out of range"));
        }
        self.ewma_log = e as u8;
        self.given = (0, 0);
        if seen & (1 << NAME) != 0 {
            check_plain_word(Self::NAME, "rateest-name", &self.name)?;
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.print(out, "--rateest-");
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        self.print(out, "");
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, ok, rule};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // interval, ewmalog as given; as printed
        let cases: &[(&str, &str, &str, &str)] = &[
            ("250.0ms", "500.0ms", "250.0ms", "500.0ms"),
            ("250ms", "0.5s", "250.0ms", "500.0ms"),
            ("1s", "8s", "1.0s", "8.0s"),
            ("250000", "4000000usec", "250.0ms", "4.0s"),
            ("0.3S", "10sec", "500.0ms", "16.0s"),
            ("8s", "1000s", "8.0s", "512.0s"),
            ("100ms", "1s", "250.0ms", "2.0s"),
            // The averaging uses the interval as given, not as rounded.
            ("1e-3s", "1s", "250.0ms", "128.0s"),
        ];
        for (interval, ewma, pi, pe) in cases {
            let r = format!(
                "-j RATEEST --rateest-name RE1 --rateest-interval {interval} --rateest-ewmalog {ewma}"
            );
            let got = ok(&r);
            assert_eq!(
                got.save,
                format!(" --rateest-name RE1 --rateest-interval {pi} --rateest-ewmalog {pe}"),
                "{r}"
            );
            assert_eq!(
                got.list,
                format!(" name RE1 interval {pi} ewmalog {pe}"),
                "{r}"
            );
            assert_eq!(got.list_numeric, got.list, "{r}");
        }
        // Spellings of one estimator are one rule.
        let a = rule(
            Family::Ipv4,
            TableKind::Filter,
            "INPUT",
            "-j RATEEST --rateest-name x --rateest-interval 250ms --rateest-ewmalog 0.5s",
        );
        let b = rule(
            Family::Ipv4,
            TableKind::Filter,
            "INPUT",
            "-j RATEEST --rateest-name x --rateest-interval 0.2s --rateest-ewmalog 400ms",
        );
        assert_eq!(a, b);
        // The name is cut to 15 bytes.
        let got = ok("-j RATEEST --rateest-name abcdefghijklmnopq --rateest-interval 1s --rateest-ewmalog 2s");
        assert!(got.save.starts_with(" --rateest-name abcdefghijklmno --"));
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str)] = &[
            ("-j RATEEST", "RATEEST: ewmalog value is out of range"),
            (
                "-j RATEEST --rateest-interval 1s --rateest-ewmalog 2s",
                "RATEEST: option \"--rateest-name\" must be specified\n",
            ),
            (
                "-j RATEEST --rateest-name x --rateest-interval 1m --rateest-ewmalog 2s",
                "RATEEST: bad interval value \"1m\"",
            ),
            (
                "-j RATEEST --rateest-name x --rateest-interval 1s --rateest-ewmalog s",
                "RATEEST: bad ewmalog value \"s\"",
            ),
            (
                "-j RATEEST --rateest-name x --rateest-interval 9s --rateest-ewmalog 20s",
                "RATEEST: interval value is too large",
            ),
            (
                "-j RATEEST --rateest-name x --rateest-interval -1 --rateest-ewmalog 2s",
                "RATEEST: interval value is too large",
            ),
            (
                "-j RATEEST --rateest-name \"\" --rateest-interval 1s --rateest-ewmalog 2s",
                "RATEEST: \"--rateest-name \" would not read back from the saved rule; nfkeeper cannot keep this rule",
            ),
            (
                "-j RATEEST --rateest-name x --rateest-interval 1s --rateest-ewmalog 1s",
                "RATEEST: ewmalog value is out of range",
            ),
        ];
        for (r, want) in cases {
            assert_eq!(err(r), *want, "{r}");
        }
    }
}

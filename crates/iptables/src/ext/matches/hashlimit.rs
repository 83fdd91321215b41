//! `-m hashlimit`: per-flow rate limits (iptables' libxt_hashlimit,
//! revision 3). The value is the kernel's `hashlimit_cfg3` after iptables'
//! own adjustments (byte rates as costs, the burst in units of the rate,
//! the default expiry), which is also what its printers read.

use crate::error::{Error, Result};
use crate::ext::matches::connlimit::parse_plenmask;
use crate::ext::matches::helper::cut;
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

pub const HASH_DIP: u32 = 1 << 0;
pub const HASH_DPT: u32 = 1 << 1;
pub const HASH_SIP: u32 = 1 << 2;
pub const HASH_SPT: u32 = 1 << 3;
pub const INVERT: u32 = 1 << 4;
pub const BYTES: u32 = 1 << 5;
pub const RATE_MATCH: u32 = 1 << 6;
const HASH_ANY: u32 = HASH_DIP | HASH_DPT | HASH_SIP | HASH_SPT;

/// XT_HASHLIMIT_SCALE_v2: `avg` units per second.
const SCALE: u64 = 1_000_000;
const BYTE_SHIFT: u32 = 4;
const DEFAULT_BURST: u64 = 5;
const BURST_MAX: u64 = 1_000_000;
const BYTE_EXPIRE: u32 = 15;
const BYTE_EXPIRE_BURST: u32 = 60;
/// Milliseconds.
const DEFAULT_GC_INTERVAL: u32 = 1000;
/// `name[NAME_MAX]` less the NUL.
pub const NAME_MAX: usize = 254;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Hashlimit {
    pub name: String,
    /// Packets: interval between packets in 1/1000000 s; bytes (`BYTES`):
    /// the cost of one byte unit.
    pub avg: u64,
    /// Packets, or (bytes) multiples of the rate; 0 for none.
    pub burst: u64,
    /// HASH_* | INVERT | BYTES | RATE_MATCH.
    pub mode: u32,
    pub size: u32,
    pub max: u32,
    /// Milliseconds.
    pub gc_interval: u32,
    /// Milliseconds.
    pub expire: u32,
    /// Seconds (rate-match only; 0 otherwise).
    pub interval: u32,
    pub srcmask: u8,
    pub dstmask: u8,
    /// Parse state: seconds per unit of the rate given (iptables' udata),
    /// which sets the default expiry; 0 once the rule is read, so that
    /// finished values compare by what the kernel gets.
    unit: u32,
}

const UPTO: u8 = 0;
const ABOVE: u8 = 1;
const MODE: u8 = 3;
const SRCMASK: u8 = 4;
const DSTMASK: u8 = 5;
const NAME: u8 = 6;
const BURST: u8 = 7;
const SIZE: u8 = 8;
const HMAX: u8 = 9;
const GCINT: u8 = 10;
const EXPIRE: u8 = 11;
const O_RATEMATCH: u8 = 12;
const INTERVAL: u8 = 13;

/// Print units, largest first.
const RATES: &[(&str, u64)] = &[
    ("day", SCALE * 24 * 60 * 60),
    ("hour", SCALE * 60 * 60),
    ("min", SCALE * 60),
    ("sec", SCALE),
];
const UNITS: &[(&str, u64)] = &[("m", 1024 * 1024), ("k", 1024), ("", 1)];

/// C's atoll: white space, a sign, digits (saturating).
fn atoll(s: &str) -> i64 {
    match opt::c_strtoul(s, 10) {
        None => 0,
        Some((_, true, _)) => {
            if s.trim_start().starts_with('-') {
                i64::MIN
            } else {
                i64::MAX
            }
        }
        Some((v, false, _)) => v as i64,
    }
}

fn factor(c: Option<u8>) -> u64 {
    match c {
        Some(b'm') => 1024 * 1024,
        Some(b'k') => 1024,
        _ => 1,
    }
}

fn cost_to_bytes(cost: u64) -> u64 {
    let r = (u32::MAX as u64)
        .checked_div(cost)
        .unwrap_or(u32::MAX as u64);
    r.wrapping_sub(1) << BYTE_SHIFT
}

fn bytes_to_cost(bytes: u64) -> u64 {
    let r = (bytes >> BYTE_SHIFT) as u32;
    u32::MAX as u64 / (r as u64 + 1)
}

/// `N[k|m]b/s`: Some((cost, seconds per expiry unit)) or None if it is not
/// a byte rate.
fn parse_bytes(rate: &str) -> Result<Option<u64>> {
    let Some(at) = rate.find("b/s").filter(|&i| i > 0) else {
        return Ok(None);
    };
    let r = atoll(rate) as u64;
    if r == 0 {
        return Ok(None);
    }
    let cost = bytes_to_cost(r.wrapping_mul(factor(rate.as_bytes().get(at - 1).copied())));
    if cost == 0 {
        return Err(Error::param(format!("Rate too high \"{rate}\"")));
    }
    Ok(Some(cost))
}

/// `N[/second|/minute|/hour|/day]` (any prefix of the unit): Some((avg,
/// seconds per unit)).
fn parse_rate(rate: &str) -> Result<Option<(u64, u32)>> {
    let mut mult = 1u32;
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
            3600
        } else if is("day") {
            86400
        } else {
            return Ok(None);
        };
    }
    let r = atoll(rate) as u64;
    if r == 0 {
        return Ok(None);
    }
    let avg = SCALE * mult as u64 / r;
    if avg == 0 {
        return Err(Error::param(format!("Rate too fast \"{rate}\"")));
    }
    Ok(Some((avg, mult)))
}

fn parse_burst(s: &str) -> Result<u64> {
    let bad = || {
        Error::param(format!(
            "bad value for option \"--hashlimit-burst\", or out of range (1-{BURST_MAX})."
        ))
    };
    if s.trim_start().starts_with('-') {
        return Err(bad());
    }
    let (v, rest) = opt::strtoul(s, 0)
        .filter(|(v, _)| *v >= 1)
        .ok_or_else(bad)?;
    if rest.is_empty() && v > BURST_MAX {
        return Err(bad());
    }
    Ok(v.wrapping_mul(factor(rest.as_bytes().first().copied())))
}

fn parse_mode(s: &str) -> Option<u32> {
    let mut mode = 0;
    for tok in s.split([',', '|']).filter(|t| !t.is_empty()) {
        mode |= match tok {
            "dstip" => HASH_DIP,
            "srcip" => HASH_SIP,
            "srcport" => HASH_SPT,
            "dstport" => HASH_DPT,
            _ => return None,
        };
    }
    Some(mode)
}

/// XTTYPE_PLEN: a prefix length, or a mask whose length is taken (255 for
/// a non-contiguous one).
fn parse_plen(c: &Call, v6: bool) -> Result<u8> {
    let m = parse_plenmask(c.ext, c.opt.name, c.arg, v6)?;
    let m = &m[..if v6 { 16 } else { 4 }];
    Ok(opt::mask_prefix(m).map_or(255, |n| n as u8))
}

/// ` N/unit`; returns the unit in milliseconds (the default expiry).
fn put_rate(out: &mut String, period: u64) -> u64 {
    if period == 0 {
        out.push_str(" inf");
        return 0;
    }
    let mut i = 1;
    while i < RATES.len() {
        let m = RATES[i].1;
        if period > m || m / period < m % period {
            break;
        }
        i += 1;
    }
    let (name, m) = RATES[i - 1];
    let _ = write!(out, " {}/{name}", m / period);
    m / SCALE * 1000
}

/// ` N[k|m]b/s[ PREFIXburst N[k|m]b]`; returns the default expiry (ms).
fn put_bytes(out: &mut String, avg: u64, burst: u64, prefix: &str) -> u64 {
    let mut r = cost_to_bytes(avg);
    let i = (0..UNITS.len() - 1)
        .find(|&i| {
            let t = UNITS[i].1;
            r >= t && bytes_to_cost(r & !(t - 1)) == avg
        })
        .unwrap_or(UNITS.len() - 1);
    let _ = write!(out, " {}{}b/s", r / UNITS[i].1, UNITS[i].0);
    if burst == 0 {
        return BYTE_EXPIRE as u64 * 1000;
    }
    r = r.wrapping_mul(burst);
    let i = (0..UNITS.len() - 1)
        .find(|&i| r >= UNITS[i].1)
        .unwrap_or(UNITS.len() - 1);
    let _ = write!(out, " {prefix}burst {}{}b", r / UNITS[i].1, UNITS[i].0);
    BYTE_EXPIRE_BURST as u64 * 1000
}

fn put_mode(out: &mut String, mode: u32, sep: char) {
    let names: Vec<&str> = [
        (HASH_SIP, "srcip"),
        (HASH_SPT, "srcport"),
        (HASH_DIP, "dstip"),
        (HASH_DPT, "dstport"),
    ]
    .iter()
    .filter(|(b, _)| mode & b != 0)
    .map(|(_, n)| *n)
    .collect();
    out.push(' ');
    out.push_str(&names.join(&sep.to_string()));
}

impl Hashlimit {
    /// Everything after the rate, in save (`--hashlimit-` prefixed) or `-L`
    /// form.
    fn put_rest(&self, out: &mut String, save: bool, quantum: u64, v6: bool) {
        let p = if save { "--hashlimit-" } else { "" };
        if self.mode & HASH_ANY != 0 {
            let _ = write!(out, " {p}mode");
            put_mode(out, self.mode, if save { ',' } else { '-' });
        }
        if save {
            let _ = write!(out, " --hashlimit-name {}", self.name);
        }
        let dmask = if v6 { 128 } else { 32 };
        let pairs = [
            (self.size != 0, "htable-size", self.size),
            (self.max != 0, "htable-max", self.max),
            (
                self.gc_interval != DEFAULT_GC_INTERVAL,
                "htable-gcinterval",
                self.gc_interval,
            ),
            (self.expire as u64 != quantum, "htable-expire", self.expire),
            (self.srcmask != dmask, "srcmask", self.srcmask as u32),
            (self.dstmask != dmask, "dstmask", self.dstmask as u32),
        ];
        for (on, word, v) in pairs {
            if on {
                let _ = write!(out, " {p}{word} {v}");
            }
        }
        if self.mode & RATE_MATCH != 0 {
            let _ = write!(out, " {p}rate-match");
            if self.interval != 1 {
                let _ = write!(out, " {p}rate-interval {}", self.interval);
            }
        }
    }
}

impl Ext for Hashlimit {
    const NAME: &'static str = "hashlimit";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("hashlimit-upto", UPTO, Arg::Required)
            .inv()
            .excl(1 << ABOVE),
        OptDef::new("hashlimit-above", ABOVE, Arg::Required)
            .inv()
            .excl(1 << UPTO),
        OptDef::new("hashlimit", UPTO, Arg::Required)
            .inv()
            .excl(1 << ABOVE),
        OptDef::new("hashlimit-srcmask", SRCMASK, Arg::Required),
        OptDef::new("hashlimit-dstmask", DSTMASK, Arg::Required),
        OptDef::new("hashlimit-burst", BURST, Arg::Required),
        OptDef::new("hashlimit-htable-size", SIZE, Arg::Required),
        OptDef::new("hashlimit-htable-max", HMAX, Arg::Required),
        OptDef::new("hashlimit-htable-gcinterval", GCINT, Arg::Required),
        OptDef::new("hashlimit-htable-expire", EXPIRE, Arg::Required),
        OptDef::new("hashlimit-mode", MODE, Arg::Required),
        OptDef::new("hashlimit-name", NAME, Arg::Required).mand(),
        OptDef::new("hashlimit-rate-match", O_RATEMATCH, Arg::None),
        OptDef::new("hashlimit-rate-interval", INTERVAL, Arg::Required),
    ];

    fn new(ctx: &ParseCtx) -> Self {
        let dmask = if ctx.is_v6() { 128 } else { 32 };
        Hashlimit {
            name: String::new(),
            avg: 0,
            burst: DEFAULT_BURST,
            mode: 0,
            size: 0,
            max: 0,
            gc_interval: DEFAULT_GC_INTERVAL,
            expire: 0,
            interval: 0,
            srcmask: dmask,
            dstmask: dmask,
            unit: 0,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let bad = |opt: &str| {
            Error::param(format!(
                "hashlimit: Bad value for \"{opt}\" option: \"{}\"",
                c.arg
            ))
        };
        match c.opt.id {
            UPTO | ABOVE => {
                if (c.opt.id == ABOVE) != c.inv {
                    self.mode |= INVERT;
                }
                let opt = if c.opt.id == UPTO {
                    "--hashlimit-upto"
                } else {
                    "--hashlimit-above"
                };
                if let Some(cost) = parse_bytes(c.arg)? {
                    self.mode |= BYTES;
                    self.avg = cost;
                    self.unit = BYTE_EXPIRE;
                } else {
                    let (avg, unit) = parse_rate(c.arg)?.ok_or_else(|| bad(opt))?;
                    self.avg = avg;
                    self.unit = unit;
                }
            }
            MODE => self.mode |= parse_mode(c.arg).ok_or_else(|| bad("--hashlimit-mode"))?,
            SRCMASK => self.srcmask = parse_plen(c, c.ctx.is_v6())?,
            DSTMASK => self.dstmask = parse_plen(c, c.ctx.is_v6())?,
            NAME => {
                if c.arg.is_empty() {
                    return Err(Error::param(
                        "Argument must have a minimum length of 1 characters\n",
                    ));
                }
                self.name = cut(c.arg, NAME_MAX);
            }
            BURST => self.burst = parse_burst(c.arg)?,
            SIZE => self.size = c.uint(0, u32::MAX as u64)? as u32,
            HMAX => self.max = c.uint(0, u32::MAX as u64)? as u32,
            GCINT => self.gc_interval = c.uint(0, u32::MAX as u64)? as u32,
            EXPIRE => self.expire = c.uint(0, u32::MAX as u64)? as u32,
            O_RATEMATCH => self.mode |= RATE_MATCH,
            _ => {
                // atoi: the C int of atoll.
                let r = atoll(c.arg) as i32;
                if r <= 0 {
                    return Err(bad("--hashlimit-rate-interval"));
                }
                self.interval = r as u32;
            }
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        if seen & ((1 << UPTO) | (1 << ABOVE)) == 0 {
            return Err(Error::param("You have to specify --hashlimit"));
        }
        let mult = std::mem::take(&mut self.unit);
        if seen & (1 << EXPIRE) == 0 {
            self.expire = mult.wrapping_mul(1000);
        }
        if self.mode & BYTES != 0 {
            let mut burst = 0u32;
            if seen & (1 << BURST) != 0 {
                let unit = cost_to_bytes(self.avg);
                if self.burst < unit {
                    return Err(Error::param(format!(
                        "burst cannot be smaller than {unit}b"
                    )));
                }
                let b = self.burst as u32;
                burst = (b as u64 / unit) as u32;
                if self.burst % unit != 0 {
                    burst = burst.wrapping_add(1);
                }
                if seen & (1 << EXPIRE) == 0 {
                    self.expire = BYTE_EXPIRE_BURST * 1000;
                }
            }
            self.burst = burst as u64;
        } else if self.burst > BURST_MAX {
            return Err(Error::param(format!(
                "bad value for option \"--hashlimit-burst\", or out of range (1-{BURST_MAX})."
            )));
        }
        if seen & (1 << O_RATEMATCH) != 0 {
            if self.mode & BYTES == 0 {
                self.avg /= mult as u64;
            }
            if self.interval == 0 {
                self.interval = if self.mode & BYTES != 0 { 1 } else { mult };
            }
        }
        self.kernel_checks(ctx)
    }

    fn save(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(if self.mode & INVERT != 0 {
            " --hashlimit-above"
        } else {
            " --hashlimit-upto"
        });
        let quantum = if self.mode & BYTES != 0 {
            put_bytes(out, self.avg, self.burst, "--hashlimit-")
        } else {
            let q = put_rate(out, self.avg);
            let _ = write!(out, " --hashlimit-burst {}", self.burst);
            q
        };
        self.put_rest(out, true, quantum, ctx.is_v6());
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(if self.mode & INVERT != 0 {
            " limit: above"
        } else {
            " limit: up to"
        });
        let quantum = if self.mode & BYTES != 0 {
            put_bytes(out, self.avg, self.burst, "")
        } else {
            let period = if self.interval != 0 {
                self.avg.wrapping_mul(self.interval as u64)
            } else {
                self.avg
            };
            let q = put_rate(out, period);
            let _ = write!(out, " burst {}", self.burst);
            q
        };
        self.put_rest(out, false, quantum, ctx.is_v6());
    }
}

impl Hashlimit {
    /// The kernel's checks (hashlimit_mt_check_common) that a parsed rule
    /// can fail.
    fn kernel_checks(&self, ctx: &ParseCtx) -> Result<()> {
        let plen = if ctx.is_v6() { 128 } else { 32 };
        if self.gc_interval == 0 || self.expire == 0 {
            return Err(opt::einval(
                "hashlimit match: --hashlimit-htable-gcinterval and --hashlimit-htable-expire must not be 0",
            ));
        }
        if self.srcmask > plen || self.dstmask > plen {
            return Err(opt::einval(&format!(
                "hashlimit match: a mask longer than {plen} bits"
            )));
        }
        if self.mode & RATE_MATCH != 0 {
            if self.avg == 0 || self.avg > u32::MAX as u64 {
                return Err(Error::op(
                    "Numerical result out of range: hashlimit match: invalid rate.",
                ));
            }
        } else if self.mode & BYTES != 0 {
            // user2credits_byte(avg) is 0 for a cost of 0 or 1.
            if self.avg <= 1 {
                return Err(opt::einval("hashlimit match: overflow, rate too high"));
            }
        } else if self.burst == 0 || self.avg.checked_mul(self.burst).is_none() {
            return Err(Error::op(format!(
                "Numerical result out of range: hashlimit match: overflow, try lower: {}/{}.",
                self.avg, self.burst
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, ok, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // (options, save, -L)
        let cases = [
            (
                "--hashlimit-above 1/sec --hashlimit-burst 5 --hashlimit-name mini1",
                " --hashlimit-above 1/sec --hashlimit-burst 5 --hashlimit-name mini1",
                " limit: above 1/sec burst 5",
            ),
            (
                "--hashlimit-upto 1/day --hashlimit-burst 1 --hashlimit-name mini1",
                " --hashlimit-upto 1/day --hashlimit-burst 1 --hashlimit-name mini1",
                " limit: up to 1/day burst 1",
            ),
            (
                "! --hashlimit-above 60/min --hashlimit-name x --hashlimit-mode dstip|srcport,srcip",
                " --hashlimit-upto 1/sec --hashlimit-burst 5 --hashlimit-mode srcip,srcport,dstip --hashlimit-name x --hashlimit-htable-expire 60000",
                " limit: up to 1/sec burst 5 mode srcip-srcport-dstip htable-expire 60000",
            ),
            (
                "--hashlimit 1000000/s --hashlimit-name a --hashlimit-htable-size 10 --hashlimit-htable-max 2000 --hashlimit-htable-gcinterval 60000 --hashlimit-htable-expire 2000 --hashlimit-srcmask 24 --hashlimit-dstmask 255.255.0.0",
                " --hashlimit-upto 1000000/sec --hashlimit-burst 5 --hashlimit-name a --hashlimit-htable-size 10 --hashlimit-htable-max 2000 --hashlimit-htable-gcinterval 60000 --hashlimit-htable-expire 2000 --hashlimit-srcmask 24 --hashlimit-dstmask 16",
                " limit: up to 1000000/sec burst 5 htable-size 10 htable-max 2000 htable-gcinterval 60000 htable-expire 2000 srcmask 24 dstmask 16",
            ),
            (
                "--hashlimit-upto 4kb/s --hashlimit-burst 400kb --hashlimit-name mini5",
                " --hashlimit-upto 4kb/s --hashlimit-burst 400kb --hashlimit-name mini5",
                " limit: up to 4kb/s burst 400kb",
            ),
            (
                "--hashlimit-upto 10mb/s --hashlimit-name mini6",
                " --hashlimit-upto 10mb/s --hashlimit-name mini6",
                " limit: up to 10mb/s",
            ),
            (
                "--hashlimit-upto 123456b/s --hashlimit-burst 1mb --hashlimit-name mini7",
                " --hashlimit-upto 123456b/s --hashlimit-burst 1mb --hashlimit-name mini7",
                " limit: up to 123456b/s burst 1mb",
            ),
            (
                "--hashlimit-upto 40/sec --hashlimit-burst 20 --hashlimit-mode srcip --hashlimit-name rate3 --hashlimit-rate-match --hashlimit-rate-interval 10",
                " --hashlimit-upto 40/sec --hashlimit-burst 20 --hashlimit-mode srcip --hashlimit-name rate3 --hashlimit-rate-match --hashlimit-rate-interval 10",
                " limit: up to 4/sec burst 20 mode srcip rate-match rate-interval 10",
            ),
            (
                "--hashlimit-upto 40mb/s --hashlimit-mode srcip --hashlimit-name rate2 --hashlimit-rate-match",
                " --hashlimit-upto 40mb/s --hashlimit-mode srcip --hashlimit-name rate2 --hashlimit-rate-match",
                " limit: up to 40mb/s mode srcip rate-match",
            ),
        ];
        for (opts, s, l) in cases {
            let p = ok(&format!("-m hashlimit {opts}"));
            assert_eq!((p.save.as_str(), p.list.as_str()), (s, l), "{opts}");
            assert_eq!(p.list_numeric, p.list, "{opts}");
        }
        let p = ok_in(
            Family::Ipv6,
            TableKind::Filter,
            "INPUT",
            "-m hashlimit --hashlimit-upto 5/hour --hashlimit-name v6 --hashlimit-srcmask 64",
        );
        assert_eq!(
            p.save,
            " --hashlimit-upto 5/hour --hashlimit-burst 5 --hashlimit-name v6 --hashlimit-srcmask 64"
        );
    }

    #[test]
    fn errors() {
        let cases = [
            ("-m hashlimit", "You have to specify --hashlimit"),
            ("-m hashlimit --hashlimit-name mini1", "You have to specify --hashlimit"),
            (
                "-m hashlimit --hashlimit-upto 1/sec",
                "hashlimit: option \"--hashlimit-name\" must be specified\n",
            ),
            (
                "-m hashlimit --hashlimit 1/week --hashlimit-name a",
                "hashlimit: Bad value for \"--hashlimit-upto\" option: \"1/week\"",
            ),
            (
                "-m hashlimit --hashlimit-above 0 --hashlimit-name a",
                "hashlimit: Bad value for \"--hashlimit-above\" option: \"0\"",
            ),
            (
                "-m hashlimit --hashlimit-upto 2000000/s --hashlimit-name a",
                "Rate too fast \"2000000/s\"",
            ),
            (
                "-m hashlimit --hashlimit-upto 1/s --hashlimit-name a --hashlimit-mode srcmac",
                "hashlimit: Bad value for \"--hashlimit-mode\" option: \"srcmac\"",
            ),
            (
                "-m hashlimit --hashlimit-upto 1/s --hashlimit-name a --hashlimit-burst 1000001",
                "bad value for option \"--hashlimit-burst\", or out of range (1-1000000).",
            ),
            (
                "-m hashlimit --hashlimit-upto 1/s --hashlimit-name a --hashlimit-burst 1000k",
                "bad value for option \"--hashlimit-burst\", or out of range (1-1000000).",
            ),
            (
                "-m hashlimit --hashlimit-upto 96b/s --hashlimit-burst 5 --hashlimit-name a",
                "burst cannot be smaller than 96b",
            ),
            (
                "-m hashlimit --hashlimit-upto 1/s --hashlimit-above 1/s --hashlimit-name a",
                "hashlimit: option \"--hashlimit-upto\" cannot be used together with \"--hashlimit-above\".\n",
            ),
            (
                "-m hashlimit --hashlimit-upto 1/s --hashlimit-name a --hashlimit-rate-interval 0",
                "hashlimit: Bad value for \"--hashlimit-rate-interval\" option: \"0\"",
            ),
            (
                "-m hashlimit --hashlimit-upto 1/s --hashlimit-name \"\"",
                "Argument must have a minimum length of 1 characters\n",
            ),
            (
                "-m hashlimit --hashlimit-upto 1/s --hashlimit-name a --hashlimit-htable-expire 0",
                "Invalid argument: hashlimit match: --hashlimit-htable-gcinterval and --hashlimit-htable-expire must not be 0.",
            ),
            (
                "-m hashlimit --hashlimit-upto 1/s --hashlimit-name a --hashlimit-srcmask 255.0.255.0",
                "Invalid argument: hashlimit match: a mask longer than 32 bits.",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

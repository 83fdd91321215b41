//! `-m time`: date, daytime, weekday and day-of-month windows (iptables'
//! libxt_time). Dates are seconds since 1970 UTC as the kernel gets them.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Time {
    pub date_start: u32,
    pub date_stop: u32,
    /// Seconds since midnight.
    pub daytime_start: u32,
    pub daytime_stop: u32,
    /// Bit N for day N of the month (1..=31).
    pub monthdays: u32,
    /// Bit N for weekday N (1 Monday ..= 7 Sunday).
    pub weekdays: u8,
    /// XT_TIME_LOCAL_TZ 1 (`--kerneltz`), XT_TIME_CONTIGUOUS 2.
    pub flags: u8,
}

pub const LOCAL_TZ: u8 = 1;
pub const CONTIGUOUS: u8 = 2;
pub const ALL_MONTHDAYS: u32 = 0xffff_fffe;
pub const ALL_WEEKDAYS: u8 = 0xfe;
pub const MAX_DAYTIME: u32 = 24 * 60 * 60 - 1;
/// The default `date_stop` (INT_MAX).
pub const DATE_STOP_DEFAULT: u32 = i32::MAX as u32;

const DATE_START: u8 = 0;
const DATE_STOP: u8 = 1;
const TIME_START: u8 = 2;
const TIME_STOP: u8 = 3;
const O_CONTIGUOUS: u8 = 4;
const MONTHDAYS: u8 = 5;
const WEEKDAYS: u8 = 6;
const O_LOCAL_TZ: u8 = 7;
const UTC: u8 = 8;
const KERNEL_TZ: u8 = 9;

const WEEK_DAYS: [&str; 8] = ["", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// Days since 1970-01-01 of a proleptic Gregorian date (month 1..=12).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// (year, month, day) of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// One component as `strtoul(s, &e, 10)` reads it: the value (saturated)
/// and the rest (all of `s` when no digit was read).
fn component(s: &str) -> (u64, &str) {
    match opt::c_strtoul(s, 10) {
        Some((v, _, rest)) => (v, rest),
        None => (0, s),
    }
}

/// `YYYY[-MM[-DD[Thh[:mm[:ss]]]]]` in UTC, normalised as mktime does.
fn parse_date(os: &str) -> Result<u32> {
    let bad = || {
        Error::param(format!(
            "Invalid date \"{os}\" specified. Should be YYYY[-MM[-DD[Thh[:mm[:ss]]]]]"
        ))
    };
    // (separator after the component, maximum); the year has a minimum too.
    let fields: [(char, u64); 6] = [
        ('-', 2038),
        ('-', 12),
        ('T', 31),
        (':', 23),
        (':', 59),
        ('\0', 59),
    ];
    let mut vals = [1970u64, 1, 1, 0, 0, 0];
    let mut s = os;
    for (i, (sep, max)) in fields.iter().enumerate() {
        let (v, rest) = component(s);
        let sep_ok = rest.is_empty() || rest.starts_with(*sep);
        if !sep_ok || v > *max || (i == 0 && v < 1970) {
            return Err(bad());
        }
        vals[i] = v;
        if rest.is_empty() {
            break;
        }
        s = &rest[1..];
    }
    let [y, mo, d, h, mi, sec] = vals.map(|v| v as i64);
    // mktime normalises month 0 and day 0 into the previous month/year.
    let (y, mo) = if mo == 0 { (y - 1, 12) } else { (y, mo) };
    let t = (days_from_civil(y, mo, 1) + d - 1) * 86400 + h * 3600 + mi * 60 + sec;
    if t < 0 {
        return Err(Error::other("mktime returned an error"));
    }
    Ok(t as u32)
}

/// `hh:mm[:ss]`; the message quotes the part being read, as iptables does.
fn parse_daytime(arg: &str) -> Result<u32> {
    let bad = |s: &str| {
        Error::param(format!(
            "invalid time \"{s}\" specified, should be hh:mm[:ss] format and within the boundaries"
        ))
    };
    let (h, rest) = component(arg);
    if !rest.starts_with(':') || h > 23 {
        return Err(bad(arg));
    }
    let s = &rest[1..];
    let (m, rest) = component(s);
    if !(rest.is_empty() || rest.starts_with(':')) || m > 59 {
        return Err(bad(s));
    }
    let mut sec = 0;
    if let Some(s) = rest.strip_prefix(':') {
        let (v, rest) = component(s);
        if !rest.is_empty() || v > 59 {
            return Err(bad(s));
        }
        sec = v;
    }
    Ok((h * 3600 + m * 60 + sec) as u32)
}

/// iptables' my_strseg: comma-separated pieces, each cut to `max` bytes
/// (its buffer less the NUL); nothing at all for an empty string.
fn pieces(arg: &str, max: usize) -> Vec<&str> {
    if arg.is_empty() {
        return Vec::new();
    }
    let mut v: Vec<&str> = arg.split(',').map(|p| &p[..p.len().min(max)]).collect();
    // A trailing comma ends the list without an empty piece.
    if arg.ends_with(',') {
        v.pop();
    }
    v
}

/// `1 << i` as the x86 shift iptables runs (count taken modulo 32).
fn bit(i: u64) -> u32 {
    1u32.wrapping_shl(i as u32)
}

fn parse_monthdays(arg: &str) -> Result<u32> {
    let mut ret = 0u32;
    for day in pieces(arg, 2) {
        let (i, rest) = opt::c_strtoul(day, 0).map_or((0, day), |(v, _, r)| (v, r));
        if !(rest.is_empty() || rest.starts_with(',')) || i > 31 {
            return Err(Error::param(format!(
                "{day} is not a valid day for --monthdays"
            )));
        }
        ret |= bit(i);
    }
    Ok(ret)
}

fn parse_weekdays(arg: &str) -> Result<u8> {
    let mut ret = 0u32;
    for day in pieces(arg, 3) {
        let (i, rest) = opt::c_strtoul(day, 0).map_or((0, day), |(v, _, r)| (v, r));
        if rest.is_empty() {
            if i == 0 {
                return Err(Error::param("No, the week does NOT begin with Sunday."));
            }
            ret |= bit(i);
            continue;
        }
        let mut valid = false;
        for (n, name) in WEEK_DAYS.iter().enumerate().skip(1) {
            let a = &day.as_bytes()[..day.len().min(2)];
            if a == &name.as_bytes()[..a.len()] && day.len() >= 2 {
                ret |= 1 << n;
                valid = true;
            }
        }
        if !valid {
            return Err(Error::param(format!("{day} is not a valid day specifier")));
        }
    }
    Ok(ret as u8)
}

fn put_date(out: &mut String, t: u32, sep: char) {
    let t = t as i64;
    let (y, mo, d) = civil_from_days(t.div_euclid(86400));
    let s = t.rem_euclid(86400);
    let _ = write!(
        out,
        "{y:04}-{mo:02}-{d:02}{sep}{:02}:{:02}:{:02}",
        s / 3600,
        s / 60 % 60,
        s % 60
    );
}

fn put_daytime(out: &mut String, t: u32) {
    let _ = write!(out, "{:02}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60);
}

fn put_monthdays(out: &mut String, mask: u32, human: bool) {
    out.push(' ');
    let mut n = 0;
    for i in 1..=31u32 {
        if mask & (1 << i) != 0 {
            if n > 0 {
                out.push(',');
            }
            n += 1;
            let _ = write!(out, "{i}");
            if human {
                out.push_str(match i % 10 {
                    1 => "st",
                    2 => "nd",
                    3 => "rd",
                    _ => "th",
                });
            }
        }
    }
}

fn put_weekdays(out: &mut String, mask: u8) {
    out.push(' ');
    let days: Vec<&str> = (1..=7)
        .filter(|i| mask & (1 << i) != 0)
        .map(|i| WEEK_DAYS[i])
        .collect();
    out.push_str(&days.join(","));
}

impl Time {
    fn has_daytime(&self) -> bool {
        self.daytime_start != 0 || self.daytime_stop != MAX_DAYTIME
    }
}

impl Ext for Time {
    const NAME: &'static str = "time";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("datestart", DATE_START, Arg::Required),
        OptDef::new("datestop", DATE_STOP, Arg::Required),
        OptDef::new("timestart", TIME_START, Arg::Required),
        OptDef::new("timestop", TIME_STOP, Arg::Required),
        OptDef::new("contiguous", O_CONTIGUOUS, Arg::None),
        OptDef::new("weekdays", WEEKDAYS, Arg::Required).inv(),
        OptDef::new("monthdays", MONTHDAYS, Arg::Required).inv(),
        OptDef::new("localtz", O_LOCAL_TZ, Arg::None).excl(1 << UTC),
        OptDef::new("utc", UTC, Arg::None).excl((1 << O_LOCAL_TZ) | (1 << KERNEL_TZ)),
        OptDef::new("kerneltz", KERNEL_TZ, Arg::None).excl(1 << UTC),
    ];

    fn new(_: &ParseCtx) -> Self {
        Time {
            date_start: 0,
            date_stop: DATE_STOP_DEFAULT,
            daytime_start: 0,
            daytime_stop: MAX_DAYTIME,
            monthdays: ALL_MONTHDAYS,
            weekdays: ALL_WEEKDAYS,
            flags: 0,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            DATE_START => self.date_start = parse_date(c.arg)?,
            DATE_STOP => self.date_stop = parse_date(c.arg)?,
            TIME_START => self.daytime_start = parse_daytime(c.arg)?,
            TIME_STOP => self.daytime_stop = parse_daytime(c.arg)?,
            O_CONTIGUOUS => self.flags |= CONTIGUOUS,
            O_LOCAL_TZ | KERNEL_TZ => self.flags |= LOCAL_TZ,
            // Bit 0 names no day; it is dropped so that equal tests are
            // equal values.
            MONTHDAYS => {
                let m = parse_monthdays(c.arg)?;
                self.monthdays = if c.inv { m ^ ALL_MONTHDAYS } else { m } & ALL_MONTHDAYS;
            }
            WEEKDAYS => {
                let w = parse_weekdays(c.arg)?;
                self.weekdays = if c.inv { w ^ ALL_WEEKDAYS } else { w } & ALL_WEEKDAYS;
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        if seen & (1 << O_CONTIGUOUS) != 0 && self.daytime_start < self.daytime_stop {
            return Err(Error::param(
                "time: --contiguous only makes sense when stoptime is smaller than starttime",
            ));
        }
        Ok(())
    }

    /// A date of 0 is not printed; the default stop date (INT_MAX) is.
    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.has_daytime() {
            out.push_str(" --timestart ");
            put_daytime(out, self.daytime_start);
            out.push_str(" --timestop ");
            put_daytime(out, self.daytime_stop);
        }
        if self.monthdays != ALL_MONTHDAYS {
            out.push_str(" --monthdays");
            put_monthdays(out, self.monthdays, false);
        }
        if self.weekdays != ALL_WEEKDAYS {
            out.push_str(" --weekdays");
            put_weekdays(out, self.weekdays);
        }
        for (d, word) in [
            (self.date_start, " --datestart "),
            (self.date_stop, " --datestop "),
        ] {
            if d != 0 {
                out.push_str(word);
                put_date(out, d, 'T');
            }
        }
        if self.flags & LOCAL_TZ != 0 {
            out.push_str(" --kerneltz");
        }
        if self.flags & CONTIGUOUS != 0 {
            out.push_str(" --contiguous");
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" TIME");
        if self.has_daytime() {
            out.push_str(" from ");
            put_daytime(out, self.daytime_start);
            out.push_str(" to ");
            put_daytime(out, self.daytime_stop);
        }
        if self.weekdays != ALL_WEEKDAYS {
            out.push_str(" on");
            put_weekdays(out, self.weekdays);
        }
        if self.monthdays != ALL_MONTHDAYS {
            out.push_str(" on");
            put_monthdays(out, self.monthdays, true);
        }
        if self.date_start != 0 {
            out.push_str(" starting from ");
            put_date(out, self.date_start, ' ');
        }
        if self.date_stop != DATE_STOP_DEFAULT {
            out.push_str(" until date");
            if self.date_stop != 0 {
                out.push(' ');
                put_date(out, self.date_stop, ' ');
            }
        }
        if self.flags & LOCAL_TZ == 0 {
            out.push_str(" UTC");
        }
        if self.flags & CONTIGUOUS != 0 {
            out.push_str(" contiguous");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_date, parse_daytime};
    use crate::ext::testutil::{err, list, save};

    const STOP: &str = " --datestop 2038-01-19T03:14:07";

    #[test]
    fn forms() {
        let cases = [
            (
                "--timestart 01:02:03 --timestop 04:05:06 --monthdays 1,2,3,4,5 --weekdays Mon,Fri,Sun --datestart 2001-02-03T04:05:06 --datestop 2012-09-08T09:06:05 --kerneltz".to_string(),
                " --timestart 01:02:03 --timestop 04:05:06 --monthdays 1,2,3,4,5 --weekdays Mon,Fri,Sun --datestart 2001-02-03T04:05:06 --datestop 2012-09-08T09:06:05 --kerneltz".to_string(),
                " TIME from 01:02:03 to 04:05:06 on Mon,Fri,Sun on 1st,2nd,3rd,4th,5th starting from 2001-02-03 04:05:06 until date 2012-09-08 09:06:05".to_string(),
            ),
            (
                "--timestart 1:0".into(),
                format!(" --timestart 01:00:00 --timestop 23:59:59{STOP}"),
                " TIME from 01:00:00 to 23:59:59 UTC".into(),
            ),
            (
                "! --monthdays 1,2,31 --weekdays 1,Tu,Sunday,07 --utc".into(),
                format!(" --monthdays 3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30 --weekdays Mon,Tue,Sun{STOP}"),
                " TIME on Mon,Tue,Sun on 3rd,4th,5th,6th,7th,8th,9th,10th,11st,12nd,13rd,14th,15th,16th,17th,18th,19th,20th,21st,22nd,23rd,24th,25th,26th,27th,28th,29th,30th UTC".into(),
            ),
            (
                "--datestart 2001-02-31 --datestop 2038-12-31T23:59:59 --localtz".into(),
                " --datestart 2001-03-03T00:00:00 --datestop 2038-12-31T23:59:59 --kerneltz".into(),
                " TIME starting from 2001-03-03 00:00:00 until date 2038-12-31 23:59:59".into(),
            ),
            (
                // Pieces are cut to their buffer: "123" is day 12.
                "--monthdays 123,,1 --weekdays Monday,8,Th".into(),
                format!(" --monthdays 1,12 --weekdays Mon,Thu{STOP}"),
                " TIME on Mon,Thu on 1st,12nd UTC".into(),
            ),
            (
                "--datestart 1970 --datestop 1970-01-01T00:00:00".into(),
                String::new(),
                " TIME until date UTC".into(),
            ),
            (
                "--timestart 23:00 --timestop 01:00 --contiguous".into(),
                format!(" --timestart 23:00:00 --timestop 01:00:00{STOP} --contiguous"),
                " TIME from 23:00:00 to 01:00:00 UTC contiguous".into(),
            ),
        ];
        for (opts, s, l) in cases {
            let args = format!("-m time {opts}");
            assert_eq!(save(&args), s, "{args}");
            assert_eq!(list(&args, false), l, "{args}");
            assert_eq!(list(&args, true), l, "{args} -n");
        }
    }

    #[test]
    fn dates_and_times() {
        let dates: &[(&str, Option<u32>)] = &[
            ("1970-01-01T02:00:00", Some(7200)),
            ("2001-02-03T04:05:06", Some(981173106)),
            ("2038", Some(2145916800)),
            ("2000-00-01", Some(944006400)),
            ("1969", None),
            ("2039", None),
            ("2001-13", None),
            ("2001-01-32", None),
            ("2001-01-01T24", None),
            ("2001-01-01 10", None),
            ("x", None),
        ];
        for (s, want) in dates {
            assert_eq!(parse_date(s).ok(), *want, "{s}");
        }
        let times: &[(&str, Result<u32, &str>)] = &[
            ("01:02", Ok(3720)),
            ("23:59:59", Ok(86399)),
            ("24:00", Err("24:00")),
            ("1", Err("1")),
            ("01:60", Err("60")),
            ("01:02:60", Err("60")),
            ("01:02x", Err("02x")),
        ];
        for (s, want) in times {
            let got = parse_daytime(s).map_err(|e| e.msg);
            let want = want.map_err(|q| {
                format!("invalid time \"{q}\" specified, should be hh:mm[:ss] format and within the boundaries")
            });
            assert_eq!(got, want, "{s}");
        }
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m time --weekdays 0",
                "No, the week does NOT begin with Sunday.",
            ),
            ("-m time --weekdays Mo,x", "x is not a valid day specifier"),
            (
                "-m time --monthdays 32",
                "32 is not a valid day for --monthdays",
            ),
            (
                "-m time --monthdays 3x",
                "3x is not a valid day for --monthdays",
            ),
            (
                "-m time --timestart 01:00 --timestop 02:00 --contiguous",
                "time: --contiguous only makes sense when stoptime is smaller than starttime",
            ),
            (
                "-m time --utc --kerneltz",
                "time: option \"--utc\" cannot be used together with \"--kerneltz\".\n",
            ),
            ("-m time --datestart 1970-01-00", "mktime returned an error"),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

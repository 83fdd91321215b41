//! `-j LOG` (iptables' libxt_LOG, used by iptables and ip6tables): kernel
//! logging with a syslog level, a prefix and detail flags.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

/// Option ids; the flag options use their XT_LOG_* bit position.
const O_TCPSEQ: u8 = 0;
const O_TCPOPTS: u8 = 1;
const O_IPOPTS: u8 = 2;
const O_UID: u8 = 3;
const O_MAC: u8 = 5;
const O_LEVEL: u8 = 6;
const O_PREFIX: u8 = 7;

const F_TCPSEQ: u8 = 0x01;
const F_TCPOPT: u8 = 0x02;
const F_IPOPT: u8 = 0x04;
const F_UID: u8 = 0x08;
const F_MACDECODE: u8 = 0x20;

/// The flags in print order, with their names (`--log-NAME` when saved).
const FLAG_NAMES: [(u8, &str); 5] = [
    (F_TCPSEQ, "tcp-sequence"),
    (F_TCPOPT, "tcp-options"),
    (F_IPOPT, "ip-options"),
    (F_UID, "uid"),
    (F_MACDECODE, "macdecode"),
];

/// LOG_WARNING.
const DEFAULT_LEVEL: u8 = 4;
/// The kernel's prefix buffer is 30 bytes with the terminating NUL.
const PREFIX_MAX: usize = 29;

/// Level names accepted by `--log-level` (xtables' list).
const LEVEL_NAMES: &[(&str, u8)] = &[
    ("alert", 1),
    ("crit", 2),
    ("debug", 7),
    ("emerg", 0),
    ("error", 3),
    ("info", 6),
    ("notice", 5),
    ("panic", 0),
    ("warning", 4),
];

/// The name `-L` prints for a level: the first entry of glibc's
/// prioritynames with that value.
fn level_name(level: u8) -> Option<&'static str> {
    const PRIORITY_NAMES: &[&str] = &[
        "emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
    ];
    PRIORITY_NAMES.get(level as usize).copied()
}

/// XTTYPE_SYSLOGLEVEL: 0..=7 in any base, or a level name.
pub fn parse_log_level(s: &str) -> Result<u8> {
    if let Some(v) = opt::parse_uint(s, 0, 7) {
        return Ok(v as u8);
    }
    LEVEL_NAMES
        .iter()
        .find(|(n, _)| *n == s)
        .map(|e| e.1)
        .ok_or_else(|| Error::param(format!("log level \"{s}\" unknown\n")))
}

/// A string argument with xtables' minimum-length rule, truncated silently
/// to the kernel's buffer (`max` bytes) as XTOPT_PUT does, and no newline.
pub fn parse_prefix(s: &str, max: usize) -> Result<String> {
    if s.is_empty() {
        return Err(Error::param(
            "Argument must have a minimum length of 1 characters\n",
        ));
    }
    if s.contains('\n') {
        return Err(Error::param("Newlines not allowed in --log-prefix"));
    }
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Ok(s[..end].to_string())
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Log {
    pub level: u8,
    pub flags: u8,
    pub prefix: String,
}

impl Ext for Log {
    const NAME: &'static str = "LOG";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("log-level", O_LEVEL, Arg::Required),
        OptDef::new("log-prefix", O_PREFIX, Arg::Required),
        OptDef::new("log-tcp-sequence", O_TCPSEQ, Arg::None),
        OptDef::new("log-tcp-options", O_TCPOPTS, Arg::None),
        OptDef::new("log-ip-options", O_IPOPTS, Arg::None),
        OptDef::new("log-uid", O_UID, Arg::None),
        OptDef::new("log-macdecode", O_MAC, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Log {
            level: DEFAULT_LEVEL,
            flags: 0,
            prefix: String::new(),
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            O_LEVEL => self.level = parse_log_level(c.arg)?,
            O_PREFIX => self.prefix = parse_prefix(c.arg, PREFIX_MAX)?,
            id => self.flags |= 1 << id,
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if !self.prefix.is_empty() {
            out.push_str(" --log-prefix");
            opt::save_string(out, &self.prefix);
        }
        if self.level != DEFAULT_LEVEL {
            let _ = write!(out, " --log-level {}", self.level);
        }
        for (f, name) in FLAG_NAMES {
            if self.flags & f != 0 {
                let _ = write!(out, " --log-{name}");
            }
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" LOG");
        if ctx.numeric {
            let _ = write!(out, " flags {} level {}", self.flags, self.level);
        } else {
            match level_name(self.level) {
                Some(n) => {
                    let _ = write!(out, " level {n}");
                }
                None => {
                    let _ = write!(out, " UNKNOWN level {}", self.level);
                }
            }
            for (f, name) in FLAG_NAMES {
                if self.flags & f != 0 {
                    let _ = write!(out, " {name}");
                }
            }
        }
        if !self.prefix.is_empty() {
            let _ = write!(out, " prefix \"{}\"", self.prefix);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{run, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn list_forms() {
        // (rule, save, -L, -L -n)
        let cases: &[(&str, &str, &str, &str)] = &[
            ("-j LOG", "", " LOG level warn", " LOG flags 0 level 4"),
            (
                "-j LOG --log-level error --log-prefix x",
                " --log-prefix x --log-level 3",
                " LOG level err prefix \"x\"",
                " LOG flags 0 level 3 prefix \"x\"",
            ),
            (
                "-j LOG --log-level 0x7 --log-uid --log-tcp-sequence --log-macdecode",
                " --log-level 7 --log-tcp-sequence --log-uid --log-macdecode",
                " LOG level debug tcp-sequence uid macdecode",
                " LOG flags 41 level 7",
            ),
            (
                "-j LOG --log-level panic --log-ip-options --log-tcp-options",
                " --log-level 0 --log-tcp-options --log-ip-options",
                " LOG level emerg tcp-options ip-options",
                " LOG flags 6 level 0",
            ),
            (
                "-j LOG --log-prefix 0123456789012345678901234567890123",
                " --log-prefix 01234567890123456789012345678",
                " LOG level warn prefix \"01234567890123456789012345678\"",
                " LOG flags 0 level 4 prefix \"01234567890123456789012345678\"",
            ),
            (
                "-j LOG --log-level warning --log-prefix a'b",
                " --log-prefix \"a\\'b\"",
                " LOG level warn prefix \"a'b\"",
                " LOG flags 0 level 4 prefix \"a'b\"",
            ),
        ];
        for fam in [Family::Ipv4, Family::Ipv6] {
            for (rule, save, list, num) in cases {
                let Printed {
                    save: s,
                    list: l,
                    list_numeric: n,
                } = run(fam, TableKind::Filter, "INPUT", rule).unwrap();
                assert_eq!(s, *save, "{rule}");
                assert_eq!(l, *list, "{rule}");
                assert_eq!(n, *num, "{rule} -n");
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str)] = &[
            ("-j LOG --log-level bad", "log level \"bad\" unknown\n"),
            ("-j LOG --log-level 8", "log level \"8\" unknown\n"),
            ("-j LOG --log-level Alert", "log level \"Alert\" unknown\n"),
            (
                "-j LOG --log-uid --log-uid",
                "LOG: option \"--log-uid\" can only be used once.\n",
            ),
        ];
        for (rule, want) in cases {
            let e = run(Family::Ipv4, TableKind::Filter, "INPUT", rule)
                .unwrap_err()
                .msg;
            assert_eq!(e, *want, "{rule}");
        }
        assert_eq!(
            super::parse_prefix("", 29).unwrap_err().msg,
            "Argument must have a minimum length of 1 characters\n"
        );
        assert_eq!(
            super::parse_prefix("a\nb", 29).unwrap_err().msg,
            "Newlines not allowed in --log-prefix"
        );
    }
}

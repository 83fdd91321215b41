//! `-j CLASSIFY`: set the packet's priority (the tc class `MAJOR:MINOR`,
//! iptables' libxt_CLASSIFY). The kernel allows it from the FORWARD, OUTPUT
//! and POSTROUTING hooks of any table.

use super::snat::check_target_hooks;
use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Classify {
    /// skb->priority: major in the high 16 bits, minor in the low 16.
    pub priority: u32,
}

const SET_CLASS: u8 = 0;

/// One `%x` conversion of scanf: white space, a sign, an optional `0x`,
/// hex digits (at least one). A value beyond the range of unsigned long
/// saturates; a minus negates it; the result is cut to 32 bits. Returns
/// the value and the rest.
fn scan_hex(s: &str) -> Option<(u32, &str)> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let body = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(r) if r.starts_with(|c: char| c.is_ascii_hexdigit()) => r,
        _ => t,
    };
    let end = body
        .find(|c: char| !c.is_ascii_hexdigit())
        .unwrap_or(body.len());
    if end == 0 {
        return None;
    }
    let v = u64::from_str_radix(&body[..end], 16).unwrap_or(u64::MAX);
    let v = if neg { v.wrapping_neg() } else { v };
    Some((v as u32, &body[end..]))
}

/// `sscanf(s, "%x:%x")` with both conversions done (anything after the
/// second number is ignored, as sscanf does), as TC_H_MAKE(major << 16,
/// minor).
fn parse_class(s: &str) -> Option<u32> {
    let (major, rest) = scan_hex(s)?;
    let (minor, _) = scan_hex(rest.strip_prefix(':')?)?;
    Some((major << 16) | (minor & 0xffff))
}

impl Ext for Classify {
    const NAME: &'static str = "CLASSIFY";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[OptDef::new("set-class", SET_CLASS, Arg::Required).mand()];

    fn new(_: &ParseCtx) -> Self {
        Classify { priority: 0 }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.priority = parse_class(c.arg)
            .ok_or_else(|| Error::param(format!("Bad class value \"{}\"", c.arg)))?;
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        crate::ext::postcheck(Self::NAME, Self::OPTS, seen)?;
        check_target_hooks("CLASSIFY", ctx, &["FORWARD", "OUTPUT", "POSTROUTING"])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(
            out,
            " --set-class {:04x}:{:04x}",
            self.priority >> 16,
            self.priority & 0xffff
        );
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(
            out,
            " CLASSIFY set {:x}:{:x}",
            self.priority >> 16,
            self.priority & 0xffff
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // rule, save, -L
        let cases: &[(&str, &str, &str)] = &[
            (
                "-j CLASSIFY --set-class 0000:ffff",
                " --set-class 0000:ffff",
                " CLASSIFY set 0:ffff",
            ),
            (
                "-j CLASSIFY --set-class 1:10",
                " --set-class 0001:0010",
                " CLASSIFY set 1:10",
            ),
            // sscanf: a 0x prefix, white space, a sign and trailing text.
            (
                "-j CLASSIFY --set-class 0x12:0XaB",
                " --set-class 0012:00ab",
                " CLASSIFY set 12:ab",
            ),
            (
                "-j CLASSIFY --set-class 1:-1",
                " --set-class 0001:ffff",
                " CLASSIFY set 1:ffff",
            ),
            (
                "-j CLASSIFY --set-class 12345:ffffffff",
                " --set-class 2345:ffff",
                " CLASSIFY set 2345:ffff",
            ),
            (
                "-j CLASSIFY --set-class 1:2junk",
                " --set-class 0001:0002",
                " CLASSIFY set 1:2",
            ),
        ];
        for (fam, table, chain) in [
            (Family::Ipv4, TableKind::Mangle, "POSTROUTING"),
            (Family::Ipv6, TableKind::Filter, "FORWARD"),
            (Family::Ipv4, TableKind::Raw, "OUTPUT"),
            (Family::Ipv4, TableKind::Filter, "mychain"),
        ] {
            for (rule, save, list) in cases {
                let want = Printed {
                    save: save.to_string(),
                    list: list.to_string(),
                    list_numeric: list.to_string(),
                };
                assert_eq!(ok_in(fam, table, chain, rule), want, "{rule}");
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "FORWARD",
                "-j CLASSIFY",
                "CLASSIFY: option \"--set-class\" must be specified\n",
            ),
            ("FORWARD", "-j CLASSIFY --set-class 1", "Bad class value \"1\""),
            ("FORWARD", "-j CLASSIFY --set-class 1:", "Bad class value \"1:\""),
            ("FORWARD", "-j CLASSIFY --set-class x:1", "Bad class value \"x:1\""),
            ("FORWARD", "-j CLASSIFY --set-class \"1 :1\"", "Bad class value \"1 :1\""),
            (
                "INPUT",
                "-j CLASSIFY --set-class 1:1",
                "Invalid argument: CLASSIFY target: used from hooks INPUT, but only usable from FORWARD/OUTPUT/POSTROUTING.",
            ),
            (
                "PREROUTING",
                "-j CLASSIFY --set-class 1:1",
                "Invalid argument: CLASSIFY target: used from hooks PREROUTING, but only usable from FORWARD/OUTPUT/POSTROUTING.",
            ),
        ];
        for (chain, rule, want) in cases {
            assert_eq!(
                err_in(Family::Ipv4, TableKind::Mangle, chain, rule),
                *want,
                "{rule}"
            );
        }
    }
}

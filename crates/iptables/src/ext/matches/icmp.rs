//! `-m icmp`: ICMP type and code (iptables' libipt_icmp, IPv4). The type
//! tables and the type/code parser are shared with `icmp6`.

use crate::error::{Error, Result};
use crate::ext::{require_proto, Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

/// One named ICMP type: (name, type, lowest code, highest code).
pub type IcmpName = (&'static str, u8, u8, u8);

/// ICMP names in iptables' order (the order decides which of several names
/// for the same type/codes is printed, and ambiguity messages).
pub const ICMP_NAMES: &[IcmpName] = &[
    ("any", 0xFF, 0, 0xFF),
    ("echo-reply", 0, 0, 0xFF),
    ("pong", 0, 0, 0xFF),
    ("destination-unreachable", 3, 0, 0xFF),
    ("network-unreachable", 3, 0, 0),
    ("host-unreachable", 3, 1, 1),
    ("protocol-unreachable", 3, 2, 2),
    ("port-unreachable", 3, 3, 3),
    ("fragmentation-needed", 3, 4, 4),
    ("source-route-failed", 3, 5, 5),
    ("network-unknown", 3, 6, 6),
    ("host-unknown", 3, 7, 7),
    ("network-prohibited", 3, 9, 9),
    ("host-prohibited", 3, 10, 10),
    ("TOS-network-unreachable", 3, 11, 11),
    ("TOS-host-unreachable", 3, 12, 12),
    ("communication-prohibited", 3, 13, 13),
    ("host-precedence-violation", 3, 14, 14),
    ("precedence-cutoff", 3, 15, 15),
    ("source-quench", 4, 0, 0xFF),
    ("redirect", 5, 0, 0xFF),
    ("network-redirect", 5, 0, 0),
    ("host-redirect", 5, 1, 1),
    ("TOS-network-redirect", 5, 2, 2),
    ("TOS-host-redirect", 5, 3, 3),
    ("echo-request", 8, 0, 0xFF),
    ("ping", 8, 0, 0xFF),
    ("router-advertisement", 9, 0, 0xFF),
    ("router-solicitation", 10, 0, 0xFF),
    ("time-exceeded", 11, 0, 0xFF),
    ("ttl-exceeded", 11, 0, 0xFF),
    ("ttl-zero-during-transit", 11, 0, 0),
    ("ttl-zero-during-reassembly", 11, 1, 1),
    ("parameter-problem", 12, 0, 0xFF),
    ("ip-header-bad", 12, 0, 0),
    ("required-option-missing", 12, 1, 1),
    ("timestamp-request", 13, 0, 0xFF),
    ("timestamp-reply", 14, 0, 0xFF),
    ("address-mask-request", 17, 0, 0xFF),
    ("address-mask-reply", 18, 0, 0xFF),
];

/// ICMPv6 names in ip6tables' order.
pub const ICMPV6_NAMES: &[IcmpName] = &[
    ("destination-unreachable", 1, 0, 0xFF),
    ("no-route", 1, 0, 0),
    ("communication-prohibited", 1, 1, 1),
    ("beyond-scope", 1, 2, 2),
    ("address-unreachable", 1, 3, 3),
    ("port-unreachable", 1, 4, 4),
    ("failed-policy", 1, 5, 5),
    ("reject-route", 1, 6, 6),
    ("packet-too-big", 2, 0, 0xFF),
    ("time-exceeded", 3, 0, 0xFF),
    ("ttl-exceeded", 3, 0, 0xFF),
    ("ttl-zero-during-transit", 3, 0, 0),
    ("ttl-zero-during-reassembly", 3, 1, 1),
    ("parameter-problem", 4, 0, 0xFF),
    ("bad-header", 4, 0, 0),
    ("unknown-header-type", 4, 1, 1),
    ("unknown-option", 4, 2, 2),
    ("echo-request", 128, 0, 0xFF),
    ("ping", 128, 0, 0xFF),
    ("echo-reply", 129, 0, 0xFF),
    ("pong", 129, 0, 0xFF),
    ("mld-listener-query", 130, 0, 0xFF),
    ("mld-listener-report", 131, 0, 0xFF),
    ("mld-listener-done", 132, 0, 0xFF),
    ("mld-listener-reduction", 132, 0, 0xFF),
    ("router-solicitation", 133, 0, 0xFF),
    ("router-advertisement", 134, 0, 0xFF),
    ("neighbour-solicitation", 135, 0, 0xFF),
    ("neighbor-solicitation", 135, 0, 0xFF),
    ("neighbour-advertisement", 136, 0, 0xFF),
    ("neighbor-advertisement", 136, 0, 0xFF),
    ("redirect", 137, 0, 0xFF),
];

/// A number 0..=255 at the start of `s` (xtables_strtoui with an end
/// pointer), optionally followed by `:number`; returns (lo, hi, rest).
fn leading_range(s: &str) -> Option<(u8, u8, &str)> {
    let (lo, rest) = leading_u8(s)?;
    match rest.strip_prefix(':') {
        Some(r) => {
            let (hi, rest) = leading_u8(r)?;
            Some((lo, hi, rest))
        }
        None => Some((lo, lo, rest)),
    }
}

fn leading_u8(s: &str) -> Option<(u8, &str)> {
    if s.trim_start().starts_with('-') {
        return None;
    }
    let (v, rest) = crate::opt::strtoul(s, 0)?;
    (v <= 255).then_some((v as u8, rest))
}

/// Parse an ICMP/ICMPv6 type argument: a (case-insensitive, unambiguous
/// prefix of a) name, `type` or `type/code` (codes may be a `lo:hi` range).
/// `what` is "ICMP" or "ICMPv6" for messages. Returns (type, code_min,
/// code_max).
pub fn parse_icmp_type(names: &[IcmpName], what: &str, s: &str) -> Result<(u8, u8, u8)> {
    let mut found: Option<&IcmpName> = None;
    for e in names {
        let n = e.0.as_bytes();
        if n.len() < s.len() || !n[..s.len()].eq_ignore_ascii_case(s.as_bytes()) {
            continue;
        }
        if let Some(prev) = found {
            return Err(Error::param(format!(
                "Ambiguous {what} type `{s}': `{}' or `{}'?",
                prev.0, e.0
            )));
        }
        found = Some(e);
    }
    if let Some(e) = found {
        return Ok((e.1, e.2, e.3));
    }
    let (t_lo, t_hi, rest) =
        leading_range(s).ok_or_else(|| Error::param(format!("Unknown {what} type `{s}'")))?;
    let (c_lo, c_hi) = if rest.is_empty() {
        (0, 0xFF)
    } else if let Some(code) = rest.strip_prefix('/') {
        let (c_lo, c_hi, rest) = leading_range(code)
            .ok_or_else(|| Error::param(format!("Unknown {what} code `{s}'")))?;
        if let Some(ch) = rest.chars().next() {
            return Err(Error::param(format!("unknown character {ch}")));
        }
        (c_lo, c_hi)
    } else {
        let ch = rest.chars().next().unwrap_or_default();
        return Err(Error::param(format!("unknown character {ch}")));
    };
    if t_lo != t_hi {
        return Err(Error::param(format!("{what} type range not supported")));
    }
    Ok((t_lo, c_lo, c_hi))
}

/// `-L` form of a type/code (iptables' print_icmptype): a name when one fits
/// exactly and not numeric, else `type N` with ` code C` or ` codes A-B`.
/// Written right after the match name, like iptables (`icmptype 8`).
pub fn list_icmp_type(
    out: &mut String,
    names: &[IcmpName],
    typ: u8,
    cmin: u8,
    cmax: u8,
    inv: bool,
    numeric: bool,
) {
    if !numeric {
        if let Some(e) = names
            .iter()
            .find(|e| e.1 == typ && e.2 == cmin && e.3 == cmax)
        {
            let _ = write!(out, " {}{}", if inv { "!" } else { "" }, e.0);
            return;
        }
    }
    if inv {
        out.push_str(" !");
    }
    let _ = write!(out, "type {typ}");
    if cmin == cmax {
        let _ = write!(out, " code {cmin}");
    } else if cmin != 0 || cmax != 0xFF {
        let _ = write!(out, " codes {cmin}-{cmax}");
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Icmp {
    pub typ: u8,
    pub code_min: u8,
    pub code_max: u8,
    pub inv: bool,
}

const TYPE: u8 = 0;

impl Ext for Icmp {
    const NAME: &'static str = "icmp";
    const FAMILY: Fam = Fam::V4;
    const OPTS: &'static [OptDef] = &[OptDef::new("icmp-type", TYPE, Arg::Required).inv().mand()];

    fn new(_: &ParseCtx) -> Self {
        Icmp {
            typ: 0xFF,
            code_min: 0,
            code_max: 0xFF,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let (t, lo, hi) = parse_icmp_type(ICMP_NAMES, "ICMP", c.arg)?;
        self.typ = t;
        self.code_min = lo;
        self.code_max = hi;
        self.inv |= c.inv;
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        require_proto("icmp match", ctx, &[1])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        if self.typ == 0xFF && self.code_min == 0 && self.code_max == 0xFF {
            out.push_str(" --icmp-type any");
        } else {
            let _ = write!(out, " --icmp-type {}", self.typ);
            if self.code_min != 0 || self.code_max != 0xFF {
                let _ = write!(out, "/{}", self.code_min);
            }
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" icmp");
        list_icmp_type(
            out,
            ICMP_NAMES,
            self.typ,
            self.code_min,
            self.code_max,
            self.inv,
            ctx.numeric,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::print_ext;
    use ruleset::Family;

    fn parsed(arg: &str) -> Result<(u8, u8, u8)> {
        parse_icmp_type(ICMP_NAMES, "ICMP", arg)
    }

    fn listed(arg: &str, inv: bool, numeric: bool) -> String {
        let (typ, code_min, code_max) = parsed(arg).unwrap();
        let m = Icmp {
            typ,
            code_min,
            code_max,
            inv,
        };
        print_ext(&m, Family::Ipv4, 1).listed(numeric).to_string()
    }

    #[test]
    fn list_forms() {
        let cases: &[(&str, bool, bool, &str)] = &[
            ("echo-request", false, false, " icmp echo-request"),
            ("ping", false, false, " icmp echo-request"),
            ("8", false, false, " icmp echo-request"),
            ("8", true, false, " icmp !echo-request"),
            ("8", false, true, " icmptype 8"),
            ("8", true, true, " icmp !type 8"),
            ("3/3", false, false, " icmp port-unreachable"),
            ("3/3", false, true, " icmptype 3 code 3"),
            ("3/8", false, false, " icmptype 3 code 8"),
            ("3/1:4", false, false, " icmptype 3 codes 1-4"),
            ("any", false, false, " icmp any"),
            ("any", false, true, " icmptype 255"),
            ("255/0:255", true, false, " icmp !any"),
            ("7", false, false, " icmptype 7"),
            ("Echo-Rep", false, false, " icmp echo-reply"),
        ];
        for (arg, inv, numeric, want) in cases {
            assert_eq!(
                listed(arg, *inv, *numeric),
                *want,
                "{arg} inv={inv} n={numeric}"
            );
        }
    }

    #[test]
    fn parse_forms() {
        assert_eq!(parsed("echo-request").unwrap(), (8, 0, 255));
        assert_eq!(parsed("host-unr").unwrap(), (3, 1, 1));
        assert_eq!(parsed("0x8/0").unwrap(), (8, 0, 0));
        assert_eq!(parsed("255/255").unwrap(), (255, 255, 255));
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str)] = &[
            (
                "echo",
                "Ambiguous ICMP type `echo': `echo-reply' or `echo-request'?",
            ),
            ("bogus", "Unknown ICMP type `bogus'"),
            ("256", "Unknown ICMP type `256'"),
            ("3/x", "Unknown ICMP code `3/x'"),
            ("3/1x", "unknown character x"),
            ("3x", "unknown character x"),
            ("3:4", "ICMP type range not supported"),
        ];
        for (arg, want) in cases {
            assert_eq!(parsed(arg).unwrap_err().msg, *want, "{arg}");
        }
    }

    #[test]
    fn save_forms() {
        let ctx = PrintCtx {
            family: Family::Ipv4,
            proto: 1,
            numeric: false,
        };
        let cases: &[(&str, bool, &str)] = &[
            ("any", false, " --icmp-type any"),
            ("echo-reply", false, " --icmp-type 0"),
            ("3/3", true, " ! --icmp-type 3/3"),
            ("255/255", false, " --icmp-type 255/255"),
        ];
        for (arg, inv, want) in cases {
            let (typ, code_min, code_max) = parsed(arg).unwrap();
            let m = Icmp {
                typ,
                code_min,
                code_max,
                inv: *inv,
            };
            let mut out = String::new();
            m.save(&ctx, &mut out);
            assert_eq!(out, *want, "{arg}");
        }
    }
}

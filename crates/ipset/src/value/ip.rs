//! Address, range and CIDR values (`1.2.3.4`, `10.0.0.0/8`, `a-b`, and the
//! bracket escape `[name-with-dash]`), read into [`Data`] the way ipset's
//! address parsers do, with their messages.

use super::{range_sep, sep_at, strip_escape, CIDR_SEP, RANGE_SEP};
use crate::addr::{self, Family};
use crate::data::Data;
use crate::error::{Error, Result};
use crate::num;
use crate::types::Opt;

/// What shape an address value must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrShape {
    Any,
    Plain,
    Net,
    Range,
}

/// Whether `s` has a range separator outside a leading `[...]` escape.
pub fn escape_range_separator(s: &str) -> bool {
    if let Some(rest) = s.strip_prefix('[') {
        return match rest.find(']') {
            Some(i) => range_sep(&s[i + 1..]).is_some(),
            None => false,
        };
    }
    range_sep(s).is_some()
}

fn cidr_separator(s: &str) -> Option<usize> {
    sep_at(s, CIDR_SEP)
}

/// Where a range separator splits `s`, honouring a leading `[...]`.
/// `Err` carries ipset's message for a broken escape.
pub fn find_range_separator(s: &str) -> Result<Option<usize>> {
    if s.starts_with('[') {
        let Some(esc) = s.find(']') else {
            return Err(Error::syntax(format!(
                "cannot find closing escape character ']' in {s}"
            )));
        };
        if esc + 1 == s.len() {
            return Ok(None);
        }
        if s.as_bytes()[esc + 1] != RANGE_SEP {
            return Err(Error::syntax(format!(
                "range separator expected after '{}'",
                &s[..esc + 1]
            )));
        }
        return Ok(Some(esc + 1));
    }
    Ok(range_sep(s))
}

/// Resolve numeric address text; names are refused with the message ipset
/// prints when resolving fails.
pub fn resolve(s: &str, family: Family) -> Result<std::net::IpAddr> {
    addr::parse_numeric(s, family).ok_or_else(|| {
        Error::syntax(format!(
            "cannot parse {s}: resolving to {} address failed",
            if family == Family::Inet {
                "IPv4"
            } else {
                "IPv6"
            }
        ))
    })
}

/// ipset's `parse_ipaddr`: `ADDR`, `ADDR/CIDR` or `ADDR-ADDR` into item `o`
/// (and its CIDR/"to" items).
pub fn parse_ipaddr(d: &mut Data, o: Opt, s: &str, family: Family) -> Result<()> {
    let (head, tail) = if let Some(i) = cidr_separator(s) {
        let bits = family.bits();
        let c = cidr_value(&s[i + 1..], 0, bits)?;
        d.set_cidr_for(o, c);
        (&s[..i], None)
    } else {
        match find_range_separator(s)? {
            Some(i) => (&s[..i], Some(&s[i + 1..])),
            None => (s, None),
        }
    };
    let head = strip_escape(head)?;
    let a = resolve(head, family)?;
    d.set_ip(o, a);
    if let Some(t) = tail {
        let t = strip_escape(t)?;
        let b = resolve(t, family)?;
        d.set_ip(Data::to_opt(o), b);
    }
    Ok(())
}

/// ipset's `string_to_cidr`: a number that fits a byte, then `min..=max`.
pub fn cidr_value(s: &str, min: u8, max: u8) -> Result<u8> {
    let c = num::u8_(s)?;
    if c < min || c > max {
        return Err(Error::syntax(format!("'{s}' is out of range {min}-{max}")));
    }
    Ok(c)
}

/// ipset's `parse_ip`: check the shape, then read the value.
pub fn parse_ip(d: &mut Data, o: Opt, s: &str, shape: AddrShape) -> Result<()> {
    let family = d.family_or_inet();
    match shape {
        AddrShape::Plain => {
            let host = if family == Family::Inet {
                "/32"
            } else {
                "/128"
            };
            let bad_cidr = cidr_separator(s).is_some_and(|i| &s[i..] != host);
            if escape_range_separator(s) || bad_cidr {
                return Err(Error::syntax(format!(
                    "plain IP address must be supplied: {s}"
                )));
            }
        }
        AddrShape::Net => {
            if cidr_separator(s).is_none() || escape_range_separator(s) {
                return Err(Error::syntax(format!("IP/netblock must be supplied: {s}")));
            }
        }
        AddrShape::Range => {
            if !escape_range_separator(s) || cidr_separator(s).is_some() {
                return Err(Error::syntax(format!("IP-IP range must supplied: {s}")));
            }
        }
        AddrShape::Any => {}
    }
    parse_ipaddr(d, o, s, family)
}

/// IPv4: address, range or CIDR; IPv6: a plain address.
pub fn ip4_single6(d: &mut Data, o: Opt, s: &str) -> Result<()> {
    match d.family_or_inet() {
        Family::Inet => parse_ip(d, o, s, AddrShape::Any),
        Family::Inet6 => parse_ip(d, o, s, AddrShape::Plain),
    }
}

/// IPv4: address, range or CIDR; IPv6: address or CIDR.
pub fn ip4_net6(d: &mut Data, o: Opt, s: &str) -> Result<()> {
    match d.family_or_inet() {
        Family::Inet => parse_ip(d, o, s, AddrShape::Any),
        Family::Inet6 => {
            if escape_range_separator(s) {
                return Err(Error::syntax(format!(
                    "IP address or IP/cidr must be specified: {s}"
                )));
            }
            parse_ip(d, o, s, AddrShape::Any)
        }
    }
}

/// `range` of bitmap:ip(,mac): CIDR or range, required.
pub fn netrange(d: &mut Data, o: Opt, s: &str) -> Result<()> {
    if !(escape_range_separator(s) || cidr_separator(s).is_some()) {
        return Err(Error::syntax(format!(
            "IP/cidr or IP-IP range must be specified: {s}"
        )));
    }
    parse_ip(d, o, s, AddrShape::Any)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: Parser, fam: Option<Family>, s: &str) -> String {
        let mut d = Data {
            family: fam,
            ..Data::default()
        };
        match f(&mut d, Opt::Ip, s) {
            Ok(()) => format!(
                "{:?} {:?} {:?}",
                d.ip.map(addr::ntop),
                d.ip_to.map(addr::ntop),
                d.cidr
            ),
            Err(e) => e.msg,
        }
    }

    type Parser = fn(&mut Data, Opt, &str) -> Result<()>;

    #[test]
    fn address_shapes() {
        let v4 = Some(Family::Inet);
        let v6 = Some(Family::Inet6);
        let cases: [(Parser, Option<Family>, &str, &str); 12] = [
            (ip4_single6, v4, "1.1.1.1", "Some(\"1.1.1.1\") None None"),
            (
                ip4_single6,
                v4,
                "1.1.1.1-1.1.1.5",
                "Some(\"1.1.1.1\") Some(\"1.1.1.5\") None",
            ),
            (
                ip4_single6,
                v4,
                "10.0.0.0/8",
                "Some(\"10.0.0.0\") None Some(8)",
            ),
            (
                ip4_single6,
                v6,
                "2::1/64",
                "Syntax error: plain IP address must be supplied: 2::1/64",
            ),
            (ip4_single6, v6, "2::1/128", "Some(\"2::1\") None Some(128)"),
            (ip4_net6, v6, "2::/64", "Some(\"2::\") None Some(64)"),
            (
                ip4_net6,
                v6,
                "1::1-1::2",
                "Syntax error: IP address or IP/cidr must be specified: 1::1-1::2",
            ),
            (
                ip4_single6,
                v4,
                "1.1.1.1/33",
                "Syntax error: '33' is out of range 0-32",
            ),
            (
                ip4_single6,
                v4,
                "foo",
                "Syntax error: cannot parse foo: resolving to IPv4 address failed",
            ),
            (
                ip4_single6,
                None,
                "[1.1.1.1]",
                "Some(\"1.1.1.1\") None None",
            ),
            (
                ip4_single6,
                v4,
                "[1.1.1.1",
                "Syntax error: cannot find closing escape character ']' in [1.1.1.1",
            ),
            (
                netrange,
                v4,
                "2.0.0.1",
                "Syntax error: IP/cidr or IP-IP range must be specified: 2.0.0.1",
            ),
        ];
        for (f, fam, s, want) in cases {
            assert_eq!(run(f, fam, s), want, "{s}");
        }
    }
}

//! Protocol and port values: `[proto:]port[-port]`, `icmp:name|type/code`,
//! `proto:0`, as ipset reads them, with their messages.

use super::{proto_sep, strip_escape};
use crate::data::Data;
use crate::error::{Error, Result};
use crate::num;
use crate::types::Opt;
use ruleset::names;

pub const TCP: u8 = 6;
pub const UDP: u8 = 17;
pub const ICMP: u8 = 1;
pub const ICMPV6: u8 = 58;
pub const SCTP: u8 = 132;
pub const UDPLITE: u8 = 136;

/// Protocols whose elements carry a port (the kernel keeps the port only
/// for these, and for ICMP's type/code).
pub fn with_ports(p: u8) -> bool {
    matches!(p, TCP | UDP | SCTP | UDPLITE)
}

/// ICMP type/code names (ipset's table; the first name of a code prints).
pub const ICMP_NAMES: &[(&str, u8, u8)] = &[
    ("echo-reply", 0, 0),
    ("pong", 0, 0),
    ("network-unreachable", 3, 0),
    ("host-unreachable", 3, 1),
    ("protocol-unreachable", 3, 2),
    ("port-unreachable", 3, 3),
    ("fragmentation-needed", 3, 4),
    ("source-route-failed", 3, 5),
    ("network-unknown", 3, 6),
    ("host-unknown", 3, 7),
    ("network-prohibited", 3, 9),
    ("host-prohibited", 3, 10),
    ("TOS-network-unreachable", 3, 11),
    ("TOS-host-unreachable", 3, 12),
    ("communication-prohibited", 3, 13),
    ("host-precedence-violation", 3, 14),
    ("precedence-cutoff", 3, 15),
    ("source-quench", 4, 0),
    ("network-redirect", 5, 0),
    ("host-redirect", 5, 1),
    ("TOS-network-redirect", 5, 2),
    ("TOS-host-redirect", 5, 3),
    ("echo-request", 8, 0),
    ("ping", 8, 0),
    ("router-advertisement", 9, 0),
    ("router-solicitation", 10, 0),
    ("ttl-zero-during-transit", 11, 0),
    ("ttl-zero-during-reassembly", 11, 1),
    ("ip-header-bad", 12, 0),
    ("required-option-missing", 12, 1),
    ("timestamp-request", 13, 0),
    ("timestamp-reply", 14, 0),
    ("address-mask-request", 17, 0),
    ("address-mask-reply", 18, 0),
];

/// ICMPv6 type/code names (ipset's table, misspelt aliases included).
pub const ICMPV6_NAMES: &[(&str, u8, u8)] = &[
    ("no-route", 1, 0),
    ("communication-prohibited", 1, 1),
    ("address-unreachable", 1, 3),
    ("port-unreachable", 1, 4),
    ("packet-too-big", 2, 0),
    ("ttl-zero-during-transit", 3, 0),
    ("ttl-zero-during-reassembly", 3, 1),
    ("bad-header", 4, 0),
    ("unknown-header-type", 4, 1),
    ("unknown-option", 4, 2),
    ("echo-request", 128, 0),
    ("ping", 128, 0),
    ("echo-reply", 129, 0),
    ("pong", 129, 0),
    ("router-solicitation", 133, 0),
    ("router-advertisement", 134, 0),
    ("neighbour-solicitation", 135, 0),
    ("neigbour-solicitation", 135, 0),
    ("neighbour-advertisement", 136, 0),
    ("neigbour-advertisement", 136, 0),
    ("redirect", 137, 0),
];

/// The name ipset prints for an ICMP(v6) type/code, if it has one.
pub fn icmp_name(table: &[(&'static str, u8, u8)], typecode: u16) -> Option<&'static str> {
    let (t, c) = ((typecode >> 8) as u8, typecode as u8);
    table.iter().find(|e| e.1 == t && e.2 == c).map(|e| e.0)
}

/// A name given as a case-insensitive prefix of a table entry (ipset accepts
/// abbreviations; the first entry in table order wins).
fn icmp_by_name(table: &[(&str, u8, u8)], s: &str) -> Option<u16> {
    table
        .iter()
        .find(|e| {
            e.0.len() >= s.len() && e.0.as_bytes()[..s.len()].eq_ignore_ascii_case(s.as_bytes())
        })
        .map(|e| (u16::from(e.1) << 8) | u16::from(e.2))
}

fn icmp_typecode(s: &str, family_word: &str) -> Result<u16> {
    let Some(i) = super::sep_at(s, super::CIDR_SEP) else {
        return Err(Error::session(format!(
            "Cannot parse {s} as an {family_word} type/code."
        )));
    };
    let t = num::u8_(&s[..i])?;
    let c = num::u8_(&s[i + 1..])?;
    Ok((u16::from(t) << 8) | u16::from(c))
}

/// Protocol by number or name (`icmpv6` means `ipv6-icmp`).
pub fn parse_proto(s: &str) -> Result<u8> {
    if let Ok(n) = num::u8_(s) {
        return Ok(n);
    }
    let name = if s.eq_ignore_ascii_case("icmpv6") {
        "ipv6-icmp"
    } else {
        s
    };
    match names::proto_by_name(name) {
        None => Err(Error::syntax(format!("cannot parse '{s}' as a protocol"))),
        Some(0) => Err(Error::syntax(format!("Unsupported protocol '{s}'"))),
        Some(p) => Ok(p),
    }
}

/// A port number or a service name of protocol `proto` (as given).
pub fn parse_port(s: &str, proto: &str) -> Result<u16> {
    let num_err = match num::u16_(s) {
        Ok(p) => return Ok(p),
        Err(e) => e,
    };
    let lookup = || -> Option<u16> {
        let name = strip_escape(s).ok()?;
        let proto_name = match num::u8_(proto) {
            Ok(n) => names::proto_by_number(n)?,
            Err(_) => proto,
        };
        names::service_port(name, proto_name)
    };
    lookup().ok_or_else(|| {
        Error::warned(num_err.msg).then(Error::warned(format!(
            "cannot parse '{s}' as a {proto} port"
        )))
    })
}

/// `port` or `port-port` into the port items.
pub fn tcpudp_port(d: &mut Data, s: &str, proto: &str) -> Result<()> {
    match super::ip::find_range_separator(s)? {
        Some(i) => {
            let to = parse_port(&s[i + 1..], proto)?;
            d.port_to = Some(to);
            d.mark(Opt::PortTo);
            let from = parse_port(&s[..i], proto)?;
            d.port = Some(from);
        }
        None => d.port = Some(parse_port(s, proto)?),
    }
    d.mark(Opt::Port);
    Ok(())
}

/// ipset's `parse_proto_port`: `[proto:]port[-port]`, `icmp:...`,
/// `icmpv6:...`, `proto:0`. Without a protocol, TCP is meant.
pub fn proto_port(d: &mut Data, s: &str) -> Result<()> {
    let Some(i) = proto_sep(s) else {
        d.proto = Some(TCP);
        d.mark(Opt::Proto);
        return tcpudp_port(d, s, "tcp");
    };
    let (ptext, rest) = (&s[..i], &s[i + 1..]);
    let p = parse_proto(ptext)?;
    d.proto = Some(p);
    d.mark(Opt::Proto);
    match p {
        TCP | SCTP | UDP | UDPLITE => tcpudp_port(d, rest, ptext),
        ICMP => {
            if d.family != Some(crate::addr::Family::Inet) {
                return Err(Error::syntax(
                    "Protocol ICMP can be used with family inet only",
                ));
            }
            let tc = match icmp_by_name(ICMP_NAMES, rest) {
                Some(tc) => tc,
                None => icmp_typecode(rest, "ICMP")?,
            };
            d.port = Some(tc);
            d.mark(Opt::Port);
            Ok(())
        }
        ICMPV6 => {
            if d.family != Some(crate::addr::Family::Inet6) {
                return Err(Error::syntax(
                    "Protocol ICMPv6 can be used with family inet6 only",
                ));
            }
            let tc = match icmp_by_name(ICMPV6_NAMES, rest) {
                Some(tc) => tc,
                None => icmp_typecode(rest, "ICMPv6")?,
            };
            d.port = Some(tc);
            d.mark(Opt::Port);
            Ok(())
        }
        _ => {
            if rest != "0" {
                return Err(Error::syntax(format!(
                    "Protocol {ptext} can be used with pseudo port value 0 only."
                )));
            }
            d.port = Some(0);
            d.mark(Opt::Port);
            Ok(())
        }
    }
}

/// bitmap:port's element and range: like [`proto_port`], TCP or UDP only,
/// and the protocol is not kept.
pub fn tcp_udp_port(d: &mut Data, s: &str) -> Result<()> {
    proto_port(d, s)?;
    if !matches!(d.proto, Some(TCP) | Some(UDP)) {
        return Err(Error::syntax("Only protocols TCP and UDP are valid"));
    }
    d.proto = None;
    d.flags &= !Opt::Proto.bit();
    Ok(())
}

/// `from`/`to` of the old bitmap:port syntax: one TCP port.
pub fn single_tcp_port(d: &mut Data, o: Opt, s: &str) -> Result<()> {
    let p = parse_port(s, "tcp")?;
    if o == Opt::PortTo {
        d.port_to = Some(p);
    } else {
        d.port = Some(p);
    }
    d.mark(o);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Family;

    fn pp(fam: Family, s: &str) -> String {
        let mut d = Data {
            family: Some(fam),
            ..Data::default()
        };
        match proto_port(&mut d, s) {
            Ok(()) => format!("{:?} {:?} {:?}", d.proto, d.port, d.port_to),
            Err(e) => e.msg,
        }
    }

    #[test]
    fn proto_port_values() {
        let v4 = Family::Inet;
        let cases = [
            (v4, "80", "Some(6) Some(80) None"),
            (v4, "udp:53", "Some(17) Some(53) None"),
            (v4, "http", "Some(6) Some(80) None"),
            (v4, "tcp:80-90", "Some(6) Some(80) Some(90)"),
            (v4, "icmp:ping", "Some(1) Some(2048) None"),
            (v4, "icmp:echo-req", "Some(1) Some(2048) None"),
            (v4, "icmp:3/13", "Some(1) Some(781) None"),
            (v4, "gre:0", "Some(47) Some(0) None"),
            (v4, "gre:1", "Syntax error: Protocol gre can be used with pseudo port value 0 only."),
            (v4, "icmpv6:ping", "Syntax error: Protocol ICMPv6 can be used with family inet6 only"),
            (Family::Inet6, "icmpv6:ping", "Some(58) Some(32768) None"),
            (v4, "foo:1", "Syntax error: cannot parse 'foo' as a protocol"),
            (v4, "icmp:bogus", "Cannot parse bogus as an ICMP type/code."),
            (
                v4,
                "nosuchport",
                "Syntax error: 'nosuchport' is invalid as number\ncannot parse 'nosuchport' as a tcp port",
            ),
        ];
        for (fam, s, want) in cases {
            assert_eq!(pp(fam, s), want, "{s}");
        }
        assert_eq!(icmp_name(ICMP_NAMES, 0x0800), Some("echo-request"));
        assert_eq!(icmp_name(ICMPV6_NAMES, 0x8000), Some("echo-request"));
    }
}

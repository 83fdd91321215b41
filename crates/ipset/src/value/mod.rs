//! Value parsers: element components and option values, read into [`Data`]
//! as ipset reads them. Separators follow ipset's rule: a separator counts
//! only if the text neither starts nor ends with it.

pub mod ip;
pub mod misc;
pub mod port;

use crate::data::Data;
use crate::error::{Error, Result};
use crate::types::{ElemParse, Opt, TypeInfo};

pub const CIDR_SEP: u8 = b'/';
pub const RANGE_SEP: u8 = b'-';
pub const ELEM_SEP: u8 = b',';
pub const PROTO_SEP: u8 = b':';

/// ipset's `ipset_strchr` for one separator: its first position, unless the
/// text starts or ends with it.
pub fn sep_at(s: &str, sep: u8) -> Option<usize> {
    let b = s.as_bytes();
    if b.is_empty() || b[0] == sep || b[b.len() - 1] == sep {
        return None;
    }
    b.iter().position(|&c| c == sep)
}

pub fn range_sep(s: &str) -> Option<usize> {
    sep_at(s, RANGE_SEP)
}

pub fn elem_sep(s: &str) -> Option<usize> {
    sep_at(s, ELEM_SEP)
}

pub fn proto_sep(s: &str) -> Option<usize> {
    sep_at(s, PROTO_SEP)
}

/// Remove a `[...]` escape around a value.
pub fn strip_escape(s: &str) -> Result<&str> {
    match s.strip_prefix('[') {
        None => Ok(s),
        Some(inner) => inner.strip_suffix(']').ok_or_else(|| {
            Error::syntax(format!("cannot find closing escape character ']' in {s}"))
        }),
    }
}

/// Read one element component with the type's parser for that position.
fn parse_dim(d: &mut Data, how: ElemParse, o: Opt, s: &str) -> Result<()> {
    match how {
        ElemParse::Ip4Single6 => ip::ip4_single6(d, o, s),
        ElemParse::SingleIp => ip::parse_ip(d, o, s, ip::AddrShape::Plain),
        ElemParse::Ip => ip::parse_ip(d, o, s, ip::AddrShape::Any),
        ElemParse::Ip4Net6 => ip::ip4_net6(d, o, s),
        ElemParse::Ether => {
            d.ether = Some(misc::ether(s)?);
            d.mark(Opt::Ether);
            Ok(())
        }
        ElemParse::Mark => {
            d.mark = Some(misc::mark(s)?);
            d.mark(Opt::Mark);
            Ok(())
        }
        ElemParse::ProtoPort => port::proto_port(d, s),
        ElemParse::TcpUdpPort => port::tcp_udp_port(d, s),
        ElemParse::Iface => misc::iface(d, s),
        ElemParse::Setname => {
            d.name = Some(misc::setname(s)?);
            d.mark(Opt::Name);
            Ok(())
        }
    }
}

/// ipset's `ipset_parse_elem`: split an element at its separators and read
/// each component.
pub fn parse_elem(d: &mut Data, t: &TypeInfo, s: &str) -> Result<()> {
    let dims = t.dims.len();
    let optional = t.last_elem_optional;
    let a = elem_sep(s);
    if dims == 1 {
        if a.is_some() {
            if t.ty == crate::types::SetType::ListSet {
                return misc::name_compat(d, s);
            }
            return Err(Error::syntax(format!(
                "Elem separator in {s}, but settype {} supports none.",
                t.name
            )));
        }
        return parse_dim(d, t.dims[0].parse, t.dims[0].opt, s);
    }
    let (first, second) = match a {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None if !optional => {
            return Err(Error::syntax(format!(
                "Second element is missing from {s}."
            )))
        }
        None => (s, None),
    };
    let b = second.and_then(elem_sep);
    let (second, third) = match (second, b) {
        (Some(sec), Some(j)) => {
            if dims < 3 {
                return Err(Error::syntax(format!(
                    "Two elem separators in {s}, but settype {} supports one.",
                    t.name
                )));
            }
            (Some(&sec[..j]), Some(&sec[j + 1..]))
        }
        (sec, _) => {
            if dims > 2 && !optional {
                return Err(Error::syntax(format!("Third element is missing from {s}.")));
            }
            (sec, None)
        }
    };
    if third.is_some_and(|x| elem_sep(x).is_some()) {
        return Err(Error::syntax(format!(
            "Three elem separators in {s}, but settype {} supports two.",
            t.name
        )));
    }
    parse_dim(d, t.dims[0].parse, t.dims[0].opt, first)?;
    if let Some(x) = second {
        parse_dim(d, t.dims[1].parse, t.dims[1].opt, x)?;
    }
    if let Some(x) = third {
        parse_dim(d, t.dims[2].parse, t.dims[2].opt, x)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::SetType;

    #[test]
    fn separators_ignore_leading_and_trailing() {
        assert_eq!(sep_at("1.1.1.1-2.2.2.2", RANGE_SEP), Some(7));
        assert_eq!(sep_at("-1", RANGE_SEP), None);
        assert_eq!(sep_at("1-", RANGE_SEP), None);
        assert_eq!(sep_at("", RANGE_SEP), None);
    }

    #[test]
    fn element_splitting_messages() {
        let cases = [
            (SetType::HashIpPort, "1.1.1.1", "Syntax error: Second element is missing from 1.1.1.1."),
            (SetType::HashIpPort, "1.1.1.1,", "Syntax error: Second element is missing from 1.1.1.1,."),
            (SetType::HashIpPortIp, "1.1.1.1,80", "Syntax error: Third element is missing from 1.1.1.1,80."),
            (
                SetType::HashIp,
                "1.1.1.1,80",
                "Syntax error: Elem separator in 1.1.1.1,80, but settype hash:ip supports none.",
            ),
            (
                SetType::HashIpPort,
                "1.1.1.1,80,2.2.2.2",
                "Syntax error: Two elem separators in 1.1.1.1,80,2.2.2.2, but settype hash:ip,port supports one.",
            ),
            (
                SetType::HashIpPortIp,
                "1.1.1.1,80,2.2.2.2,3",
                "Syntax error: Three elem separators in 1.1.1.1,80,2.2.2.2,3, but settype hash:ip,port,ip supports two.",
            ),
        ];
        for (t, s, want) in cases {
            let mut d = Data::default();
            let got = parse_elem(&mut d, t.info(), s).unwrap_err().msg;
            assert_eq!(got, want, "{s}");
        }
        let mut d = Data::default();
        parse_elem(&mut d, SetType::BitmapIpMac.info(), "2.0.0.1").unwrap();
        assert_eq!(d.ether, None);
        let mut d = Data::default();
        parse_elem(&mut d, SetType::ListSet.info(), "a,before,b").unwrap();
        assert_eq!(
            (d.name.as_deref(), d.nameref.as_deref(), d.before),
            (Some("a"), Some("b"), true)
        );
    }
}

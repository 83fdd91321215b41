//! How ipset writes elements, member values and header options.

use crate::addr::{self, Net};
use crate::data::Data;
use crate::model::{Ext, Header, Key, Params};
use crate::types::{kw, Keyword, SetType};
use crate::value::port::{self, ICMPV6_NAMES, ICMP_NAMES};
use ruleset::names;
use std::net::IpAddr;

/// An address component: with `/prefix` only for net components.
fn ip_text(n: &Net, show_prefix: bool) -> String {
    if show_prefix {
        addr::net_text(n)
    } else {
        addr::ntop(n.addr)
    }
}

/// `proto:port` (`tcp:80`, `icmp:echo-request`, `gre:0`).
pub fn proto_port_text(proto: u8, portv: u16) -> String {
    let pname = names::proto_by_number(proto)
        .map(str::to_string)
        .unwrap_or_else(|| proto.to_string());
    let rest = match proto {
        port::ICMP => port::icmp_name(ICMP_NAMES, portv)
            .map(str::to_string)
            .unwrap_or_else(|| format!("{}/{}", portv >> 8, portv & 0xff)),
        port::ICMPV6 => port::icmp_name(ICMPV6_NAMES, portv)
            .map(str::to_string)
            .unwrap_or_else(|| format!("{}/{}", portv >> 8, portv & 0xff)),
        _ => portv.to_string(),
    };
    format!("{pname}:{rest}")
}

pub fn mac_text(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A member's element text, as listings print it.
pub fn key_text(ty: SetType, k: &Key, e: &Ext) -> String {
    let (n1, n2) = ty.net_dims();
    let mut parts: Vec<String> = Vec::with_capacity(3);
    if let Some(ip) = &k.ip {
        parts.push(ip_text(ip, n1));
    }
    if ty == SetType::BitmapIpMac {
        if let Some(m) = &e.mac {
            parts.push(mac_text(m));
        }
    }
    if let Some(m) = &k.mac {
        parts.push(mac_text(m));
    }
    if let Some(m) = k.mark {
        parts.push(format!("0x{m:08x}"));
    }
    if let Some(p) = &k.port {
        parts.push(if ty == SetType::BitmapPort {
            p.port.to_string()
        } else {
            proto_port_text(p.proto, p.port)
        });
    }
    if let Some(i) = &k.iface {
        parts.push(if i.physdev {
            format!("physdev:{}", i.name)
        } else {
            i.name.clone()
        });
    }
    if let Some(ip2) = &k.ip2 {
        parts.push(ip_text(ip2, n2));
    }
    if let Some(s) = &k.set {
        parts.push(s.clone());
    }
    parts.join(",")
}

/// The element as given in a command (for "X is in set Y." messages).
pub fn data_text(ty: SetType, d: &Data) -> String {
    let ip = |a: Option<IpAddr>, cidr: Option<u8>, to: Option<IpAddr>| {
        let Some(a) = a else { return String::new() };
        let host = matches!(a, IpAddr::V4(_)).then_some(32).unwrap_or(128);
        let c = cidr.unwrap_or(host);
        let one = |x: IpAddr| {
            if c == host {
                addr::ntop(x)
            } else {
                format!("{}/{c}", addr::ntop(x))
            }
        };
        match to {
            Some(t) => format!("{}-{}", one(a), one(t)),
            None => one(a),
        }
    };
    let port = |d: &Data| {
        let mut s = match (d.proto, ty) {
            (_, SetType::BitmapPort) | (None, _) => d.port.unwrap_or(0).to_string(),
            (Some(p), _) => proto_port_text(p, d.port.unwrap_or(0)),
        };
        if let Some(t) = d.port_to {
            s.push_str(&format!("-{t}"));
        }
        s
    };
    let info = ty.info();
    let mut parts = Vec::new();
    for (i, dim) in info.dims.iter().enumerate() {
        if i > 0 && info.last_elem_optional && d.ether.is_none() {
            break;
        }
        parts.push(match dim.opt {
            crate::types::Opt::Ip => ip(d.ip, d.cidr, d.ip_to),
            crate::types::Opt::Ip2 => ip(d.ip2, d.cidr2, d.ip2_to),
            crate::types::Opt::Port => port(d),
            crate::types::Opt::Ether => d.ether.as_ref().map(mac_text).unwrap_or_default(),
            crate::types::Opt::Mark => format!("0x{:08x}", d.mark.unwrap_or(0)),
            crate::types::Opt::Iface => format!(
                "{}{}",
                if d.physdev { "physdev:" } else { "" },
                d.iface.clone().unwrap_or_default()
            ),
            _ => {
                let mut s = d.name.clone().unwrap_or_default();
                // ipset reads "before" from a flag word its parser never
                // sets, so these messages always say "after".
                if let Some(r) = &d.nameref {
                    s.push_str(&format!(" after {r}"));
                }
                s
            }
        });
    }
    parts.join(",")
}

/// One printed value: the keyword and its text (`None` for flags).
pub type Item = (&'static str, Option<String>);

/// The values a member line prints, in the type's add-keyword order.
pub fn member_items(h: &Header, e: &Ext, now: u64) -> Vec<Item> {
    let mut out = Vec::new();
    for k in h.ty.info().add.args {
        let v: Option<Option<String>> = match *k {
            kw::TIMEOUT => e.expiry.shown(now).map(|t| Some(t.to_string())),
            kw::NOMATCH => e.nomatch.then_some(None),
            kw::WILDCARD => e.wildcard.then_some(None),
            kw::PACKETS => h.counters.then(|| Some(e.packets.to_string())),
            kw::BYTES => h.counters.then(|| Some(e.bytes.to_string())),
            kw::ADT_COMMENT => e
                .comment
                .as_ref()
                .filter(|c| h.comment && !c.is_empty())
                .map(|c| Some(format!("\"{c}\""))),
            kw::SKBMARK => (h.skbinfo && e.skbmark != 0).then(|| {
                let (m, mask) = ((e.skbmark >> 32) as u32, e.skbmark as u32);
                Some(if mask == u32::MAX {
                    format!("0x{m:x}")
                } else {
                    format!("0x{m:x}/0x{mask:x}")
                })
            }),
            kw::SKBPRIO => (h.skbinfo && e.skbprio != 0)
                .then(|| Some(format!("{:x}:{:x}", e.skbprio >> 16, e.skbprio & 0xffff))),
            kw::SKBQUEUE => (h.skbinfo && e.skbqueue != 0).then(|| Some(e.skbqueue.to_string())),
            _ => None,
        };
        if let Some(v) = v {
            out.push((k.name, v));
        }
    }
    out
}

/// Header values in the type's create-keyword order; `quoted_hex` quotes
/// hex numbers (JSON output).
pub fn header_items(h: &Header, quoted_hex: bool) -> Vec<Item> {
    let mut out = Vec::new();
    let q = if quoted_hex { "\"" } else { "" };
    for k in h.ty.info().create.args {
        if let Some(v) = header_value(h, k, q) {
            out.push((k.name, v));
        }
    }
    out
}

fn header_value(h: &Header, k: &Keyword, q: &str) -> Option<Option<String>> {
    k.print?;
    let some = |s: String| Some(Some(s));
    let flag = |b: bool| b.then_some(None);
    match (&h.params, *k) {
        (_, kw::FAMILY) => h
            .family
            .filter(|_| h.ty.info().family == crate::types::TypeFamily::Both)
            .and_then(|f| some(f.name().to_string())),
        (Params::Hash { hashsize, .. }, kw::HASHSIZE) => some(hashsize.to_string()),
        (Params::Hash { maxelem, .. }, kw::MAXELEM) => some(maxelem.to_string()),
        (
            Params::Hash {
                netmask: Some(n), ..
            },
            kw::NETMASK,
        ) => some(n.to_string()),
        (Params::BitmapIp { netmask, .. }, kw::NETMASK) if *netmask != 32 => {
            some(netmask.to_string())
        }
        (
            Params::Hash {
                netmask: None,
                bitmask,
                ..
            },
            kw::BITMASK,
        ) => {
            let fam = h.family.unwrap_or_default();
            (*bitmask != addr::netmask_addr(fam, fam.bits())).then(|| Some(addr::ntop(*bitmask)))
        }
        (
            Params::Hash {
                markmask: Some(m), ..
            },
            kw::MARKMASK,
        ) => some(format!("0x{m:08x}")),
        (_, kw::TIMEOUT) => h.timeout.and_then(|t| some(t.to_string())),
        (_, kw::COUNTERS) => flag(h.counters),
        (_, kw::COMMENT) => flag(h.comment),
        (_, kw::FORCEADD) => flag(h.forceadd),
        (_, kw::SKBINFO) => flag(h.skbinfo),
        (Params::Hash { bucketsize, .. }, kw::BUCKETSIZE) => some(bucketsize.to_string()),
        (Params::Hash { initval, .. }, kw::INITVAL) => some(format!("{q}0x{initval:08x}{q}")),
        (Params::BitmapIp { first, last, .. }, kw::IPRANGE)
        | (Params::BitmapIpMac { first, last }, kw::IPRANGE) => some(format!(
            "{}-{}",
            std::net::Ipv4Addr::from(*first),
            std::net::Ipv4Addr::from(*last)
        )),
        (Params::BitmapPort { first, last }, kw::PORTRANGE) => some(format!("{first}-{last}")),
        (Params::List { size }, kw::SIZE) => some(size.to_string()),
        _ => None,
    }
}

/// A rough "Size in memory" (the kernel's allocation sizes are not
/// modelled; listings compare it loosely, as ipset's own tests do).
pub fn mem_size(h: &Header, members: usize) -> usize {
    let ext = 8 * usize::from(h.timeout.is_some())
        + 16 * usize::from(h.counters)
        + 8 * usize::from(h.comment)
        + 16 * usize::from(h.skbinfo);
    match &h.params {
        Params::Hash { hashsize, .. } => {
            let elem = if h.family == Some(addr::Family::Inet6) {
                24
            } else {
                8
            };
            200 + *hashsize as usize * 8 / 16 + members * (elem + ext)
        }
        Params::BitmapIp {
            first, last, hosts, ..
        } => {
            let n = ((u64::from(*last) - u64::from(*first)) / u64::from(*hosts) + 1) as usize;
            100 + n.div_ceil(64) * 8 + n * ext
        }
        Params::BitmapIpMac { first, last } => {
            let n = (last - first) as usize + 1;
            100 + n.div_ceil(64) * 8 + n * (8 + ext)
        }
        Params::BitmapPort { first, last } => {
            let n = usize::from(last - first) + 1;
            100 + n.div_ceil(64) * 8 + n * ext
        }
        Params::List { .. } => 88 + members * (24 + ext),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proto_port_names() {
        assert_eq!(proto_port_text(6, 80), "tcp:80");
        assert_eq!(proto_port_text(47, 0), "gre:0");
        assert_eq!(proto_port_text(1, 0x0800), "icmp:echo-request");
        assert_eq!(proto_port_text(1, 0x0a0b), "icmp:10/11");
        assert_eq!(proto_port_text(58, 0x0104), "ipv6-icmp:port-unreachable");
        assert_eq!(proto_port_text(253, 0), "253:0");
        assert_eq!(mac_text(&[0, 0x0a, 0, 0, 0, 0xff]), "00:0A:00:00:00:FF");
    }
}

//! From a parsed element to the members it stands for, as the kernel's
//! per-type element handlers compute them: masks, ranges walked address by
//! address or cut into CIDR blocks, port ranges, and the checks that refuse
//! an element (zero values, bad prefixes, ranges a family cannot take).
//!
//! The result is a product of per-component sequences, iterated in the
//! kernel's order (first address, port, second address), counted without
//! iterating, and tested for membership (so a huge `del -exist` range can
//! scan the set instead of the range).

mod seq;

pub use seq::{AddrSeq, Expansion, PortSeq};

use super::entry::{Iface, Key, ProtoPort};
use super::header::{Header, Params};
use crate::addr::{self, Family, Net};
use crate::data::Data;
use crate::error::Kernel;
use crate::types::SetType;
use crate::value::port::{self, with_ports};
use std::net::{IpAddr, Ipv4Addr};

/// add, del or test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adt {
    Add,
    Del,
    Test,
}

fn v4(a: IpAddr) -> u32 {
    match a {
        IpAddr::V4(a) => u32::from(a),
        IpAddr::V6(_) => 0,
    }
}

fn net4(a: u32, prefix: u8) -> Net {
    Net {
        addr: IpAddr::V4(Ipv4Addr::from(a)),
        prefix,
    }
}

/// The kernel's range walk into CIDR blocks (`zero_ok`: a whole-space range
/// is one /0 block).
fn blocks4(from: u32, to: u32, zero_ok: bool) -> Vec<Net> {
    let mut out = Vec::new();
    let mut ip = from;
    loop {
        let (c, last) = if zero_ok {
            addr::range_to_cidr0(ip, to)
        } else {
            addr::range_to_cidr(ip, to)
        };
        out.push(net4(ip, c));
        if last >= to {
            break;
        }
        ip = last + 1;
    }
    out
}

type R<T> = Result<T, Kernel>;

/// Shared checks of the extension values against the set's extensions.
pub fn check_extensions(h: &Header, d: &Data) -> R<()> {
    if d.timeout.is_some() && h.timeout.is_none() {
        return Err(Kernel::Timeout);
    }
    if (d.packets.is_some() || d.bytes.is_some()) && !h.counters {
        return Err(Kernel::Counter);
    }
    if d.comment.is_some() && !h.comment {
        return Err(Kernel::Comment);
    }
    if (d.skbmark.is_some() || d.skbprio.is_some() || d.skbqueue.is_some()) && !h.skbinfo {
        return Err(Kernel::Skbinfo);
    }
    Ok(())
}

/// The proto/port of an element after the kernel's normalisation (port kept
/// only for protocols with ports and for ICMP of the set's family).
fn proto_port(d: &Data, family: Family) -> R<(u8, u16, bool)> {
    let Some(p) = d.proto else {
        return Err(Kernel::MissingProto);
    };
    if p == 0 {
        return Err(Kernel::InvalidProto);
    }
    let icmp = if family == Family::Inet {
        port::ICMP
    } else {
        port::ICMPV6
    };
    let wp = with_ports(p);
    let portv = if wp || p == icmp {
        d.port.unwrap_or(0)
    } else {
        0
    };
    Ok((p, portv, wp))
}

/// Port sequence: a range only for protocols with ports and a `to` port.
fn port_seq(p: u8, from: u16, d: &Data, ranged: bool) -> PortSeq {
    let (mut a, mut b) = (from, from);
    if ranged {
        if let Some(to) = d.port_to {
            b = to;
            if a > b {
                std::mem::swap(&mut a, &mut b);
            }
        }
    }
    PortSeq {
        proto: p,
        from: a,
        to: b,
    }
}

/// The first address's walk for "host" components of IPv4 hash types:
/// a range or CIDR gives every address, step 1.
fn host_range4(ip: u32, d: &Data) -> R<(u32, u32)> {
    if let Some(t) = d.ip_to {
        let t = v4(t);
        Ok(if ip > t { (t, ip) } else { (ip, t) })
    } else if let Some(c) = d.cidr {
        if c == 0 || c > 32 {
            return Err(Kernel::InvalidCidr);
        }
        Ok(addr::block4(ip, c))
    } else {
        Ok((ip, ip))
    }
}

/// A net component (IPv4): a range cut into blocks, or one block.
fn net_range4(ip: u32, to: Option<IpAddr>, cidr: u8, zero_ok: bool) -> R<AddrSeq> {
    match to {
        Some(t) => {
            let (mut a, mut b) = (ip, v4(t));
            if b < a {
                std::mem::swap(&mut a, &mut b);
            }
            if a == 0 && b == u32::MAX {
                return Err(Kernel::HashRange);
            }
            Ok(AddrSeq::Blocks(blocks4(a, b, zero_ok)))
        }
        None => {
            let (a, b) = addr::block4(ip, cidr);
            Ok(AddrSeq::Blocks(blocks4(a, b, zero_ok)))
        }
    }
}

/// Check a prefix given for a net component.
fn net_cidr(c: Option<u8>, bits: u8, zero_ok: bool) -> R<u8> {
    match c {
        None => Ok(bits),
        Some(c) if c > bits || (c == 0 && !zero_ok) => Err(Kernel::InvalidCidr),
        Some(c) => Ok(c),
    }
}

/// IPv6 host components take no ranges and only a /128 prefix.
fn host6_checks(d: &Data) -> R<()> {
    if d.ip_to.is_some() {
        return Err(Kernel::HashRangeUnsupported);
    }
    if d.cidr.is_some_and(|c| c != 128) {
        return Err(Kernel::InvalidCidr);
    }
    Ok(())
}

/// Compute the members an element stands for. `hdr` is the set's header.
pub fn expand(hdr: &Header, d: &Data, adt: Adt) -> R<Expansion> {
    if adt == Adt::Add {
        check_extensions(hdr, d)?;
    }
    let family = hdr.family.unwrap_or(Family::Inet);
    let bits = family.bits();
    let mut base = Key::default();
    let ip = d.ip.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let nomatch = d.nomatch;
    let (bitmask, netmask) = match &hdr.params {
        Params::Hash {
            bitmask, netmask, ..
        } => (*bitmask, *netmask),
        _ => (addr::netmask_addr(family, bits), None),
    };
    let host_prefix = netmask.unwrap_or(bits);
    let single = |k: Key| Expansion {
        nomatch,
        ..Expansion::single(k)
    };
    let ranged = adt != Adt::Test;
    let v6 = family == Family::Inet6;
    match hdr.ty {
        SetType::HashIp => {
            if v6 {
                host6_checks(d)?;
                let a = addr::and(ip, bitmask);
                if addr::is_zero(a) {
                    return Err(Kernel::HashElem);
                }
                base.ip = Some(Net {
                    addr: a,
                    prefix: host_prefix,
                });
                return Ok(single(base));
            }
            let mut a = v4(addr::and(ip, bitmask));
            if a == 0 {
                return Err(Kernel::HashElem);
            }
            if !ranged {
                base.ip = Some(net4(a, host_prefix));
                return Ok(single(base));
            }
            let mut to = a;
            if let Some(t) = d.ip_to {
                to = v4(t);
                if a > to {
                    if to == 0 {
                        return Err(Kernel::HashElem);
                    }
                    std::mem::swap(&mut a, &mut to);
                }
            } else if let Some(c) = d.cidr {
                if c == 0 || c > 32 {
                    return Err(Kernel::InvalidCidr);
                }
                (a, to) = addr::block4(a, c);
            }
            let step = if host_prefix == 32 {
                1
            } else {
                1u32 << (32 - host_prefix)
            };
            Ok(Expansion {
                ip: Some(AddrSeq::Hosts {
                    from: a,
                    to,
                    step,
                    prefix: host_prefix,
                    mask: false,
                }),
                ..single(base)
            })
        }
        SetType::HashIpMark => {
            let markmask = match hdr.params {
                Params::Hash { markmask, .. } => markmask.unwrap_or(u32::MAX),
                _ => u32::MAX,
            };
            let mark = d.mark.unwrap_or(0) & markmask;
            base.mark = Some(mark);
            if v6 {
                host6_checks(d)?;
                base.ip = Some(Net::host(ip));
                return Ok(single(base));
            }
            let a = v4(ip);
            if mark == 0 && a == 0 {
                return Err(Kernel::HashElem);
            }
            if !ranged || (d.ip_to.is_none() && d.cidr.is_none()) {
                base.ip = Some(net4(a, 32));
                return Ok(single(base));
            }
            if d.ip_to
                .is_some_and(|t| a > v4(t) && mark == 0 && v4(t) == 0)
            {
                return Err(Kernel::HashElem);
            }
            let (from, to) = host_range4(a, d)?;
            Ok(Expansion {
                ip: Some(AddrSeq::Hosts {
                    from,
                    to,
                    step: 1,
                    prefix: 32,
                    mask: false,
                }),
                ..single(base)
            })
        }
        SetType::HashIpPort | SetType::HashIpPortIp => {
            let is_ipport = hdr.ty == SetType::HashIpPort;
            if v6 {
                host6_checks(d)?;
            }
            let a = if is_ipport {
                addr::and(ip, bitmask)
            } else {
                ip
            };
            if is_ipport && addr::is_zero(a) {
                return Err(Kernel::Invalid);
            }
            let (p, portv, wp) = proto_port(d, family)?;
            if hdr.ty == SetType::HashIpPortIp {
                base.ip2 = Some(Net::host(d.ip2.unwrap_or(ip)));
            }
            let prefix = if is_ipport { host_prefix } else { bits };
            let plain = !ranged || !(d.ip_to.is_some() || d.cidr.is_some() || d.port_to.is_some());
            if v6 || plain {
                base.ip = Some(Net { addr: a, prefix });
                let ps = port_seq(p, portv, d, ranged && wp && !plain);
                if ps.from == ps.to {
                    base.port = Some(ProtoPort {
                        proto: p,
                        port: portv,
                    });
                    return Ok(single(base));
                }
                return Ok(Expansion {
                    port: Some(ps),
                    ..single(base)
                });
            }
            let (from, to) = host_range4(v4(a), d)?;
            Ok(Expansion {
                ip: Some(AddrSeq::Hosts {
                    from,
                    to,
                    step: 1,
                    prefix,
                    mask: false,
                }),
                port: Some(port_seq(p, portv, d, wp)),
                ..single(base)
            })
        }
        SetType::HashIpPortNet => {
            if v6 {
                host6_checks(d)?;
            }
            let c2 = net_cidr(d.cidr2, bits, false)?;
            let (p, portv, wp) = proto_port(d, family)?;
            let ip2 = d.ip2.unwrap_or(ip);
            let ranges = d.cidr.is_some()
                || d.ip_to.is_some()
                || (wp && d.port_to.is_some())
                || d.ip2_to.is_some();
            if !ranged || !ranges || v6 {
                base.ip = Some(Net::host(ip));
                base.ip2 = Some(Net {
                    addr: addr::mask(ip2, c2),
                    prefix: c2,
                });
                let ps = port_seq(p, portv, d, ranged && wp && v6);
                if ps.from == ps.to {
                    base.port = Some(ProtoPort {
                        proto: p,
                        port: portv,
                    });
                    return Ok(single(base));
                }
                return Ok(Expansion {
                    port: Some(ps),
                    ..single(base)
                });
            }
            let (from, to) = host_range4(v4(ip), d)?;
            let ip2seq = match d.ip2_to {
                Some(_) => net_range4(v4(ip2), d.ip2_to, c2, false)?,
                None => net_range4(v4(ip2), None, c2, false)?,
            };
            Ok(Expansion {
                ip: Some(AddrSeq::Hosts {
                    from,
                    to,
                    step: 1,
                    prefix: 32,
                    mask: false,
                }),
                port: Some(port_seq(p, portv, d, true)),
                ip2: Some(ip2seq),
                ..single(base)
            })
        }
        SetType::HashNet | SetType::HashNetIface | SetType::HashNetPort => {
            let zero_ok = hdr.ty == SetType::HashNetIface;
            if v6 && d.ip_to.is_some() {
                return Err(Kernel::HashRangeUnsupported);
            }
            let c = net_cidr(d.cidr, bits, zero_ok)?;
            let mut wildcard = false;
            if hdr.ty == SetType::HashNetIface {
                base.iface = Some(Iface {
                    name: d.iface.clone().unwrap_or_default(),
                    physdev: d.physdev,
                });
                wildcard = d.wildcard;
            }
            let mut ps = None;
            let mut port_range = false;
            if hdr.ty == SetType::HashNetPort {
                let (p, portv, wp) = proto_port(d, family)?;
                port_range = wp && d.port_to.is_some();
                ps = Some(port_seq(p, portv, d, ranged && port_range));
            }
            let plain = !ranged || (d.ip_to.is_none() && !port_range);
            let seq = if plain || v6 {
                AddrSeq::One(Net {
                    addr: addr::mask(ip, c),
                    prefix: c,
                })
            } else {
                net_range4(v4(ip), d.ip_to, c, false)?
            };
            Ok(Expansion {
                ip: Some(seq),
                port: ps,
                ip2: None,
                base,
                nomatch,
                wildcard,
            })
        }
        SetType::HashNetNet | SetType::HashNetPortNet => {
            let zero_ok = hdr.ty == SetType::HashNetPortNet;
            if v6 && (d.ip_to.is_some() || d.ip2_to.is_some()) {
                return Err(Kernel::HashRangeUnsupported);
            }
            let c1 = net_cidr(d.cidr, bits, zero_ok)?;
            let c2 = net_cidr(d.cidr2, bits, zero_ok)?;
            let ip2 = d.ip2.unwrap_or(ip);
            let mut ps = None;
            let mut port_range = false;
            if hdr.ty == SetType::HashNetPortNet {
                let (p, portv, wp) = proto_port(d, family)?;
                port_range = wp && d.port_to.is_some();
                ps = Some(port_seq(p, portv, d, ranged && port_range));
            }
            let bm = if hdr.ty == SetType::HashNetNet {
                bitmask
            } else {
                addr::netmask_addr(family, bits)
            };
            if v6 {
                let a = addr::and(addr::mask(ip, c1), bm);
                let b = addr::and(addr::mask(ip2, c2), bm);
                if hdr.ty == SetType::HashNetNet && c1 == 128 && addr::is_zero(a) {
                    return Err(Kernel::HashElem);
                }
                return Ok(Expansion {
                    ip: Some(AddrSeq::One(Net {
                        addr: a,
                        prefix: c1,
                    })),
                    port: ps,
                    ip2: Some(AddrSeq::One(Net {
                        addr: b,
                        prefix: c2,
                    })),
                    base,
                    nomatch,
                    wildcard: false,
                });
            }
            let plain = !ranged || (d.ip_to.is_none() && d.ip2_to.is_none() && !port_range);
            if plain {
                let a = addr::and(addr::mask(ip, c1), bm);
                let b = addr::and(addr::mask(ip2, c2), bm);
                return Ok(Expansion {
                    ip: Some(AddrSeq::One(Net {
                        addr: a,
                        prefix: c1,
                    })),
                    port: ps,
                    ip2: Some(AddrSeq::One(Net {
                        addr: b,
                        prefix: c2,
                    })),
                    base,
                    nomatch,
                    wildcard: false,
                });
            }
            Ok(Expansion {
                ip: Some(net_range4(v4(ip), d.ip_to, c1, zero_ok)?),
                port: ps,
                ip2: Some(net_range4(v4(ip2), d.ip2_to, c2, zero_ok)?),
                base,
                nomatch,
                wildcard: false,
            })
        }
        SetType::HashMac => {
            let m = d.ether.unwrap_or([0; 6]);
            if m == [0; 6] {
                return Err(Kernel::HashElem);
            }
            base.mac = Some(m);
            Ok(single(base))
        }
        SetType::HashIpMac => {
            let m = d.ether.unwrap_or([0; 6]);
            if m == [0; 6] {
                return Err(Kernel::HashElem);
            }
            base.ip = Some(Net::host(ip));
            base.mac = Some(m);
            Ok(single(base))
        }
        SetType::BitmapIp => bitmap_ip(hdr, d, adt, base),
        SetType::BitmapIpMac => {
            let Params::BitmapIpMac { first, last } = hdr.params else {
                return Err(Kernel::Invalid);
            };
            let a = v4(ip);
            if a < first || a > last {
                return Err(Kernel::BitmapRange);
            }
            base.ip = Some(net4(a, 32));
            Ok(single(base))
        }
        SetType::BitmapPort => {
            let Params::BitmapPort { first, last } = hdr.params else {
                return Err(Kernel::Invalid);
            };
            let mut a = d.port.unwrap_or(0);
            if a < first || a > last {
                return Err(Kernel::BitmapRange);
            }
            if !ranged {
                base.port = Some(ProtoPort { proto: 0, port: a });
                return Ok(single(base));
            }
            let mut b = a;
            if let Some(t) = d.port_to {
                b = t;
                if a > b {
                    std::mem::swap(&mut a, &mut b);
                    if a < first {
                        return Err(Kernel::BitmapRange);
                    }
                }
            }
            if b > last {
                return Err(Kernel::BitmapRange);
            }
            Ok(Expansion {
                port: Some(PortSeq {
                    proto: 0,
                    from: a,
                    to: b,
                }),
                ..single(base)
            })
        }
        SetType::ListSet => {
            base.set = d.name.clone();
            Ok(single(base))
        }
    }
}

fn bitmap_ip(hdr: &Header, d: &Data, adt: Adt, base: Key) -> R<Expansion> {
    let Params::BitmapIp {
        first,
        last,
        netmask,
        hosts,
    } = hdr.params
    else {
        return Err(Kernel::Invalid);
    };
    let mut a = v4(d.ip.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED)));
    if a < first || a > last {
        return Err(Kernel::BitmapRange);
    }
    let one = |x: u32| {
        Expansion::single(Key {
            ip: Some(net4(x & addr::mask4(netmask), netmask)),
            ..base.clone()
        })
    };
    if adt == Adt::Test {
        return Ok(one(a));
    }
    let mut to = a;
    if let Some(t) = d.ip_to {
        to = v4(t);
        if a > to {
            std::mem::swap(&mut a, &mut to);
            if a < first {
                return Err(Kernel::BitmapRange);
            }
        }
    } else if let Some(c) = d.cidr {
        if c == 0 || c > 32 {
            return Err(Kernel::InvalidCidr);
        }
        (a, to) = addr::block4(a, c);
    }
    if to > last {
        return Err(Kernel::BitmapRange);
    }
    Ok(Expansion {
        ip: Some(AddrSeq::Hosts {
            from: a,
            to,
            step: hosts,
            prefix: netmask,
            mask: true,
        }),
        ..Expansion::single(base)
    })
}

#[cfg(test)]
mod tests;

//! ipset sets as native nftables sets: each set type and option maps to an
//! nftables set (key fields and their concatenation, `interval`, default
//! timeout, per-element counter, size), and each member to its key bytes.
//! The mapping follows the translations ipset's maintainers give
//! (`ipset-translate`, checked in `tests/ipset_xlate.rs`).
//!
//! Refused, with the reason (see docs/ipset.md):
//! - list:set: an nftables set cannot hold sets (a rule would need one
//!   lookup per member set);
//! - `forceadd`: when full, nftables refuses an element instead of
//!   replacing one (packet-path adds could not evict);
//! - `skbinfo`, `markmask`, a `bitmask` that is not a prefix: no per-element
//!   skb values, no masked key, no non-contiguous interval in nftables sets;
//! - `nomatch` members: nftables sets have no exception entries;
//! - bitmap:ip,mac members without a MAC: the key needs one.
//!
//! Key layout: fields in ipset's element order (address, protocol, port,
//! second address; address and MAC; address and mark; network and
//! interface). In a concatenation each field is padded to 4 bytes. Marks
//! are in host byte order (as `meta mark` loads them), everything else in
//! network order; an ICMP member's port is `type << 8 | code`.

mod decode;

pub use decode::{decode_key, Decoded};

use ipset::addr::{self, Family, Net};
use ipset::error::Error;
use ipset::model::{Entry, Header, Params};
use ipset::types::SetType;
use std::net::IpAddr;

/// One key field of a set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Ipv4Addr,
    Ipv6Addr,
    InetProto,
    InetService,
    EtherAddr,
    Mark,
    Ifname,
}

/// Bits between field types of a concatenated type (nftables' TYPE_BITS).
const TYPE_BITS: u32 = 6;

impl Field {
    /// nftables' data type id.
    pub fn type_id(self) -> u32 {
        match self {
            Field::Ipv4Addr => 7,
            Field::Ipv6Addr => 8,
            Field::EtherAddr => 9,
            Field::InetProto => 12,
            Field::InetService => 13,
            Field::Mark => 19,
            Field::Ifname => 41,
        }
    }

    /// Length in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            Field::Ipv4Addr | Field::Mark => 4,
            Field::Ipv6Addr | Field::Ifname => 16,
            Field::EtherAddr => 6,
            Field::InetProto => 1,
            Field::InetService => 2,
        }
    }

    /// nftables' name of the type.
    pub fn name(self) -> &'static str {
        match self {
            Field::Ipv4Addr => "ipv4_addr",
            Field::Ipv6Addr => "ipv6_addr",
            Field::EtherAddr => "ether_addr",
            Field::InetProto => "inet_proto",
            Field::InetService => "inet_service",
            Field::Mark => "mark",
            Field::Ifname => "ifname",
        }
    }
}

/// The nftables set an ipset set becomes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetSpec {
    pub fields: Vec<Field>,
    /// Members are ranges (networks): `flags interval`.
    pub interval: bool,
    /// Default element timeout, seconds.
    pub timeout: Option<u32>,
    /// Every element has a counter.
    pub counter: bool,
    /// Maximum number of elements, when not ipset's default.
    pub size: Option<u32>,
}

impl SetSpec {
    pub fn is_concat(&self) -> bool {
        self.fields.len() > 1
    }

    /// The key's data type id (concatenated types packed 6 bits apart).
    pub fn key_type(&self) -> u32 {
        self.fields
            .iter()
            .fold(0, |t, f| (t << TYPE_BITS) | f.type_id())
    }

    /// Field lengths as the set's concat description gives them (bytes).
    pub fn field_lens(&self) -> Vec<u32> {
        self.fields.iter().map(|f| f.bytes()).collect()
    }

    /// The key length: one field's length, or the sum of the fields padded
    /// to 4 bytes each.
    pub fn key_len(&self) -> u32 {
        match self.fields.as_slice() {
            [f] => f.bytes(),
            fs => fs.iter().map(|f| f.bytes().div_ceil(4) * 4).sum(),
        }
    }

    /// `NFT_SET_*` flags.
    pub fn flags(&self) -> u32 {
        let mut fl = 0;
        if self.interval {
            fl |= nft::set::flags::INTERVAL;
        }
        if self.is_concat() {
            fl |= nft::set::flags::CONCAT;
        }
        if self.timeout.is_some() {
            fl |= nft::set::flags::TIMEOUT;
        }
        fl
    }

    /// The nftables set object (the caller adds the batch id and, for a
    /// counter, the per-element counter expression).
    pub fn to_nft(&self, family: nft::Family, table: &str, name: &str) -> nft::Set {
        let mut s = nft::Set::new(family, table, name);
        s.flags = Some(self.flags());
        s.key_type = Some(self.key_type());
        s.key_len = Some(self.key_len());
        s.size = self.size;
        if self.is_concat() {
            s.concat = self.field_lens();
        }
        s.timeout = self.timeout.map(|t| u64::from(t) * 1000);
        s
    }
}

const DEFAULT_MAXELEM: u32 = 65536;

fn refuse(msg: impl Into<String>) -> Error {
    Error::session(msg)
}

/// The nftables set for an ipset header, or ipset's refusal.
pub fn set_spec(h: &Header) -> Result<SetSpec, Error> {
    use Field::*;
    let v6 = h.family == Some(Family::Inet6);
    let ip = if v6 { Ipv6Addr } else { Ipv4Addr };
    let (fields, mut interval) = match h.ty {
        SetType::HashIp | SetType::BitmapIp => (vec![ip], false),
        SetType::HashIpMac | SetType::BitmapIpMac => (vec![ip, EtherAddr], false),
        SetType::HashIpMark => (vec![ip, Mark], false),
        SetType::HashIpPort => (vec![ip, InetProto, InetService], false),
        SetType::HashIpPortIp => (vec![ip, InetProto, InetService, ip], false),
        SetType::HashIpPortNet | SetType::HashNetPortNet => {
            (vec![ip, InetProto, InetService, ip], true)
        }
        SetType::HashMac => (vec![EtherAddr], false),
        SetType::HashNet => (vec![ip], true),
        SetType::HashNetIface => (vec![ip, Ifname], true),
        SetType::HashNetNet => (vec![ip, ip], true),
        SetType::HashNetPort => (vec![ip, InetProto, InetService], true),
        SetType::BitmapPort => (vec![InetService], false),
        SetType::ListSet => {
            return Err(refuse(
                "Set type list:set is not supported: an nftables set cannot contain sets",
            ))
        }
    };
    if h.forceadd {
        return Err(refuse(
            "Option forceadd is not supported: a full nftables set refuses new elements instead of replacing one",
        ));
    }
    if h.skbinfo {
        return Err(refuse(
            "Option skbinfo is not supported: nftables set elements carry no skb mark, priority or queue",
        ));
    }
    let mut size = None;
    match &h.params {
        Params::Hash {
            maxelem,
            netmask,
            bitmask,
            bitmask_given,
            markmask,
            ..
        } => {
            if markmask.is_some_and(|m| m != u32::MAX) {
                return Err(refuse(
                    "Option markmask is not supported: nftables set keys are not masked",
                ));
            }
            if *bitmask_given && addr::mask_len(*bitmask).is_none() {
                return Err(refuse(
                    "Option bitmask is not supported unless it is a netmask: nftables intervals are prefixes",
                ));
            }
            let fam = h.family.unwrap_or_default();
            let prefix = netmask.or_else(|| addr::mask_len(*bitmask));
            if prefix.is_some_and(|p| p < fam.bits()) {
                interval = true;
            }
            if *maxelem != DEFAULT_MAXELEM {
                size = Some(*maxelem);
            }
        }
        Params::BitmapIp { netmask, .. } if *netmask < 32 => interval = true,
        _ => {}
    }
    Ok(SetSpec {
        fields,
        interval,
        timeout: h.timeout,
        counter: h.counters,
        size,
    })
}

/// A member's key: `start` (the key of a plain set) and, in an interval
/// set, the inclusive `end` of every field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElemKey {
    pub start: Vec<u8>,
    pub end: Option<Vec<u8>>,
}

/// The bytes of one key field (at most 16: an IPv6 address, an interface
/// name), kept on the stack: a restore builds a key per member.
#[derive(Clone, Copy)]
struct Part {
    b: [u8; 16],
    n: usize,
}

impl Part {
    fn of(s: &[u8]) -> Part {
        let mut b = [0; 16];
        b[..s.len()].copy_from_slice(s);
        Part { b, n: s.len() }
    }

    fn bytes(&self) -> &[u8] {
        &self.b[..self.n]
    }
}

fn addr_range(n: &Net) -> (Part, Part) {
    match n.addr {
        IpAddr::V4(a) => {
            let v = u32::from(a);
            let m = addr::mask4(n.prefix);
            (
                Part::of(&(v & m).to_be_bytes()),
                Part::of(&(v | !m).to_be_bytes()),
            )
        }
        IpAddr::V6(a) => {
            let v = u128::from(a);
            let m = addr::mask6(n.prefix);
            (
                Part::of(&(v & m).to_be_bytes()),
                Part::of(&(v | !m).to_be_bytes()),
            )
        }
    }
}

/// The key bytes of a member of a set with `spec` (from `set_spec` of the
/// same header), or the refusal.
pub fn element_key(spec: &SetSpec, h: &Header, e: &Entry) -> Result<ElemKey, Error> {
    if e.nomatch {
        return Err(refuse(
            "Element option nomatch is not supported: nftables sets have no exception entries",
        ));
    }
    let k = &e.key;
    let missing = || {
        refuse(format!(
            "Element of set type {} lacks a key field",
            h.ty.name()
        ))
    };
    let pad = spec.is_concat();
    let width = |f: &Field| {
        let b = if pad {
            f.bytes().div_ceil(4) * 4
        } else {
            f.bytes()
        };
        b as usize
    };
    let total: usize = spec.fields.iter().map(width).sum();
    let mut start = Vec::with_capacity(total);
    let mut end = Vec::with_capacity(if spec.interval { total } else { 0 });
    let mut addrs = [k.ip.as_ref(), k.ip2.as_ref()].into_iter().flatten();
    for f in &spec.fields {
        let (lo, hi) = match f {
            Field::Ipv4Addr | Field::Ipv6Addr => {
                let n = addrs.next().ok_or_else(missing)?;
                addr_range(n)
            }
            Field::InetProto => {
                let p = k.port.ok_or_else(missing)?;
                (Part::of(&[p.proto]), Part::of(&[p.proto]))
            }
            Field::InetService => {
                let p = k.port.ok_or_else(missing)?;
                let b = Part::of(&p.port.to_be_bytes());
                (b, b)
            }
            Field::EtherAddr => {
                let m = k.mac.ok_or_else(|| {
                    refuse("Element without MAC address cannot be stored in an nftables set keyed by ether_addr")
                })?;
                (Part::of(&m), Part::of(&m))
            }
            Field::Mark => {
                let m = Part::of(&k.mark.ok_or_else(missing)?.to_ne_bytes());
                (m, m)
            }
            Field::Ifname => {
                let i = k.iface.as_ref().ok_or_else(missing)?;
                if i.physdev {
                    return Err(refuse(
                        "Element option physdev is not supported: nftables has no bridge port name key",
                    ));
                }
                let mut lo = Part::of(i.name.as_bytes());
                lo.n = 16;
                let mut hi = lo;
                if e.wildcard {
                    hi.b[i.name.len()..].fill(0xff);
                }
                (lo, hi)
            }
        };
        let w = width(f);
        let at = start.len();
        start.extend_from_slice(lo.bytes());
        start.resize(at + w, 0);
        if spec.interval {
            end.extend_from_slice(hi.bytes());
            end.resize(at + w, 0);
        }
    }
    Ok(ElemKey {
        start,
        end: spec.interval.then_some(end),
    })
}

#[cfg(test)]
mod tests;

//! The members an element stands for, as a product of per-component
//! sequences: counted, indexed and tested for membership without iterating.

use crate::addr::{self, Net};
use crate::model::entry::{Key, ProtoPort};
use std::net::{IpAddr, Ipv4Addr};

/// The values one address component takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AddrSeq {
    One(Net),
    /// `from, from+step, ...` up to `to`; each stored as `mask(addr)/prefix`
    /// (`mask` applies the bitmap netmask; hash types store the address).
    Hosts {
        from: u32,
        to: u32,
        step: u32,
        prefix: u8,
        mask: bool,
    },
    /// CIDR blocks, in order.
    Blocks(Vec<Net>),
}

impl AddrSeq {
    fn count(&self) -> u128 {
        match self {
            AddrSeq::One(_) => 1,
            AddrSeq::Hosts { from, to, step, .. } => {
                if to < from {
                    0
                } else {
                    u128::from((to - from) / step) + 1
                }
            }
            AddrSeq::Blocks(b) => b.len() as u128,
        }
    }

    fn nth(&self, i: u128) -> Net {
        match self {
            AddrSeq::One(n) => *n,
            AddrSeq::Hosts {
                from,
                step,
                prefix,
                mask,
                ..
            } => {
                let a = from + (i as u32) * step;
                let a = if *mask { a & addr::mask4(*prefix) } else { a };
                Net {
                    addr: IpAddr::V4(Ipv4Addr::from(a)),
                    prefix: *prefix,
                }
            }
            AddrSeq::Blocks(b) => b[i as usize],
        }
    }

    fn contains(&self, n: &Net) -> bool {
        match self {
            AddrSeq::One(x) => x == n,
            AddrSeq::Hosts {
                from,
                to,
                step,
                prefix,
                mask,
            } => {
                let IpAddr::V4(a) = n.addr else { return false };
                if n.prefix != *prefix {
                    return false;
                }
                let a = u32::from(a);
                if *mask {
                    // Bitmap: member block `a` is hit if some walked address
                    // falls into it.
                    let m = addr::mask4(*prefix);
                    let (lo, hi) = (a, a | !m);
                    let lo = lo.max(*from);
                    if lo > hi.min(*to) {
                        return false;
                    }
                    let first = from + (lo - from).div_ceil(*step) * step;
                    first >= lo && first <= hi.min(*to)
                } else {
                    a >= *from && a <= *to && (a - from) % step == 0
                }
            }
            AddrSeq::Blocks(b) => b.contains(n),
        }
    }
}

/// The values of the port component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortSeq {
    pub proto: u8,
    pub from: u16,
    pub to: u16,
}

/// All members an element stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expansion {
    pub ip: Option<AddrSeq>,
    pub port: Option<PortSeq>,
    pub ip2: Option<AddrSeq>,
    /// The fixed components (mark, MAC, interface, set name).
    pub base: Key,
    /// `nomatch` given.
    pub nomatch: bool,
    /// `wildcard` given (hash:net,iface).
    pub wildcard: bool,
}

impl Expansion {
    pub(crate) fn single(base: Key) -> Expansion {
        Expansion {
            ip: None,
            port: None,
            ip2: None,
            base,
            nomatch: false,
            wildcard: false,
        }
    }

    /// Number of members (no iteration).
    pub fn count(&self) -> u128 {
        let a = self.ip.as_ref().map_or(1, AddrSeq::count);
        let p = self
            .port
            .map_or(1, |p| u128::from(p.to.saturating_sub(p.from)) + 1);
        let b = self.ip2.as_ref().map_or(1, AddrSeq::count);
        a * p * b
    }

    /// The `i`-th member in the kernel's order (first address outermost).
    pub fn nth(&self, i: u128) -> Key {
        let nb = self.ip2.as_ref().map_or(1, AddrSeq::count);
        let np = self
            .port
            .map_or(1, |p| u128::from(p.to.saturating_sub(p.from)) + 1);
        let (ia, rest) = (i / (np * nb), i % (np * nb));
        let (ip_, ib) = (rest / nb, rest % nb);
        let mut k = self.base.clone();
        if let Some(a) = &self.ip {
            k.ip = Some(a.nth(ia));
        }
        if let Some(p) = self.port {
            k.port = Some(ProtoPort {
                proto: p.proto,
                port: p.from + ip_ as u16,
            });
        }
        if let Some(b) = &self.ip2 {
            k.ip2 = Some(b.nth(ib));
        }
        k
    }

    pub fn iter(&self) -> impl Iterator<Item = Key> + '_ {
        (0..self.count()).map(move |i| self.nth(i))
    }

    /// Whether `k` is one of the members.
    pub fn contains(&self, k: &Key) -> bool {
        let dim = |seq: &Option<AddrSeq>, v: &Option<Net>| match (seq, v) {
            (Some(s), Some(n)) => s.contains(n),
            (None, _) => true,
            (Some(_), None) => false,
        };
        let port_ok = match (self.port, k.port) {
            (Some(p), Some(kp)) => kp.proto == p.proto && kp.port >= p.from && kp.port <= p.to,
            (None, _) => true,
            (Some(_), None) => false,
        };
        dim(&self.ip, &k.ip)
            && port_ok
            && dim(&self.ip2, &k.ip2)
            && k.mark == self.base.mark
            && k.mac == self.base.mac
            && k.iface == self.base.iface
            && k.set == self.base.set
    }
}

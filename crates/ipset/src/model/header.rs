//! A set's header: what `create` fixed, after the kernel's checks and
//! normalisation (hash size rounded, bucket size clamped, bitmap range
//! aligned), and the comparison `create -exist` uses.

use crate::addr::{self, Family};
use crate::data::Data;
use crate::error::{Error, Kernel, Result};
use crate::types::SetType;
use std::net::{IpAddr, Ipv4Addr};

/// Type-specific parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Params {
    Hash {
        /// Buckets (a power of two, at least 64).
        hashsize: u32,
        maxelem: u32,
        /// `netmask` given (hash:ip, hash:ip,port, hash:net,net).
        netmask: Option<u8>,
        /// The effective mask: from netmask or bitmask, all ones otherwise.
        bitmask: IpAddr,
        /// `bitmask` given.
        bitmask_given: bool,
        /// hash:ip,mark only.
        markmask: Option<u32>,
        bucketsize: u8,
        initval: u32,
    },
    BitmapIp {
        first: u32,
        last: u32,
        /// Prefix length of the blocks stored (32: single addresses).
        netmask: u8,
        /// Addresses per member.
        hosts: u32,
    },
    BitmapIpMac {
        first: u32,
        last: u32,
    },
    BitmapPort {
        first: u16,
        last: u16,
    },
    List {
        size: u32,
    },
}

/// Everything `create` fixed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub ty: SetType,
    /// None for family-neutral types (bitmap:port, hash:mac, list:set).
    pub family: Option<Family>,
    pub params: Params,
    /// Default timeout (seconds) of a set with timeout support.
    pub timeout: Option<u32>,
    pub counters: bool,
    pub comment: bool,
    pub skbinfo: bool,
    pub forceadd: bool,
}

/// Largest timeout the kernel keeps (seconds).
pub const MAX_TIMEOUT: u32 = (u32::MAX >> 1) / 1000;
const DEFAULT_HASHSIZE: u32 = 1024;
const MIN_HASHSIZE: u32 = 64;
const DEFAULT_MAXELEM: u32 = 65536;
const BUCKET_INIT: u8 = 2;
const BUCKET_MAX: u8 = 12;
/// Largest bitmap (members).
const BITMAP_MAX: u64 = 65536;
const LIST_DEFAULT_SIZE: u32 = 8;
const LIST_MIN_SIZE: u32 = 4;

fn v4(a: Option<IpAddr>) -> u32 {
    match a {
        Some(IpAddr::V4(a)) => u32::from(a),
        _ => 0,
    }
}

/// The kernel's `range_to_mask`: the mask of the smallest block holding
/// `from..=to`, and its prefix length.
fn range_to_mask(from: u32, to: u32) -> (u32, u8) {
    let mut mask: u32 = 0xFFFF_FFFE;
    let mut bits: u8 = 32;
    loop {
        bits -= 1;
        if bits == 0 || mask == 0 || (to & mask) == from {
            break;
        }
        mask <<= 1;
    }
    (mask, bits)
}

impl Header {
    /// Build a header from create options, with the kernel's checks.
    /// `initval` is used when the command gives none.
    pub fn create(ty: SetType, d: &Data, initval: u32) -> Result<Header> {
        let family = if ty.info().family == crate::types::TypeFamily::Unspec {
            None
        } else {
            Some(d.family.unwrap_or(Family::Inet))
        };
        let params = match ty {
            SetType::BitmapIp | SetType::BitmapIpMac => {
                let mut first = v4(d.ip);
                let mut last;
                if d.ip_to.is_some() {
                    last = v4(d.ip_to);
                    if first > last {
                        std::mem::swap(&mut first, &mut last);
                    }
                } else if let Some(c) = d.cidr {
                    if c >= 32 {
                        return Err(Kernel::InvalidCidr.into());
                    }
                    (first, last) = addr::block4(first, c);
                } else {
                    return Err(Error::session(
                        "Kernel error received: ipset protocol error",
                    ));
                }
                if ty == SetType::BitmapIpMac {
                    if u64::from(last) - u64::from(first) + 1 > BITMAP_MAX {
                        return Err(Kernel::BitmapRangeSize.into());
                    }
                    Params::BitmapIpMac { first, last }
                } else {
                    let netmask = d.netmask.unwrap_or(32);
                    if netmask > 32 {
                        return Err(Kernel::InvalidNetmask.into());
                    }
                    first &= addr::mask4(netmask);
                    last |= !addr::mask4(netmask);
                    let (hosts, elements) = if netmask == 32 {
                        (1u32, u64::from(last) - u64::from(first) + 1)
                    } else {
                        let (mask, mask_bits) = range_to_mask(first, last);
                        if (mask == 0 && (first != 0 || last != u32::MAX)) || netmask <= mask_bits {
                            return Err(Kernel::BitmapRange.into());
                        }
                        (
                            (1u64 << (32 - netmask)) as u32,
                            1u64 << (netmask - mask_bits),
                        )
                    };
                    if elements > BITMAP_MAX {
                        return Err(Kernel::BitmapRangeSize.into());
                    }
                    Params::BitmapIp {
                        first,
                        last,
                        netmask,
                        hosts,
                    }
                }
            }
            SetType::BitmapPort => {
                let (mut first, mut last) = (d.port.unwrap_or(0), d.port_to.unwrap_or(0));
                if first > last {
                    std::mem::swap(&mut first, &mut last);
                }
                Params::BitmapPort { first, last }
            }
            SetType::ListSet => Params::List {
                size: d.size.unwrap_or(LIST_DEFAULT_SIZE).max(LIST_MIN_SIZE),
            },
            _ => hash_params(ty, d, family.unwrap_or(Family::Inet), initval)?,
        };
        Ok(Header {
            ty,
            family,
            params,
            timeout: d.timeout.map(|t| t.min(MAX_TIMEOUT)),
            counters: d.counters,
            comment: d.create_comment,
            skbinfo: d.skbinfo,
            forceadd: d.forceadd,
        })
    }

    /// The kernel's `same_set` plus the type check of `create -exist`: may a
    /// create with these parameters stand for the existing set?
    pub fn same_as(&self, other: &Header) -> bool {
        let ext = |h: &Header| (h.timeout, h.counters, h.comment, h.skbinfo);
        if self.ty != other.ty || ext(self) != ext(other) {
            return false;
        }
        match (&self.params, &other.params) {
            (
                Params::Hash {
                    maxelem: m1,
                    bitmask: b1,
                    markmask: k1,
                    ..
                },
                Params::Hash {
                    maxelem: m2,
                    bitmask: b2,
                    markmask: k2,
                    ..
                },
            ) => m1 == m2 && mask_words(*b1) == mask_words(*b2) && k1 == k2,
            (
                Params::BitmapIp {
                    first: f1,
                    last: l1,
                    netmask: n1,
                    ..
                },
                Params::BitmapIp {
                    first: f2,
                    last: l2,
                    netmask: n2,
                    ..
                },
            ) => (f1, l1, n1) == (f2, l2, n2),
            (a, b) => a == b,
        }
    }

    pub fn is_hash(&self) -> bool {
        matches!(self.params, Params::Hash { .. })
    }

    pub fn maxelem(&self) -> Option<u32> {
        match self.params {
            Params::Hash { maxelem, .. } => Some(maxelem),
            _ => None,
        }
    }
}

/// A mask as the kernel compares it: v4 masks keep the other words of the
/// all-ones default, so an IPv4 and an IPv6 all-ones mask compare equal.
fn mask_words(m: IpAddr) -> u128 {
    match m {
        IpAddr::V4(a) => (u128::MAX << 32) | u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

fn hash_params(ty: SetType, d: &Data, family: Family, initval: u32) -> Result<Params> {
    let markmask = if ty == SetType::HashIpMark {
        let m = d.markmask.unwrap_or(u32::MAX);
        if m == 0 {
            return Err(Kernel::InvalidMarkmask.into());
        }
        Some(m)
    } else {
        None
    };
    let uses_masks = matches!(
        ty,
        SetType::HashIp | SetType::HashIpPort | SetType::HashNetNet
    );
    let mut bitmask = addr::netmask_addr(family, family.bits());
    let mut netmask = None;
    if uses_masks {
        if let Some(n) = d.netmask {
            if n == 0 || n > family.bits() {
                return Err(Kernel::InvalidNetmask.into());
            }
            bitmask = addr::netmask_addr(family, n);
            netmask = Some(n);
        }
        if let Some(b) = d.bitmask {
            if d.netmask.is_some() {
                return Err(Kernel::BitmaskNetmaskExcl.into());
            }
            if addr::is_zero(b) || Family::of(b) != family {
                return Err(Kernel::InvalidNetmask.into());
            }
            bitmask = b;
        }
    }
    let mut hashsize = d.hashsize.unwrap_or(DEFAULT_HASHSIZE).max(MIN_HASHSIZE);
    let bits = 32 - (hashsize - 1).leading_zeros();
    if bits >= 32 {
        return Err(Error::session(
            "Kernel error received: Cannot allocate memory",
        ));
    }
    hashsize = 1u32 << bits;
    let bucketsize = match d.bucketsize {
        None => BUCKET_MAX,
        Some(b) if b < BUCKET_INIT => BUCKET_INIT,
        Some(b) if b > BUCKET_MAX => BUCKET_MAX,
        Some(b) if b % 2 == 1 => b + 1,
        Some(b) => b,
    };
    Ok(Params::Hash {
        hashsize,
        maxelem: d.maxelem.unwrap_or(DEFAULT_MAXELEM),
        netmask: netmask.filter(|&n| n != family.bits()),
        bitmask,
        bitmask_given: d.bitmask.is_some() && uses_masks,
        markmask,
        bucketsize,
        initval: d.initval.unwrap_or(initval),
    })
}

/// The all-ones IPv4 mask (default of IPv4 hash sets).
pub const ONES4: IpAddr = IpAddr::V4(Ipv4Addr::BROADCAST);

#[cfg(test)]
mod tests {
    use super::*;

    fn data(f: impl FnOnce(&mut Data)) -> Data {
        let mut d = Data {
            family: Some(Family::Inet),
            ..Data::default()
        };
        f(&mut d);
        d
    }

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn hash_normalisation() {
        let h = Header::create(
            SetType::HashIp,
            &data(|d| {
                d.hashsize = Some(100);
                d.bucketsize = Some(255);
                d.netmask = Some(24);
            }),
            7,
        )
        .unwrap();
        assert_eq!(
            h.params,
            Params::Hash {
                hashsize: 128,
                maxelem: 65536,
                netmask: Some(24),
                bitmask: "255.255.255.0".parse().unwrap(),
                bitmask_given: false,
                markmask: None,
                bucketsize: 12,
                initval: 7,
            }
        );
        let small = Header::create(SetType::HashNet, &data(|d| d.hashsize = Some(1)), 0).unwrap();
        assert!(matches!(small.params, Params::Hash { hashsize: 64, .. }));
        let odd = Header::create(SetType::HashNet, &data(|d| d.bucketsize = Some(5)), 0).unwrap();
        assert!(matches!(odd.params, Params::Hash { bucketsize: 6, .. }));
    }

    #[test]
    fn bitmap_ranges() {
        type Case = (&'static str, Option<u8>, Result<(u32, u32, u32)>);
        let cases: [Case; 5] = [
            ("2.0.0.1-2.1.0.0", None, Ok((0x0200_0001, 0x0201_0000, 1))),
            ("2.0.0.1-2.1.0.1", None, Err(Kernel::BitmapRangeSize.into())),
            ("10.0.0.0/8", Some(24), Ok((0x0a00_0000, 0x0aff_ffff, 256))),
            ("0.0.0.0/0", Some(16), Ok((0, u32::MAX, 65536))),
            ("10.0.0.0/8", Some(8), Err(Kernel::BitmapRange.into())),
        ];
        for (range, netmask, want) in cases {
            let d = data(|d| {
                if let Some((a, b)) = range.split_once('-') {
                    d.ip = ip(a);
                    d.ip_to = ip(b);
                } else {
                    let (a, c) = range.split_once('/').unwrap();
                    d.ip = ip(a);
                    d.cidr = Some(c.parse().unwrap());
                }
                d.netmask = netmask;
            });
            let got = Header::create(SetType::BitmapIp, &d, 0).map(|h| match h.params {
                Params::BitmapIp {
                    first, last, hosts, ..
                } => (first, last, hosts),
                _ => unreachable!(),
            });
            assert_eq!(got, want, "{range}");
        }
    }

    #[test]
    fn exist_comparison_ignores_hashsize() {
        let a = Header::create(SetType::HashIp, &data(|d| d.hashsize = Some(128)), 1).unwrap();
        let b = Header::create(SetType::HashIp, &data(|_| {}), 2).unwrap();
        let c = Header::create(SetType::HashIp, &data(|d| d.timeout = Some(5)), 2).unwrap();
        assert!(a.same_as(&b));
        assert!(!a.same_as(&c));
    }
}

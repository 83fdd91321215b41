//! The way back: a member's key from the key bytes of its nftables set
//! element (what [`super::element_key`] wrote), so that a set can be read
//! back from the kernel alone.

use super::{Field, SetSpec};
use ipset::addr::Net;
use ipset::model::{Iface, Key, ProtoPort};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A member key read back, and whether its interface name is a wildcard
/// (hash:net,iface: the element covers every name with that prefix).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub key: Key,
    pub wildcard: bool,
}

/// The prefix length of the block `lo..=hi` (big-endian bytes), if it is
/// one.
fn prefix_of(lo: &[u8], hi: &[u8]) -> Option<u8> {
    let bits = lo.len() * 8;
    let (mut l, mut h) = (0u128, 0u128);
    for (a, b) in lo.iter().zip(hi) {
        l = (l << 8) | u128::from(*a);
        h = (h << 8) | u128::from(*b);
    }
    let host = l ^ h;
    // The host part is all ones below the prefix and l has none of it.
    if host & host.wrapping_add(1) != 0 || l & host != 0 {
        return None;
    }
    Some((bits - (128 - host.leading_zeros() as usize).min(bits)) as u8)
}

fn addr_of(b: &[u8]) -> Option<IpAddr> {
    Some(match b.len() {
        4 => IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(b).ok()?)),
        16 => IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(b).ok()?)),
        _ => return None,
    })
}

/// The member of a set with `spec` whose element key is `start` and, in an
/// interval set, ends at `end` (inclusive, every field). `None` when the
/// bytes are not a key this mapping writes (not ours, or damaged).
pub fn decode_key(spec: &SetSpec, start: &[u8], end: Option<&[u8]>) -> Option<Decoded> {
    let end = end.unwrap_or(start);
    if start.len() != spec.key_len() as usize || end.len() != start.len() {
        return None;
    }
    let mut key = Key::default();
    let mut wildcard = false;
    let mut proto: Option<u8> = None;
    let mut port: Option<u16> = None;
    let mut at = 0usize;
    for f in &spec.fields {
        let len = f.bytes() as usize;
        let (lo, hi) = (&start[at..at + len], &end[at..at + len]);
        match f {
            Field::Ipv4Addr | Field::Ipv6Addr => {
                let net = Net {
                    addr: addr_of(lo)?,
                    prefix: prefix_of(lo, hi)?,
                };
                if key.ip.is_none() {
                    key.ip = Some(net);
                } else {
                    key.ip2 = Some(net);
                }
            }
            Field::InetProto => {
                (lo == hi).then_some(())?;
                proto = Some(lo[0]);
            }
            Field::InetService => {
                (lo == hi).then_some(())?;
                port = Some(u16::from_be_bytes([lo[0], lo[1]]));
            }
            Field::EtherAddr => {
                (lo == hi).then_some(())?;
                key.mac = Some(<[u8; 6]>::try_from(lo).ok()?);
            }
            Field::Mark => {
                (lo == hi).then_some(())?;
                key.mark = Some(u32::from_ne_bytes(<[u8; 4]>::try_from(lo).ok()?));
            }
            Field::Ifname => {
                let n = lo.iter().position(|&b| b == 0).unwrap_or(lo.len());
                let name = std::str::from_utf8(&lo[..n]).ok()?.to_string();
                let tail_ones = hi[n..].iter().all(|&b| b == 0xff);
                wildcard = hi != lo;
                if wildcard && (!tail_ones || hi[..n] != lo[..n]) {
                    return None;
                }
                key.iface = Some(Iface {
                    name,
                    physdev: false,
                });
            }
        }
        at += if spec.is_concat() {
            len.div_ceil(4) * 4
        } else {
            len
        };
    }
    if let Some(p) = port {
        key.port = Some(ProtoPort {
            proto: proto.unwrap_or(0),
            port: p,
        });
    }
    Some(Decoded { key, wildcard })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_of_blocks() {
        let cases: &[(&[u8], &[u8], Option<u8>)] = &[
            (&[10, 0, 0, 1], &[10, 0, 0, 1], Some(32)),
            (&[10, 0, 0, 0], &[10, 255, 255, 255], Some(8)),
            (&[0, 0, 0, 0], &[255, 255, 255, 255], Some(0)),
            (&[10, 0, 0, 0], &[10, 0, 0, 2], None),
            (&[10, 0, 0, 1], &[10, 0, 0, 3], None),
            (&[192, 168, 0, 0], &[192, 168, 0, 127], Some(25)),
        ];
        for (lo, hi, want) in cases {
            assert_eq!(prefix_of(lo, hi), *want, "{lo:?}-{hi:?}");
        }
        let mut hi = [0xffu8; 16];
        hi[0] = 0x20;
        hi[1] = 0x01;
        let mut lo = [0u8; 16];
        lo[0] = 0x20;
        lo[1] = 0x01;
        assert_eq!(prefix_of(&lo, &hi), Some(16));
    }
}

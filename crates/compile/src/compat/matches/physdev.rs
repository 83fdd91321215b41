//! `-m physdev` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// An interface name and its match mask as iptables makes them: the mask
/// covers the name and its NUL, or only the part before a trailing `+`.
fn iface(i: &mut Info, at: usize, name: &str) {
    i.str(at, name, 16);
    let n = match name.strip_suffix('+') {
        Some(stem) => stem.len(),
        None if name.is_empty() => 0,
        None => name.len() + 1,
    };
    i.bytes(at + 16, &[0xff; 16][..n.min(16)]);
}

/// `struct xt_physdev_info` (rev 0): physindev[16] @0, in_mask[16] @16,
/// physoutdev[16] @32, out_mask[16] @48, invert u8 @64, bitmask u8 @65
/// (IN 1, OUT 2, BRIDGED 4, ISIN 8, ISOUT 16).
pub fn info(x: &m::physdev::Physdev) -> CompatInfo {
    let mut i = Info::new(66);
    let (mut bits, mut inv) = (0u8, 0u8);
    if let Some(p) = &x.physin {
        bits |= 1;
        inv |= p.inv as u8;
        iface(&mut i, 0, &p.name);
    }
    if let Some(p) = &x.physout {
        bits |= 2;
        inv |= (p.inv as u8) << 1;
        iface(&mut i, 32, &p.name);
    }
    for (flag, bit) in [(x.is_bridged, 4u8), (x.is_in, 8), (x.is_out, 16)] {
        if let Some(v) = flag {
            bits |= bit;
            if v {
                inv |= bit;
            }
        }
    }
    i.u8(64, inv).u8(65, bits);
    compat("physdev", 0, i)
}

//! `-m policy` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_policy_info` (rev 0): pol xt_policy_elem[4] @0 (76 bytes
/// each), flags u16 @304, len u16 @306. An element: saddr @0, smask @16,
/// daddr @32, dmask @48 (16 bytes each), spi @64 (stored by iptables in
/// host order), reqid u32 @68, proto u8 @72, mode u8 @73, match bits u8
/// @74 and invert bits u8 @75 (saddr 1, daddr 2, proto 4, mode 8, spi 16,
/// reqid 32).
pub fn info(x: &m::policy::Policy) -> CompatInfo {
    let mut i = Info::new(308);
    for (n, e) in x.elems.iter().enumerate() {
        let at = 76 * n;
        let (mut matched, mut inv) = (0u8, 0u8);
        let mut flag = |bit: u8, invert: bool| {
            matched |= bit;
            if invert {
                inv |= bit;
            }
        };
        if let Some((a, m, v)) = &e.src {
            flag(1, *v);
            i.bytes(at, a).bytes(at + 16, m);
        }
        if let Some((a, m, v)) = &e.dst {
            flag(2, *v);
            i.bytes(at + 32, a).bytes(at + 48, m);
        }
        if let Some((p, v)) = e.proto {
            flag(4, v);
            i.u8(at + 72, p);
        }
        if let Some((md, v)) = e.mode {
            flag(8, v);
            i.u8(at + 73, md);
        }
        if let Some((s, v)) = e.spi {
            flag(16, v);
            i.u32(at + 64, s);
        }
        if let Some((r, v)) = e.reqid {
            flag(32, v);
            i.u32(at + 68, r);
        }
        i.u8(at + 74, matched).u8(at + 75, inv);
    }
    i.u16(304, x.flags).u16(306, x.elems.len() as u16);
    compat("policy", 0, i)
}

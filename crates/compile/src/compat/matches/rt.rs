//! `-m rt` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct ip6t_rt` (rev 0): rt_type u32 @0, segsleft u32[2] @4, hdrlen
/// @12, flags u8 @16 (TYP 1, SGS 2, LEN 4, RES 8, FST 0x10, FST_NSTRICT
/// 0x20), invflags @17 (TYP 1, SGS 2, LEN 4), addrs in6_addr[16] @20,
/// addrnr u8 @276. The segments-left flag is set when the range tests
/// something, as loading the rule's save form sets it.
pub fn info(x: &m::rt::Rt) -> CompatInfo {
    let mut i = Info::new(277);
    let (mut flags, mut inv) = (0u8, 0u8);
    if let Some((t, ti)) = x.typ {
        flags |= 1;
        inv |= ti as u8;
        i.u32(0, t);
    }
    i.u32(4, x.segs.0).u32(8, x.segs.1);
    if x.segs != (0, u32::MAX) || x.inv_segs {
        flags |= 2;
    }
    if x.inv_segs {
        inv |= 2;
    }
    if let Some((l, li)) = x.len {
        flags |= 4;
        if li {
            inv |= 4;
        }
        i.u32(12, l);
    }
    if x.res {
        flags |= 8;
    }
    if let Some(addrs) = &x.addrs {
        flags |= 0x10;
        for (n, a) in addrs.iter().enumerate() {
            i.bytes(20 + 16 * n, a);
        }
        i.u8(276, addrs.len() as u8);
    }
    if x.not_strict {
        flags |= 0x20;
    }
    i.u8(16, flags).u8(17, inv);
    compat("rt", 0, i)
}

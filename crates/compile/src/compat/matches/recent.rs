//! `-m recent` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_recent_mtinfo_v1` (rev 1): seconds u32 @0, hit_count @4,
/// check_set u8 @8, invert u8 @9, name[200] @10, side u8 @210 (DEST 1),
/// mask (16 bytes) @212. iptables starts the name as "DEFAULT" and copies
/// a given name over it, so what is left of "DEFAULT" after a shorter
/// name's NUL stays.
pub fn info(x: &m::recent::Recent) -> CompatInfo {
    let mut i = Info::new(228);
    i.u32(0, x.seconds)
        .u32(4, x.hit_count)
        .u8(8, x.check_set)
        .u8(9, x.invert as u8)
        .str(10, "DEFAULT", 200)
        .str(10, &x.name, 200)
        .u8(10 + iptables::bytes::encode(&x.name).len(), 0)
        .u8(210, x.dest as u8)
        .bytes(212, &x.mask);
    compat("recent", 1, i)
}

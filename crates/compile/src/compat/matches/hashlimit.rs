//! `-m hashlimit` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_hashlimit_mtinfo3` (rev 3): name[255] @0, `hashlimit_cfg3`
/// @256 — avg u64 @256, burst u64 @264, mode u32 @272, size @276, max
/// @280, gc_interval @284, expire @288, interval @292, srcmask u8 @296,
/// dstmask u8 @297 — and the kernel's table pointer @304.
pub fn info(x: &m::hashlimit::Hashlimit) -> CompatInfo {
    let mut i = Info::new(312);
    i.str(0, &x.name, 255)
        .u64(256, x.avg)
        .u64(264, x.burst)
        .u32(272, x.mode)
        .u32(276, x.size)
        .u32(280, x.max)
        .u32(284, x.gc_interval)
        .u32(288, x.expire)
        .u32(292, x.interval)
        .u8(296, x.srcmask)
        .u8(297, x.dstmask);
    compat("hashlimit", 3, i)
}

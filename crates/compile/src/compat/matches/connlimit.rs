//! `-m connlimit` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_connlimit_info` (rev 1): mask (16 bytes) @0, limit u32 @16,
/// flags u32 @20 (INVERT 1, DADDR 2), the kernel's data pointer @24.
pub fn info(x: &m::connlimit::Connlimit) -> CompatInfo {
    let mut i = Info::new(32);
    i.bytes(0, &x.mask)
        .u32(16, x.limit)
        .u32(20, x.upto as u32 | (x.daddr as u32) << 1);
    compat("connlimit", 1, i)
}

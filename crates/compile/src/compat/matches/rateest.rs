//! `-m rateest` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_rateest_match_info` (rev 0): name1[16] @0, name2[16] @16,
/// flags u16 @32, mode u16 @34, bps1 u32 @36, pps1 @40, bps2 @44, pps2
/// @48, the kernel's estimator pointers @56 and @64.
pub fn info(x: &m::rateest::Rateest) -> CompatInfo {
    let mut i = Info::new(72);
    i.str(0, &x.name1, 16)
        .str(16, &x.name2, 16)
        .u16(32, x.flags)
        .u16(34, x.mode)
        .u32(36, x.bps1)
        .u32(40, x.pps1)
        .u32(44, x.bps2)
        .u32(48, x.pps2);
    compat("rateest", 0, i)
}

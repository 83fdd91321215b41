//! `-m statistic` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_statistic_info` (rev 0): mode u16 @0 (RANDOM 0, NTH 1),
/// flags u16 @2 (INVERT 1), then random.probability u32 @4, or nth.every
/// (less one) @4 and nth.packet @8; nth.count @12 is what iptables fills
/// in either mode: the word @4 less the word @8. The kernel's master
/// pointer @16.
pub fn info(x: &m::statistic::Statistic) -> CompatInfo {
    let mut i = Info::new(24);
    i.u16(0, x.nth as u16)
        .u16(2, x.inv as u16)
        .u32(4, x.val)
        .u32(8, x.packet)
        .u32(12, x.val.wrapping_sub(x.packet));
    compat("statistic", 0, i)
}

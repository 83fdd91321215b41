//! `-m limit` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_rateinfo` (rev 0): avg u32 @0, burst u32 @4; the rest
/// (prev, credit, credit_cap, cost, master) is the kernel's.
pub fn info(x: &m::limit::Limit) -> CompatInfo {
    let mut i = Info::new(40);
    i.u32(0, x.avg).u32(4, x.burst);
    compat("limit", 0, i)
}

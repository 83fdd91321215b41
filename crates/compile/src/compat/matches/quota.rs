//! `-m quota` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_quota_info` (rev 0): flags u32 @0 (XT_QUOTA_INVERT 1),
/// quota u64 @8, kernel's master pointer @16.
pub fn info(x: &m::quota::Quota) -> CompatInfo {
    let mut i = Info::new(24);
    i.u32(0, x.inv as u32).u64(8, x.quota);
    compat("quota", 0, i)
}

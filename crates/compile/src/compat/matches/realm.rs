//! `-m realm` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_realm_info` (rev 0): id u32 @0, mask u32 @4, invert u8 @8.
pub fn info(x: &m::realm::Realm) -> CompatInfo {
    let mut i = Info::new(12);
    i.u32(0, x.id).u32(4, x.mask).u8(8, x.inv as u8);
    compat("realm", 0, i)
}

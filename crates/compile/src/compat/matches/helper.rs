//! `-m helper` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_helper_info` (rev 0): invert int @0, name[30] @4.
pub fn info(x: &m::helper::Helper) -> CompatInfo {
    let mut i = Info::new(36);
    i.u32(0, x.inv as u32).str(4, &x.name, 30);
    compat("helper", 0, i)
}

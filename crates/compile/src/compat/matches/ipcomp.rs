//! `-m ipcomp` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_ipcomp` (rev 0): spis u32[2] @0, invflags u8 @8 (INV_SPI 1),
/// hdrres u8 @9.
pub fn info(x: &m::ipcomp::Ipcomp) -> CompatInfo {
    let mut i = Info::new(12);
    i.u32(0, x.spis.0)
        .u32(4, x.spis.1)
        .u8(8, x.inv as u8)
        .u8(9, x.hdrres as u8);
    compat("ipcomp", 0, i)
}

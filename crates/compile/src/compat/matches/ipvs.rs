//! `-m ipvs` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_ipvs_mtinfo` (rev 0): vaddr @0, vmask @16 (16 bytes each),
/// vport be16 @32, l4proto u8 @34, fwd_method u8 @35, vportctl be16 @36,
/// invert u8 @38, bitmask u8 @39. (This kernel has no xt_ipvs.)
pub fn info(x: &m::ipvs::Ipvs) -> CompatInfo {
    let mut i = Info::new(40);
    i.bytes(0, &x.vaddr)
        .bytes(16, &x.vmask)
        .be16(32, x.vport)
        .u8(34, x.l4proto)
        .u8(35, x.fwd_method)
        .be16(36, x.vportctl)
        .u8(38, x.invert)
        .u8(39, x.bitmask);
    compat("ipvs", 0, i)
}

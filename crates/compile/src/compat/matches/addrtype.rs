//! `-m addrtype` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_addrtype_info_v1` (rev 1): source u16 @0, dest u16 @2
/// (1 << RTN_* per type), flags u32 @4 (INVERT_SOURCE 1, INVERT_DEST 2,
/// LIMIT_IFACE_IN 4, LIMIT_IFACE_OUT 8).
pub fn info(x: &m::addrtype::Addrtype) -> CompatInfo {
    let flags = x.inv_src as u32
        | (x.inv_dst as u32) << 1
        | (x.limit_in as u32) << 2
        | (x.limit_out as u32) << 3;
    let mut i = Info::new(8);
    i.u16(0, x.src).u16(2, x.dst).u32(4, flags);
    compat("addrtype", 1, i)
}

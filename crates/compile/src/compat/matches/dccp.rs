//! `-m dccp` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_dccp_info` (rev 0): dpts u16[2] @0, spts u16[2] @4, flags
/// u16 @8 and invflags @10 (SRC_PORTS 1, DEST_PORTS 2, TYPE 4, OPTION 8),
/// typemask u16 @12, option u8 @14.
pub fn info(x: &m::dccp::Dccp) -> CompatInfo {
    let mut i = Info::new(15);
    let (mut flags, mut inv) = (0u16, 0u16);
    let mut flag = |bit: u16, invert: bool| {
        flags |= bit;
        if invert {
            inv |= bit;
        }
    };
    if let Some((lo, hi, v)) = x.spts {
        flag(1, v);
        i.u16(4, lo).u16(6, hi);
    }
    if let Some((lo, hi, v)) = x.dpts {
        flag(2, v);
        i.u16(0, lo).u16(2, hi);
    }
    if let Some((mask, v)) = x.types {
        flag(4, v);
        i.u16(12, mask);
    }
    if let Some((o, v)) = x.option {
        flag(8, v);
        i.u8(14, o);
    }
    i.u16(8, flags).u16(10, inv);
    compat("dccp", 0, i)
}

//! `-m rpfilter` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_rpfilter_info` (rev 0): flags u8 @0 (LOOSE 1, VALID_MARK 2,
/// ACCEPT_LOCAL 4, INVERT 8).
pub fn info(x: &m::rpfilter::Rpfilter) -> CompatInfo {
    let flags = x.loose as u8
        | (x.validmark as u8) << 1
        | (x.accept_local as u8) << 2
        | (x.invert as u8) << 3;
    let mut i = Info::new(1);
    i.u8(0, flags);
    compat("rpfilter", 0, i)
}

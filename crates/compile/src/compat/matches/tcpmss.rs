//! `-m tcpmss` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_tcpmss_match_info` (rev 0): mss_min u16 @0, mss_max @2,
/// invert u8 @4.
pub fn info(x: &m::tcpmss::Tcpmss) -> CompatInfo {
    let mut i = Info::new(6);
    i.u16(0, x.min).u16(2, x.max).u8(4, x.inv as u8);
    compat("tcpmss", 0, i)
}

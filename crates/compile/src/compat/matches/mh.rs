//! `-m mh` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct ip6t_mh` (rev 0): types u8[2] @0, invflags u8 @2.
pub fn info(x: &m::mh::Mh) -> CompatInfo {
    let mut i = Info::new(3);
    i.u8(0, x.types.0).u8(1, x.types.1).u8(2, x.inv as u8);
    compat("mh", 0, i)
}

//! `-m socket` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_socket_mtinfo3` (rev 3): flags u16 @0.
pub fn info(x: &m::socket::Socket) -> CompatInfo {
    let mut i = Info::new(2);
    i.u16(0, x.flags as u16);
    compat("socket", 3, i)
}

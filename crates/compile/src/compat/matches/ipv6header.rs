//! `-m ipv6header` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct ip6t_ipv6header_info` (rev 0): matchflags u8 @0, invflags @1
/// (0xff when inverted), modeflag @2 (0xff for `--soft`).
pub fn info(x: &m::ipv6header::Ipv6header) -> CompatInfo {
    let mut i = Info::new(3);
    i.u8(0, x.flags)
        .u8(1, if x.inv { 0xff } else { 0 })
        .u8(2, if x.soft { 0xff } else { 0 });
    compat("ipv6header", 0, i)
}

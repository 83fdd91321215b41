//! `-m multiport` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_multiport_v1` (rev 1): flags u8 @0 (SOURCE 0, DESTINATION
/// 1, EITHER 2), count u8 @1, ports u16[15] @2, pflags u8[15] @32 (1 on
/// the low end of a range, whose high end is the next port), invert u8
/// @47.
pub fn info(x: &m::multiport::Multiport) -> CompatInfo {
    let mut i = Info::new(48);
    let mut n = 0;
    for &(lo, hi) in &x.ports {
        i.u16(2 + 2 * n, lo);
        if lo != hi {
            i.u8(32 + n, 1);
            n += 1;
            i.u16(2 + 2 * n, hi);
        }
        n += 1;
    }
    i.u8(0, x.kind).u8(1, n as u8).u8(47, x.inv as u8);
    compat("multiport", 1, i)
}

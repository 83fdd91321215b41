//! `-m ecn` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_ecn_info` (rev 0): operation u8 @0, invert u8 @1, ip_ect
/// u8 @2 (bits: MATCH_IP 0x01, MATCH_ECE 0x10, MATCH_CWR 0x20), an unused
/// u32 @4.
pub fn info(x: &m::ecn::Ecn) -> CompatInfo {
    let (mut op, mut inv) = (0u8, 0u8);
    for (t, bit) in [(x.ip, 0x01u8), (x.ece, 0x10), (x.cwr, 0x20)] {
        if t.on {
            op |= bit;
        }
        if t.inv {
            inv |= bit;
        }
    }
    let mut i = Info::new(8);
    i.u8(0, op)
        .u8(1, inv)
        .u8(2, if x.ip.on { x.ect } else { 0 });
    compat("ecn", 0, i)
}

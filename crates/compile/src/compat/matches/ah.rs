//! `-m ah` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;
use ruleset::Family;

/// IPv4 `struct ipt_ah` (rev 0): spis u32[2] @0, invflags u8 @8 (INV_SPI
/// 1). IPv6 `struct ip6t_ah` (rev 0): spis u32[2] @0, hdrlen u32 @8,
/// hdrres u8 @12, invflags u8 @13 (INV_SPI 1, INV_LEN 2).
pub fn info(x: &m::ah::Ah, family: Family) -> CompatInfo {
    let i = match family {
        Family::Ipv4 => {
            let mut i = Info::new(9);
            i.u32(0, x.spis.0).u32(4, x.spis.1).u8(8, x.inv_spi as u8);
            i
        }
        Family::Ipv6 => {
            let mut i = Info::new(14);
            i.u32(0, x.spis.0)
                .u32(4, x.spis.1)
                .u32(8, x.hdrlen)
                .u8(12, x.hdrres as u8)
                .u8(13, x.inv_spi as u8 | (x.inv_len as u8) << 1);
            i
        }
    };
    compat("ah", 0, i)
}

//! `-m osf` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_osf_info` (rev 0): genre[32] @0, len u32 @32, flags @36
/// (TTL 2, LOG 4, INVERT 8), loglevel @40, ttl @44.
pub fn info(x: &m::osf::Osf) -> CompatInfo {
    let mut flags = 0;
    if x.ttl.is_some() {
        flags |= 2;
    }
    if x.log.is_some() {
        flags |= 4;
    }
    if x.inv {
        flags |= 8;
    }
    let mut i = Info::new(48);
    i.str(0, &x.genre, 32)
        .u32(32, iptables::bytes::encode(&x.genre).len() as u32)
        .u32(36, flags)
        .u32(40, x.log.unwrap_or(0))
        .u32(44, x.ttl.unwrap_or(0));
    compat("osf", 0, i)
}

//! `-m owner` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_owner_match_info` (rev 1): uid_min u32 @0, uid_max @4,
/// gid_min @8, gid_max @12, match u8 @16 and invert u8 @17 (UID 1, GID 2,
/// SOCKET 4, SUPPL_GROUPS 8).
pub fn info(x: &m::owner::Owner) -> CompatInfo {
    let mut i = Info::new(18);
    let (mut matched, mut inv) = (0u8, 0u8);
    if let Some(r) = &x.uid {
        matched |= 1;
        inv |= r.inv as u8;
        i.u32(0, r.min).u32(4, r.max);
    }
    if let Some(r) = &x.gid {
        matched |= 2;
        inv |= (r.inv as u8) << 1;
        i.u32(8, r.min).u32(12, r.max);
    }
    if let Some(v) = x.socket {
        matched |= 4;
        inv |= (v as u8) << 2;
    }
    if x.suppl_groups {
        matched |= 8;
    }
    i.u8(16, matched).u8(17, inv);
    compat("owner", 1, i)
}

//! `-m devgroup` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_devgroup_info` (rev 0): flags u32 @0 (MATCH_SRC 1,
/// INVERT_SRC 2, MATCH_DST 4, INVERT_DST 8), src_group @4, src_mask @8,
/// dst_group @12, dst_mask @16.
pub fn info(x: &m::devgroup::Devgroup) -> CompatInfo {
    let mut i = Info::new(20);
    let mut flags = 0;
    for (g, match_bit, off) in [(&x.src, 1u32, 4), (&x.dst, 4, 12)] {
        if let Some(g) = g {
            flags |= match_bit;
            if g.inv {
                flags |= match_bit << 1;
            }
            i.u32(off, g.group).u32(off + 4, g.mask);
        }
    }
    i.u32(0, flags);
    compat("devgroup", 0, i)
}

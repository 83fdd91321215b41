//! `-m srh` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct ip6t_srh1` (rev 1): next_hdr u8 @0, hdr_len @1, segs_left @2,
/// last_entry @3, tag u16 @4, psid/nsid/lsid addresses @8/@24/@40, their
/// masks @56/@72/@88, mt_flags u16 @104, mt_invflags u16 @106.
pub fn info(x: &m::srh::Srh) -> CompatInfo {
    let mut i = Info::new(108);
    i.u8(0, x.next_hdr)
        .u8(1, x.hdr_len)
        .u8(2, x.segs_left)
        .u8(3, x.last_entry)
        .u16(4, x.tag);
    for (n, (addr, mask)) in x.sids.iter().enumerate() {
        i.bytes(8 + 16 * n, addr).bytes(56 + 16 * n, mask);
    }
    i.u16(104, x.flags).u16(106, x.inv);
    compat("srh", 1, i)
}

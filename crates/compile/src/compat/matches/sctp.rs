//! `-m sctp` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_sctp_info` (rev 0): dpts u16[2] @0, spts u16[2] @4,
/// chunkmap u32[64] @8 (the uapi sizes it in bytes, not bits: types use
/// the first 8 words, ALL sets all 64), chunk_match_type u32 @264,
/// flag_info {chunktype, flag, flag_mask}[4] @268 (unused chunktype
/// 0xff), flag_count int @280, flags u32 @284, invflags u32 @288
/// (SRC_PORTS 1, DEST_PORTS 2, CHUNK_TYPES 4).
pub fn info(x: &m::sctp::Sctp) -> CompatInfo {
    let mut i = Info::new(292);
    let (mut flags, mut inv) = (0u32, 0u32);
    if let Some((lo, hi)) = x.spts {
        flags |= 1;
        i.u16(4, lo).u16(6, hi);
    }
    if let Some((lo, hi)) = x.dpts {
        flags |= 2;
        i.u16(0, lo).u16(2, hi);
    }
    for at in (268..280).step_by(3) {
        i.u8(at, 0xff);
    }
    if let Some(c) = &x.chunks {
        flags |= 4;
        if c.all {
            i.bytes(8, &[0xff; 256]);
        } else {
            for w in 0..8 {
                let word = (c.map[w / 2] >> (32 * (w % 2))) as u32;
                i.u32(8 + 4 * w, word);
            }
        }
        i.u32(264, c.mode as u32);
        for (n, f) in c.flags.iter().enumerate() {
            i.u8(268 + 3 * n, f.key)
                .u8(269 + 3 * n, f.flag)
                .u8(270 + 3 * n, f.mask);
        }
        i.u32(280, c.flags.len() as u32);
    }
    for (on, bit) in [(x.inv_sport, 1u32), (x.inv_dport, 2), (x.inv_chunks, 4)] {
        if on {
            inv |= bit;
        }
    }
    i.u32(284, flags).u32(288, inv);
    compat("sctp", 0, i)
}

//! `-m string` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_string_info` (rev 1): from_offset u16 @0, to_offset @2,
/// algo[16] @4, pattern[128] @20, patlen u8 @148, flags u8 @149 (INVERT
/// 1, IGNORECASE 2), the kernel's config pointer @152.
pub fn info(x: &m::string::StringMatch) -> CompatInfo {
    let mut i = Info::new(160);
    i.u16(0, x.from)
        .u16(2, x.to)
        .str(4, &x.algo, 16)
        .bytes(20, &x.pattern)
        .u8(148, x.pattern.len() as u8)
        .u8(149, x.inv as u8 | (x.icase as u8) << 1);
    compat("string", 1, i)
}

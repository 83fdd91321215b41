//! `HMARK` revision 0: `struct xt_hmark_info` — source and destination
//! masks (16 bytes each), the port mask and port set unions (4 bytes each,
//! network order), flags (u32 at 40), proto_mask (u16 at 44), hashrnd,
//! hmodulus and hoffset (u32 at 48, 52, 56).
//!
//! In IPv4 rules iptables fills all 16 bytes of a mask for the tuple words
//! `src`/`dst` but only 4 for `--hmark-src-prefix 32`, which is how it
//! saves either; the value (and so this info) has the saved form's 4. The
//! kernel reads only those 4 for IPv4.

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::hmark::Hmark;

pub fn info(t: &Hmark) -> CompatInfo {
    Layout::new(60)
        .bytes(0, &t.src_mask)
        .bytes(16, &t.dst_mask)
        .bytes(32, &t.port_mask)
        .bytes(36, &t.port_set)
        .u32(40, t.flags)
        .u16(44, t.proto_mask)
        .u32(48, t.hashrnd)
        .u32(52, t.hmodulus)
        .u32(56, t.hoffset)
        .finish("HMARK", 0)
}

//! `CONNMARK` revision 2: `struct xt_connmark_tginfo2 { __u32 ctmark,
//! ctmask, nfmask; __u8 shift_dir, shift_bits, mode; }`.

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::connmark::{Connmark, ConnmarkMode};

pub fn info(t: &Connmark) -> CompatInfo {
    let mode = match t.mode {
        ConnmarkMode::Set => 0,
        ConnmarkMode::Save => 1,
        ConnmarkMode::Restore => 2,
    };
    Layout::new(15)
        .u32(0, t.ctmark)
        .u32(4, t.ctmask)
        .u32(8, t.nfmask)
        .u8(12, u8::from(t.shift_right))
        .u8(13, t.shift_bits)
        .u8(14, mode)
        .finish("CONNMARK", 2)
}

//! `SECMARK` revision 1: `struct xt_secmark_target_info_v1` — mode (u8),
//! the context `char[256]`, then the secid the kernel fills in (u32 at
//! 260).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::secmark::{Secmark, SECCTX_SIZE};

/// SECMARK_MODE_SEL (SELinux)
const MODE_SEL: u8 = 0x01;

pub fn info(t: &Secmark) -> CompatInfo {
    Layout::new(264)
        .u8(0, MODE_SEL)
        .cstr(1, SECCTX_SIZE, &t.selctx)
        .finish("SECMARK", 1)
}

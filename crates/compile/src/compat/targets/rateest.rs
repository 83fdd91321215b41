//! `RATEEST` revision 0: `struct xt_rateest_target_info` — name
//! `char[16]`, interval (s8 at 16), ewma_log (u8 at 17), then the kernel's
//! estimator pointer (8-aligned, at 24).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::rateest::{Rateest, NAME_SIZE};

pub fn info(t: &Rateest) -> CompatInfo {
    Layout::new(32)
        .cstr(0, NAME_SIZE, &t.name)
        .u8(16, t.interval as u8)
        .u8(17, t.ewma_log)
        .finish("RATEEST", 0)
}

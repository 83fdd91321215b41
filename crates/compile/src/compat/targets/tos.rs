//! `TOS` revision 1: `struct xt_tos_target_info { __u8 tos_value,
//! tos_mask; }`.

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::tos::Tos;

pub fn info(t: &Tos) -> CompatInfo {
    Layout::new(2).u8(0, t.value).u8(1, t.mask).finish("TOS", 1)
}

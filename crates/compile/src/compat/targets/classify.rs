//! `CLASSIFY` revision 0: `struct xt_classify_target_info { __u32
//! priority; }` (host order).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::classify::Classify;

pub fn info(t: &Classify) -> CompatInfo {
    Layout::new(4).u32(0, t.priority).finish("CLASSIFY", 0)
}

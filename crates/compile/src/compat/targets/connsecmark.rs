//! `CONNSECMARK` revision 0: `struct xt_connsecmark_target_info { __u8
//! mode; }`.

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::connsecmark::Connsecmark;

pub fn info(t: &Connsecmark) -> CompatInfo {
    Layout::new(1).u8(0, t.mode as u8).finish("CONNSECMARK", 0)
}

//! `REJECT` revision 0: `struct ipt_reject_info` / `struct
//! ip6t_reject_info`, the reject type as a 32-bit value (host order).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::reject::Reject;

pub fn info(t: &Reject) -> CompatInfo {
    Layout::new(4).u32(0, u32::from(t.with)).finish("REJECT", 0)
}

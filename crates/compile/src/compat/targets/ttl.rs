//! `TTL` and `HL` revision 0: `struct ipt_TTL_info { __u8 mode, ttl; }`
//! and `struct ip6t_HL_info { __u8 mode, hop_limit; }`.

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::ttl::HopLimit;

pub fn info(t: &HopLimit, name: &'static str) -> CompatInfo {
    Layout::new(2)
        .u8(0, t.mode as u8)
        .u8(1, t.value)
        .finish(name, 0)
}

//! `TPROXY` revision 1: `struct xt_tproxy_target_info_v1 { __u32
//! mark_mask, mark_value; union nf_inet_addr laddr; __be16 lport; }`.

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::tproxy::Tproxy;

pub fn info(t: &Tproxy) -> CompatInfo {
    Layout::new(28)
        .u32(0, t.mark_mask)
        .u32(4, t.mark_value)
        .bytes(8, &t.laddr)
        .be16(24, t.lport)
        .finish("TPROXY", 1)
}

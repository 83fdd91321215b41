//! `SYNPROXY` revision 0: `struct xt_synproxy_info { __u8 options; __u8
//! wscale; __u16 mss; }` (host order).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::synproxy::Synproxy;

pub fn info(t: &Synproxy) -> CompatInfo {
    Layout::new(4)
        .u8(0, t.options)
        .u8(1, t.wscale)
        .u16(2, t.mss)
        .finish("SYNPROXY", 0)
}

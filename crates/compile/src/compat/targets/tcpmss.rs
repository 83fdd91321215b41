//! `TCPMSS` revision 0: `struct xt_tcpmss_info { __u16 mss; }` (host
//! order; 0xffff clamps to the path MTU).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::tcpmss::Tcpmss;

pub fn info(t: &Tcpmss) -> CompatInfo {
    Layout::new(2).u16(0, t.mss).finish("TCPMSS", 0)
}

//! `DSCP` revision 0: `struct xt_DSCP_info { __u8 dscp; }`.

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::dscp::Dscp;

pub fn info(t: &Dscp) -> CompatInfo {
    Layout::new(1).u8(0, t.dscp).finish("DSCP", 0)
}

//! `TCPOPTSTRIP` revision 0: `struct xt_tcpoptstrip_target_info { __u32
//! strip_bmap[8]; }` (host order).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::tcpoptstrip::Tcpoptstrip;

pub fn info(t: &Tcpoptstrip) -> CompatInfo {
    let mut l = Layout::new(32);
    for (i, w) in t.strip_bmap.iter().enumerate() {
        l.u32(4 * i, *w);
    }
    l.finish("TCPOPTSTRIP", 0)
}

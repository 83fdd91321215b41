//! `NFQUEUE` revision 3: `struct xt_NFQ_info_v3 { __u16 queuenum,
//! queues_total, flags; }`.

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::nfqueue::Nfqueue;

pub fn info(t: &Nfqueue) -> CompatInfo {
    Layout::new(6)
        .u16(0, t.queuenum)
        .u16(2, t.queues_total)
        .u16(4, t.flags)
        .finish("NFQUEUE", 3)
}

//! Lowering of `-m udp`: source and destination port ranges.

use super::tcp::{fragment_guard, ports};
use crate::lower::{Cx, Result};
use iptables::ext::matches::udp::Udp;

pub fn lower(m: &Udp, cx: &mut Cx) -> Result<()> {
    let full = |r: (u16, u16), inv: bool| r == (0, 65535) && !inv;
    if full(m.spts, m.inv_sport) && full(m.dpts, m.inv_dport) {
        fragment_guard(cx);
        return Ok(());
    }
    ports(cx, 0, m.spts, m.inv_sport);
    ports(cx, 2, m.dpts, m.inv_dport);
    Ok(())
}

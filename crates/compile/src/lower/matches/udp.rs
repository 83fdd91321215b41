//! Lowering of `-m udp`: source and destination port ranges.

use super::tcp::ports;
use crate::lower::{Cx, Result};
use iptables::ext::matches::udp::Udp;

pub fn lower(m: &Udp, cx: &mut Cx) -> Result<()> {
    ports(cx, 0, m.spts, m.inv_sport);
    ports(cx, 2, m.dpts, m.inv_dport);
    Ok(())
}

//! `CHECKSUM` revision 0: `struct xt_CHECKSUM_info { __u8 operation; }`.

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::checksum::Checksum;

/// XT_CHECKSUM_OP_FILL
const OP_FILL: u8 = 0x01;

pub fn info(t: &Checksum) -> CompatInfo {
    let op = if t.fill { OP_FILL } else { 0 };
    Layout::new(1).u8(0, op).finish("CHECKSUM", 0)
}

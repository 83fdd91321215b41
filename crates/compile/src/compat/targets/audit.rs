//! `AUDIT` revision 0: `struct xt_audit_info { __u8 type; }`.

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::audit::Audit;

pub fn info(t: &Audit) -> CompatInfo {
    Layout::new(1).u8(0, t.kind as u8).finish("AUDIT", 0)
}

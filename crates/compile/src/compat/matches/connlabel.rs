//! `-m connlabel` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_connlabel_mtinfo` (rev 0): bit u16 @0, options u16 @2
/// (OP_INVERT 1, OP_SET 2).
pub fn info(x: &m::connlabel::Connlabel) -> CompatInfo {
    let mut i = Info::new(4);
    i.u16(0, x.bit).u16(2, x.inv as u16 | (x.set as u16) << 1);
    compat("connlabel", 0, i)
}

//! `ECN` (IPv4) revision 0: `struct ipt_ECN_info { __u8 operation; __u8
//! ip_ect; struct { __u8 ece:1, cwr:1; } tcp; }`. The bit-fields are
//! allocated from the low bit on little-endian hosts and from the high bit
//! on big-endian ones (the C ABI's order).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::ecn::Ecn;

pub fn info(t: &Ecn) -> CompatInfo {
    let (ece, cwr) = if cfg!(target_endian = "big") {
        (0x80, 0x40)
    } else {
        (0x01, 0x02)
    };
    let mut bits = 0;
    if t.ece {
        bits |= ece;
    }
    if t.cwr {
        bits |= cwr;
    }
    Layout::new(3)
        .u8(0, t.operation)
        .u8(1, t.ip_ect)
        .u8(2, bits)
        .finish("ECN", 0)
}

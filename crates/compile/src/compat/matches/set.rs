//! `-m set` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;
use iptables::ext::matches::set::CounterOp;

/// `(op, value)` of a counter test (IPSET_COUNTER_NONE 0, EQ 1, NE 2,
/// LT 3, GT 4).
fn counter(c: CounterOp) -> (u8, u64) {
    match c {
        CounterOp::None => (0, 0),
        CounterOp::Eq(v) => (1, v),
        CounterOp::Ne(v) => (2, v),
        CounterOp::Lt(v) => (3, v),
        CounterOp::Gt(v) => (4, v),
    }
}

/// `struct xt_set_info_match_v4` (rev 4): match_set {index u16 @0, dim u8
/// @2, flags u8 @3 (IPSET_INV_MATCH 1, bit N for a `src` dimension N)},
/// packets {value u64 @8, op u8 @16}, bytes {value u64 @24, op u8 @32},
/// flags u32 @40 (SKIP_COUNTER_UPDATE 8, SKIP_SUBCOUNTER_UPDATE 16,
/// RETURN_NOMATCH 128).
///
/// The kernel names the set by its index, which only the kernel knows
/// (ipset's IP_SET_OP_GET_BYNAME): the caller looks it up.
pub fn info(x: &m::set::Set, index: u16) -> CompatInfo {
    let mut i = Info::new(44);
    let mut dims = x.inv as u8;
    for (n, &src) in x.dirs.iter().enumerate() {
        if src {
            dims |= 1 << (n + 1);
        }
    }
    let (pop, pv) = counter(x.packets);
    let (bop, bv) = counter(x.bytes);
    let flags = (x.skip_counters as u32) << 3
        | (x.skip_subcounters as u32) << 4
        | (x.return_nomatch as u32) << 7;
    i.u16(0, index)
        .u8(2, x.dirs.len() as u8)
        .u8(3, dims)
        .u64(8, pv)
        .u8(16, pop)
        .u64(24, bv)
        .u8(32, bop)
        .u32(40, flags);
    compat("set", 4, i)
}

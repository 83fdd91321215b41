//! `-m u32` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// One `struct xt_u32_test`: location {number u32, nextop u8}[11] @0 (8
/// bytes each), value {min u32, max u32}[11] @88, nnums u8 @176, nvalues
/// u8 @177; 180 bytes.
const TEST: usize = 180;

/// `struct xt_u32` (rev 0): tests[11] @0, ntests u8 @1980, invert u8
/// @1981.
pub fn info(x: &m::u32::U32) -> CompatInfo {
    let mut i = Info::new(1982);
    for (t, test) in x.tests.iter().enumerate() {
        let at = TEST * t;
        for (n, (op, num)) in test.location.iter().enumerate() {
            i.u32(at + 8 * n, *num).u8(at + 8 * n + 4, *op);
        }
        for (n, (lo, hi)) in test.values.iter().enumerate() {
            i.u32(at + 88 + 8 * n, *lo).u32(at + 92 + 8 * n, *hi);
        }
        i.u8(at + 176, test.location.len() as u8)
            .u8(at + 177, test.values.len() as u8);
    }
    i.u8(1980, x.tests.len() as u8).u8(1981, x.inv as u8);
    compat("u32", 0, i)
}

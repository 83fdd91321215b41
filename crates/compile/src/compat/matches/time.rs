//! `-m time` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_time_info` (rev 0): date_start u32 @0, date_stop @4,
/// daytime_start @8, daytime_stop @12, monthdays_match @16,
/// weekdays_match u8 @20, flags u8 @21.
pub fn info(x: &m::time::Time) -> CompatInfo {
    let mut i = Info::new(22);
    i.u32(0, x.date_start)
        .u32(4, x.date_stop)
        .u32(8, x.daytime_start)
        .u32(12, x.daytime_stop)
        .u32(16, x.monthdays)
        .u8(20, x.weekdays)
        .u8(21, x.flags);
    compat("time", 0, i)
}

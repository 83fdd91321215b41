//! `-m connbytes` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_connbytes_info` (rev 0): count.from u64 @0, count.to u64
/// @8, what u8 @16, direction u8 @17.
pub fn info(x: &m::connbytes::Connbytes) -> CompatInfo {
    let mut i = Info::new(18);
    i.u64(0, x.from).u64(8, x.to).u8(16, x.what).u8(17, x.dir);
    compat("connbytes", 0, i)
}

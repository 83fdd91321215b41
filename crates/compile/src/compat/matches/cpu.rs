//! `-m cpu` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_cpu_info` (rev 0): cpu u32 @0, invert u32 @4.
pub fn info(x: &m::cpu::Cpu) -> CompatInfo {
    let mut i = Info::new(8);
    i.u32(0, x.cpu).u32(4, x.inv as u32);
    compat("cpu", 0, i)
}

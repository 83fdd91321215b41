//! `-m hbh` and `-m dst` through nft_compat (one struct, `ip6t_opts`).

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches::hbh::OptsHeader;

/// `struct ip6t_opts` (rev 0): hdrlen u32 @0, flags u8 @4 (LEN 1, OPTS
/// 2), invflags u8 @5 (INV_LEN 1), opts u16[16] @6, optsnr u8 @38.
pub fn info(name: &'static str, x: &OptsHeader) -> CompatInfo {
    let mut i = Info::new(39);
    let mut flags = 0;
    if let Some((len, inv)) = x.len {
        flags |= 1;
        i.u32(0, len).u8(5, inv as u8);
    }
    if let Some(opts) = &x.opts {
        flags |= 2;
        for (n, o) in opts.iter().enumerate() {
            i.u16(6 + 2 * n, *o);
        }
        i.u8(38, opts.len() as u8);
    }
    i.u8(4, flags);
    compat(name, 0, i)
}

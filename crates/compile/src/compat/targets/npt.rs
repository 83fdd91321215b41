//! `SNPT` and `DNPT` revision 0: `struct ip6t_npt_tginfo` — source and
//! destination prefixes (16 bytes each), their lengths (u8 at 32, 33),
//! then the checksum adjustment the kernel computes (u16 at 34).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::npt::Npt;

pub fn info(t: &Npt, name: &'static str) -> CompatInfo {
    Layout::new(36)
        .bytes(0, &t.src_pfx)
        .bytes(16, &t.dst_pfx)
        .u8(32, t.src_pfx_len)
        .u8(33, t.dst_pfx_len)
        .finish(name, 0)
}

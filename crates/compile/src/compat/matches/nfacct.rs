//! `-m nfacct` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_nfacct_match_info_v1` (rev 1): name[32] @0, the kernel's
/// accounting object pointer @32.
pub fn info(x: &m::nfacct::Nfacct) -> CompatInfo {
    let mut i = Info::new(40);
    i.str(0, &x.name, 32);
    compat("nfacct", 1, i)
}

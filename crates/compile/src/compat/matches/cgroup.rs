//! `-m cgroup` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;
use m::cgroup::Test;

/// `struct xt_cgroup_info_v2` (rev 2): has_path u8 @0, has_classid @1,
/// invert_path @2, invert_classid @3, a union of path[512] and classid
/// u32 @4, the kernel's pointer @520.
pub fn info(x: &m::cgroup::Cgroup) -> CompatInfo {
    let mut i = Info::new(528);
    match &x.test {
        Some(Test::Path(p)) => {
            i.u8(0, 1).u8(2, x.inv as u8).str(4, p, 512);
        }
        Some(Test::Classid(c)) => {
            i.u8(1, 1).u8(3, x.inv as u8).u32(4, *c);
        }
        None => {}
    }
    compat("cgroup", 2, i)
}

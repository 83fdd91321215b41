//! `NETMAP` revision 0: IPv4 takes `struct nf_nat_ipv4_multi_range_compat`
//! and IPv6 `struct nf_nat_range`, both with MAP_IPS and the network as the
//! address range `addr` .. `addr | !mask` (network order).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::netmap::Netmap;

/// NF_NAT_RANGE_MAP_IPS
const MAP_IPS: u32 = 1;

pub fn info(t: &Netmap, v6: bool) -> CompatInfo {
    let mut max = t.addr;
    for (m, k) in max.iter_mut().zip(t.mask) {
        *m |= !k;
    }
    if v6 {
        Layout::new(40)
            .u32(0, MAP_IPS)
            .bytes(4, &t.addr)
            .bytes(20, &max)
            .finish("NETMAP", 0)
    } else {
        Layout::new(20)
            .u32(0, 1)
            .u32(4, MAP_IPS)
            .bytes(8, &t.addr[..4])
            .bytes(12, &max[..4])
            .finish("NETMAP", 0)
    }
}

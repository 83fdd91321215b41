//! `SNAT`, `DNAT`, `MASQUERADE` and `REDIRECT`, in the revisions
//! iptables 1.8 loads: IPv4 SNAT/MASQUERADE/REDIRECT revision 0 take
//! `struct nf_nat_ipv4_multi_range_compat` (rangesize, then one range:
//! flags, min_ip, max_ip, min and max port); IPv6 SNAT revision 1 and
//! MASQUERADE/REDIRECT revision 0 take `struct nf_nat_range` (flags, min
//! and max address, min and max port); DNAT revision 2 takes `struct
//! nf_nat_range2` (`nf_nat_range` plus the base port of a shifted range).
//! Addresses and ports are in network order.

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::snat::NatRange;

/// `nf_nat_ipv4_multi_range_compat` with one range.
fn compat_v4(r: &NatRange, name: &'static str) -> CompatInfo {
    Layout::new(20)
        .u32(0, 1)
        .u32(4, u32::from(r.flags))
        .bytes(8, &r.min_addr[..4])
        .bytes(12, &r.max_addr[..4])
        .be16(16, r.min_port)
        .be16(18, r.max_port)
        .finish(name, 0)
}

/// `nf_nat_range` (40 bytes), or `nf_nat_range2` (44) with the base port.
fn range(r: &NatRange, two: bool, name: &'static str, rev: u32) -> CompatInfo {
    let mut l = Layout::new(if two { 44 } else { 40 });
    l.u32(0, u32::from(r.flags))
        .bytes(4, &r.min_addr)
        .bytes(20, &r.max_addr)
        .be16(36, r.min_port)
        .be16(38, r.max_port);
    if two {
        l.be16(40, r.base_port);
    }
    l.finish(name, rev)
}

pub fn snat(r: &NatRange, v6: bool) -> CompatInfo {
    if v6 {
        range(r, false, "SNAT", 1)
    } else {
        compat_v4(r, "SNAT")
    }
}

pub fn dnat(r: &NatRange) -> CompatInfo {
    range(r, true, "DNAT", 2)
}

pub fn masquerade(r: &NatRange, v6: bool) -> CompatInfo {
    if v6 {
        range(r, false, "MASQUERADE", 0)
    } else {
        compat_v4(r, "MASQUERADE")
    }
}

pub fn redirect(r: &NatRange, v6: bool) -> CompatInfo {
    if v6 {
        range(r, false, "REDIRECT", 0)
    } else {
        compat_v4(r, "REDIRECT")
    }
}

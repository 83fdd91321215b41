//! `-m conntrack` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;
use iptables::ext::matches::conntrack::{CtAddr, CtPorts};

/// An IPv4 mask as iptables stores it: an address without a prefix (the
/// save form prints none for /32) or with a mask that is no prefix leaves
/// the other 12 bytes all ones; a shorter prefix clears them.
pub(crate) fn v4_hostmask(mask: &[u8; 16]) -> [u8; 16] {
    let mut m = *mask;
    let full = m[..4] == [0xff; 4];
    let prefix = !full && {
        let v = u32::from_be_bytes([m[0], m[1], m[2], m[3]]);
        v.leading_ones() + v.trailing_zeros() == 32
    };
    m[4..].fill(if prefix { 0 } else { 0xff });
    m
}

/// The kernel's state bits: INVALID 1, ESTABLISHED 2, RELATED 4, NEW 8
/// (as nfkeeper's), then SNAT 1 << 6, DNAT 1 << 7, UNTRACKED 1 << 8
/// (IP_CT_NUMBER + 1..3), which nfkeeper keeps at bits 8..10.
fn state_bits(mask: u32) -> u16 {
    use iptables::ext::matches::conntrack::{ST_DNAT, ST_SNAT, ST_UNTRACKED};
    let mut v = (mask & 0xf) as u16;
    for (ours, bit) in [
        (ST_SNAT, 1u16 << 6),
        (ST_DNAT, 1 << 7),
        (ST_UNTRACKED, 1 << 8),
    ] {
        if mask & ours != 0 {
            v |= bit;
        }
    }
    v
}

/// `struct xt_conntrack_mtinfo3` (rev 3): orig src/dst and reply src/dst
/// address and mask @0..128 (16 bytes each, address then mask),
/// expires_min u32 @128, expires_max @132, l4proto u16 @136, the four
/// ports' low ends u16 @138..146 (host order in this revision), match_flags u16 @146, invert_flags
/// @148 (STATE 1, PROTO 2, ORIGSRC 4, ORIGDST 8, REPLSRC 16, REPLDST 32,
/// STATUS 64, EXPIRES 128, the four ports 256..2048, DIRECTION 4096),
/// state_mask @150, status_mask @152, the ports' high ends u16 @154..162.
pub fn info(x: &m::conntrack::Conntrack) -> CompatInfo {
    let mut i = Info::new(162);
    let (mut flags, mut inv) = (0u16, 0u16);
    let mut flag = |bit: u16, invert: bool| {
        flags |= bit;
        if invert {
            inv |= bit;
        }
    };
    if let Some((mask, v)) = x.state {
        flag(1, v);
        i.u16(150, state_bits(mask));
    }
    if let Some((p, v)) = x.proto {
        flag(2, v);
        i.u16(136, p as u16);
    }
    let addrs: [(&Option<CtAddr>, u16); 4] = [
        (&x.origsrc, 4),
        (&x.origdst, 8),
        (&x.replsrc, 16),
        (&x.repldst, 32),
    ];
    for (n, (a, bit)) in addrs.into_iter().enumerate() {
        if let Some(a) = a {
            flag(bit, a.inv);
            let mask = if x.v6 { a.mask } else { v4_hostmask(&a.mask) };
            i.bytes(32 * n, &a.addr).bytes(32 * n + 16, &mask);
        }
    }
    let ports: [(&Option<CtPorts>, u16); 4] = [
        (&x.origsrcport, 256),
        (&x.origdstport, 512),
        (&x.replsrcport, 1024),
        (&x.repldstport, 2048),
    ];
    for (n, (p, bit)) in ports.into_iter().enumerate() {
        if let Some(p) = p {
            flag(bit, p.inv);
            i.u16(138 + 2 * n, p.lo).u16(154 + 2 * n, p.hi);
        }
    }
    if let Some((mask, v)) = x.status {
        flag(64, v);
        i.u16(152, mask as u16);
    }
    if let Some((lo, hi, v)) = x.expire {
        flag(128, v);
        i.u32(128, lo).u32(132, hi);
    }
    if let Some(reply) = x.dir_reply {
        flag(4096, reply);
    }
    i.u16(146, flags).u16(148, inv);
    compat("conntrack", 3, i)
}

#[cfg(test)]
mod tests {
    use super::v4_hostmask;

    #[test]
    fn v4_mask_tails() {
        let cases: &[([u8; 4], u8)] = &[
            ([255, 255, 255, 255], 0xff),
            ([255, 255, 255, 0], 0),
            ([0, 0, 0, 0], 0),
            ([255, 0, 255, 0], 0xff),
        ];
        for (head, tail) in cases {
            let mut m = [0u8; 16];
            m[..4].copy_from_slice(head);
            let got = v4_hostmask(&m);
            assert_eq!(got[..4], head[..], "{head:?}");
            assert!(got[4..].iter().all(|b| b == tail), "{head:?}");
        }
    }
}

//! Lowering of `-m length`: the packet length the kernel's length match
//! reads from the network header, in an inclusive range.
//!
//! IPv4 compares the header's total length (bytes 2..4). IPv6 compares the
//! payload length (bytes 4..6) plus the 40-byte fixed header, so the range
//! is shifted down by 40 (clamped; a range wholly below 40 matches no
//! packet). nftables' `meta length` (the buffer length) is not used: it
//! differs from the header field for GSO/BIG TCP packets.

use crate::lower::{Cx, Result};
use iptables::ext::matches::length::Length;

/// Size of the fixed IPv6 header, counted by ip6tables' length match.
const IPV6_HDR: u16 = 40;

pub fn lower(m: &Length, cx: &mut Cx) -> Result<()> {
    if !cx.is_v6() {
        cx.nh(2, 2);
        cx.range(&m.min.to_be_bytes(), &m.max.to_be_bytes(), m.inv);
        return Ok(());
    }
    let lo = m.min.max(IPV6_HDR);
    if m.max < lo {
        // No IPv6 packet has that length.
        if m.inv {
            return Ok(());
        }
        cx.nh(4, 2);
        cx.range(&[0, 0], &[0xff, 0xff], true);
        return Ok(());
    }
    cx.nh(4, 2);
    let (lo, hi) = (lo - IPV6_HDR, m.max - IPV6_HDR);
    cx.range(&lo.to_be_bytes(), &hi.to_be_bytes(), m.inv);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    #[test]
    fn lowering() {
        let b = u16::to_be_bytes;
        let len = |min, max, inv| Length { min, max, inv };
        let cases: Vec<(Family, Length, Vec<nft::Expr>)> = vec![
            (Family::Ipv4, len(40, 40, false), vec![nh(2, 2), eq(&b(40))]),
            (Family::Ipv4, len(40, 40, true), vec![nh(2, 2), ne(&b(40))]),
            (
                Family::Ipv4,
                len(0, 400, false),
                vec![nh(2, 2), range(&b(0), &b(400), false)],
            ),
            (
                Family::Ipv4,
                len(86, 65535, true),
                vec![nh(2, 2), range(&b(86), &b(65535), true)],
            ),
            (Family::Ipv6, len(40, 40, false), vec![nh(4, 2), eq(&b(0))]),
            (
                Family::Ipv6,
                len(100, 1500, true),
                vec![nh(4, 2), range(&b(60), &b(1460), true)],
            ),
            (
                Family::Ipv6,
                len(0, 400, false),
                vec![nh(4, 2), range(&b(0), &b(360), false)],
            ),
            (
                Family::Ipv6,
                len(0, 65535, false),
                vec![nh(4, 2), range(&b(0), &b(65495), false)],
            ),
            // below the IPv6 header size: never / always
            (
                Family::Ipv6,
                len(0, 39, false),
                vec![nh(4, 2), range(&b(0), &b(65535), true)],
            ),
            (Family::Ipv6, len(10, 20, true), vec![]),
        ];
        for (fam, m, want) in cases {
            let got = run(fam, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, want, "{fam:?} {m:?}");
        }
    }
}

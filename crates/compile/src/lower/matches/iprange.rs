//! Lowering of `-m iprange`: source and destination address in an
//! inclusive range, compared as big-endian numbers as the kernel does
//! (IPv4: 4 bytes at 12/16; IPv6: 16 bytes at 8/24). A range whose low end
//! is above its high end matches no address, in both the kernel's match
//! and nftables' `range`.

use crate::lower::{Cx, Result};
use iptables::ext::matches::iprange::{Iprange, Range};

fn one(cx: &mut Cx, r: &Range, dst: bool) {
    let (off, len) = match (cx.is_v6(), dst) {
        (false, false) => (12, 4),
        (false, true) => (16, 4),
        (true, false) => (8, 16),
        (true, true) => (24, 16),
    };
    cx.nh(off, len as u32);
    cx.range(&r.lo[..len], &r.hi[..len], r.inv);
}

pub fn lower(m: &Iprange, cx: &mut Cx) -> Result<()> {
    if let Some(r) = &m.src {
        one(cx, r, false);
    }
    if let Some(r) = &m.dst {
        one(cx, r, true);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    fn r(lo: &[u8], hi: &[u8], inv: bool) -> Range {
        let mut a = Range {
            lo: [0; 16],
            hi: [0; 16],
            inv,
        };
        a.lo[..lo.len()].copy_from_slice(lo);
        a.hi[..hi.len()].copy_from_slice(hi);
        a
    }

    #[test]
    fn lowering() {
        let v6a: [u8; 16] = "::2d01".parse::<std::net::Ipv6Addr>().unwrap().octets();
        let v6b: [u8; 16] = "::2d03".parse::<std::net::Ipv6Addr>().unwrap().octets();
        let cases: Vec<(Family, Iprange, Vec<nft::Expr>)> = vec![
            (
                Family::Ipv4,
                Iprange {
                    src: Some(r(&[10, 0, 0, 1], &[10, 0, 0, 9], false)),
                    dst: None,
                },
                vec![nh(12, 4), range(&[10, 0, 0, 1], &[10, 0, 0, 9], false)],
            ),
            (
                Family::Ipv4,
                Iprange {
                    src: Some(r(&[4, 4, 4, 4], &[7, 7, 7, 7], true)),
                    dst: Some(r(&[3, 3, 3, 3], &[3, 3, 3, 3], true)),
                },
                vec![
                    nh(12, 4),
                    range(&[4, 4, 4, 4], &[7, 7, 7, 7], true),
                    nh(16, 4),
                    ne(&[3, 3, 3, 3]),
                ],
            ),
            (
                Family::Ipv6,
                Iprange {
                    src: Some(r(&v6a, &v6b, false)),
                    dst: Some(r(&v6a, &v6b, true)),
                },
                vec![
                    nh(8, 16),
                    range(&v6a, &v6b, false),
                    nh(24, 16),
                    range(&v6a, &v6b, true),
                ],
            ),
            // low above high: kept as is (matches nothing / everything)
            (
                Family::Ipv6,
                Iprange {
                    src: None,
                    dst: Some(r(&v6b, &v6a, false)),
                },
                vec![nh(24, 16), range(&v6b, &v6a, false)],
            ),
        ];
        for (fam, m, want) in cases {
            let got = run(fam, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, want, "{fam:?} {m:?}");
        }
    }
}

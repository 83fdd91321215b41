//! Lowering of `-m esp`: the SPI (first 4 bytes of the ESP header) in an
//! inclusive range, for IPv4 and IPv6.
//!
//! The kernel's esp match refuses non-first fragments and matches
//! `(lo <= spi <= hi) ^ invert`. ESP is not an IPv6 extension header for
//! the kernel's header walk, so on both families it is the transport
//! header nftables loads; that load fails on non-first fragments (no
//! match, inverted or not). The load is kept even for the full range
//! `0:4294967295`, which therefore still rejects fragments as iptables does.

use super::icmp::require_proto;
use crate::lower::{Cx, Result};
use iptables::ext::matches::esp::Esp;

pub fn lower(m: &Esp, cx: &mut Cx) -> Result<()> {
    require_proto(cx, 50);
    cx.th(0, 4);
    cx.range(&m.spis.0.to_be_bytes(), &m.spis.1.to_be_bytes(), m.inv);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use nft::expr::meta as mk;
    use ruleset::Family;

    #[test]
    fn lowering() {
        let esp = |lo: u32, hi: u32, inv: bool| Esp {
            spis: (lo, hi),
            inv,
        };
        let full = |neq| range(&[0; 4], &[0xff; 4], neq);
        let cases: Vec<(Family, Esp, u8, Vec<nft::Expr>)> = vec![
            (
                Family::Ipv4,
                esp(500, 500, false),
                50,
                vec![th(0, 4), eq(&500u32.to_be_bytes())],
            ),
            (
                Family::Ipv6,
                esp(500, 500, true),
                50,
                vec![th(0, 4), ne(&500u32.to_be_bytes())],
            ),
            (
                Family::Ipv4,
                esp(500, 600, true),
                50,
                vec![
                    th(0, 4),
                    range(&500u32.to_be_bytes(), &600u32.to_be_bytes(), true),
                ],
            ),
            (
                Family::Ipv6,
                esp(0, u32::MAX, false),
                50,
                vec![th(0, 4), full(false)],
            ),
            (
                Family::Ipv4,
                esp(0, u32::MAX, true),
                50,
                vec![th(0, 4), full(true)],
            ),
            (
                Family::Ipv6,
                esp(7, 7, false),
                0,
                vec![
                    meta(mk::L4PROTO),
                    eq(&[50]),
                    th(0, 4),
                    eq(&7u32.to_be_bytes()),
                ],
            ),
        ];
        for (fam, m, proto, want) in cases {
            let (got, _) = run_proto(fam, proto, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, want, "{fam:?} {m:?}");
        }
    }
}

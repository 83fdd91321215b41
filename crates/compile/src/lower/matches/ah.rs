//! Lowering of `-m ah`.
//!
//! IPv4: AH is the transport protocol (51); the SPI is bytes 4..8 of its
//! header. The kernel's ah match refuses non-first fragments and matches
//! `(lo <= spi <= hi) ^ invert`; the transport load fails on non-first
//! fragments, and is kept for the full range so that rule still holds.
//!
//! IPv6: AH is an extension header that ip6tables looks up anywhere in the
//! header chain (and nftables' transport offset skips), so every IPv6 use
//! needs the exthdr expression.

use super::icmp::require_proto;
use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::ah::Ah;

pub fn lower(m: &Ah, cx: &mut Cx) -> Result<()> {
    if cx.is_v6() {
        return Err(LowerError::not_native(
            "ip6tables -m ah",
            "the IPv6 authentication header is an extension header; matching it needs the exthdr expression",
        ));
    }
    require_proto(cx, 51);
    cx.th(4, 4);
    cx.range(&m.spis.0.to_be_bytes(), &m.spis.1.to_be_bytes(), m.inv_spi);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    fn ah(lo: u32, hi: u32, inv_spi: bool) -> Ah {
        Ah {
            spis: (lo, hi),
            inv_spi,
            hdrlen: 0,
            inv_len: false,
            hdrres: false,
        }
    }

    #[test]
    fn lowering() {
        let b = u32::to_be_bytes;
        let cases: Vec<(Ah, Vec<nft::Expr>)> = vec![
            (ah(500, 500, false), vec![th(4, 4), eq(&b(500))]),
            (ah(50, 50, true), vec![th(4, 4), ne(&b(50))]),
            (
                ah(500, 600, false),
                vec![th(4, 4), range(&b(500), &b(600), false)],
            ),
            (
                ah(500, 600, true),
                vec![th(4, 4), range(&b(500), &b(600), true)],
            ),
            (
                ah(0, u32::MAX, false),
                vec![th(4, 4), range(&[0; 4], &[0xff; 4], false)],
            ),
        ];
        for (m, want) in cases {
            let (got, _) = run_proto(Family::Ipv4, 51, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, want, "{m:?}");
        }
        let mut v6 = ah(500, 500, false);
        v6.hdrres = true;
        for m in [ah(500, 500, false), v6] {
            let e = run(Family::Ipv6, |cx| lower(&m, cx)).unwrap_err();
            assert!(e.to_string().contains("exthdr"), "{e}");
        }
    }
}

//! Lowering of `-m ah`.
//!
//! IPv4: AH is the transport protocol (51); the SPI is bytes 4..8 of its
//! header. The kernel's ah match refuses non-first fragments and matches
//! `(lo <= spi <= hi) ^ invert`; the transport load fails on non-first
//! fragments, and is kept for the full range so that rule still holds.
//!
//! IPv6: AH is an extension header that ip6t_ah finds anywhere in the
//! header chain and fails without, whatever the inversions; `exthdr` finds
//! it the same way and stops the rule without it, so each field test also
//! requires the header, and a match testing nothing tests its presence.
//! ip6t_ah compares `--ahlen` with the header's length in bytes,
//! `(hdrlen + 2) * 4`, so the raw field is compared with `len / 4 - 2`
//! (iptables-translate compares the raw field with `len` itself); a length
//! no header can have is not native uninverted (never matches) and only
//! requires the header inverted. `--ahres` matches a zero reserved field
//! (iptables-translate's "ah reserved 1" inverts this).

use super::icmp::require_proto;
use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::ah::Ah;
use nft::expr::exthdr::OP_IPV6;

/// `NEXTHDR_AUTH`.
const AUTH: u8 = 51;

fn lower_v6(m: &Ah, cx: &mut Cx) -> Result<()> {
    let spi = m.spis != (0, u32::MAX) || m.inv_spi;
    // The raw header-length field for a byte length, if one exists.
    let raw = (m.hdrlen % 4 == 0)
        .then(|| (m.hdrlen / 4).checked_sub(2))
        .flatten()
        .filter(|r| *r <= 255);
    let len = m.hdrlen != 0;
    if len && raw.is_none() && !m.inv_len {
        return Err(LowerError::not_native(
            format!("ip6tables -m ah --ahlen {}", m.hdrlen),
            "no AH header has this length (a multiple of 4 from 8 to 1028), so the rule never matches",
        ));
    }
    let len_test = raw.filter(|_| len);
    if !spi && len_test.is_none() && !m.hdrres {
        cx.exthdr_exists(OP_IPV6, AUTH, false);
        return Ok(());
    }
    if spi {
        cx.exthdr(OP_IPV6, AUTH, 4, 4);
        cx.range(&m.spis.0.to_be_bytes(), &m.spis.1.to_be_bytes(), m.inv_spi);
    }
    if let Some(r) = len_test {
        cx.exthdr(OP_IPV6, AUTH, 1, 1);
        cx.eq(&[r as u8], m.inv_len);
    }
    if m.hdrres {
        cx.exthdr(OP_IPV6, AUTH, 2, 2);
        cx.eq(&[0, 0], false);
    }
    Ok(())
}

pub fn lower(m: &Ah, cx: &mut Cx) -> Result<()> {
    if cx.is_v6() {
        return lower_v6(m, cx);
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
    }

    #[test]
    fn lowering_v6() {
        let x = |offset: u32, len: u32| exthdr(OP_IPV6, AUTH, offset, len);
        let present = exthdr_present(OP_IPV6, AUTH);
        let b = u32::to_be_bytes;
        let with = |m: Ah, hdrlen: u32, inv_len: bool, hdrres: bool| Ah {
            hdrlen,
            inv_len,
            hdrres,
            ..m
        };
        let full = ah(0, u32::MAX, false);
        let cases: Vec<(Ah, Vec<nft::Expr>)> = vec![
            (full.clone(), vec![present.clone(), eq(&[1])]),
            (ah(500, 500, false), vec![x(4, 4), eq(&b(500))]),
            (
                ah(500, 550, false),
                vec![x(4, 4), range(&b(500), &b(550), false)],
            ),
            (
                ah(0, u32::MAX, true),
                vec![x(4, 4), range(&[0; 4], &[0xff; 4], true)],
            ),
            // 120 bytes = raw 28
            (
                with(full.clone(), 120, true, false),
                vec![x(1, 1), ne(&[28])],
            ),
            (with(full.clone(), 8, false, false), vec![x(1, 1), eq(&[0])]),
            (
                with(full.clone(), 0, false, true),
                vec![x(2, 2), eq(&[0, 0])],
            ),
            (
                with(ah(500, 500, false), 1028, false, true),
                vec![
                    x(4, 4),
                    eq(&b(500)),
                    x(1, 1),
                    eq(&[255]),
                    x(2, 2),
                    eq(&[0, 0]),
                ],
            ),
            // no header has 121 bytes: inverted, only the header is required
            (
                with(full.clone(), 121, true, false),
                vec![present, eq(&[1])],
            ),
        ];
        for (m, want) in cases {
            assert_eq!(
                run(Family::Ipv6, |cx| lower(&m, cx)).unwrap(),
                want,
                "{m:?}"
            );
        }
        for len in [121, 4, 1032] {
            let m = with(full.clone(), len, false, false);
            let e = run(Family::Ipv6, |cx| lower(&m, cx)).unwrap_err();
            assert!(e.to_string().contains("never matches"), "{e}");
        }
    }
}

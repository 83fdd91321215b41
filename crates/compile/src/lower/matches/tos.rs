//! Lowering of `-m tos`: `(tos & mask) == value`, inverted if asked.
//!
//! As in the kernel, the value is compared unmasked: a value with bits
//! outside the mask matches no packet (every packet when inverted). IPv4:
//! the TOS byte (network byte 1). IPv6: the traffic class, which straddles
//! bytes 0..2 (bits 4..12 of the first 16), so mask and value are shifted
//! left by 4 over a 2-byte load.

use crate::lower::{Cx, Result};
use iptables::ext::matches::tos::Tos;

/// `(field & mask) == value` on the DS field (the TOS byte or the IPv6
/// traffic class), compared unmasked as the kernel does; shared with dscp.
pub(crate) fn ds_field(cx: &mut Cx, value: u8, mask: u8, inv: bool) {
    if cx.is_v6() {
        cx.nh(0, 2);
        cx.mask(&(u16::from(mask) << 4).to_be_bytes());
        cx.eq(&(u16::from(value) << 4).to_be_bytes(), inv);
    } else {
        cx.nh(1, 1);
        if mask != 0xff {
            cx.mask(&[mask]);
        }
        cx.eq(&[value], inv);
    }
}

pub fn lower(m: &Tos, cx: &mut Cx) -> Result<()> {
    ds_field(cx, m.value, m.mask, m.inv);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    #[test]
    fn lowering() {
        let tos = |value, mask, inv| Tos { value, mask, inv };
        let cases: Vec<(Family, Tos, Vec<nft::Expr>)> = vec![
            (
                Family::Ipv4,
                tos(0x10, 0x3f, false),
                vec![nh(1, 1), mask(&[0x3f]), eq(&[0x10])],
            ),
            (
                Family::Ipv4,
                tos(0x10, 0x3f, true),
                vec![nh(1, 1), mask(&[0x3f]), ne(&[0x10])],
            ),
            (
                Family::Ipv4,
                tos(0x22, 0xff, false),
                vec![nh(1, 1), eq(&[0x22])],
            ),
            // value outside the mask: compared unmasked (never equal)
            (
                Family::Ipv4,
                tos(0xc0, 0x3f, false),
                vec![nh(1, 1), mask(&[0x3f]), eq(&[0xc0])],
            ),
            (
                Family::Ipv4,
                tos(0, 0, false),
                vec![nh(1, 1), mask(&[0]), eq(&[0])],
            ),
            (
                Family::Ipv6,
                tos(0x10, 0x3f, false),
                vec![nh(0, 2), mask(&[0x03, 0xf0]), eq(&[0x01, 0x00])],
            ),
            (
                Family::Ipv6,
                tos(0xb8, 0xff, true),
                vec![nh(0, 2), mask(&[0x0f, 0xf0]), ne(&[0x0b, 0x80])],
            ),
        ];
        for (fam, m, want) in cases {
            let got = run(fam, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, want, "{fam:?} {m:?}");
        }
    }
}

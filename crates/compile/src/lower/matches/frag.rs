//! Lowering of `-m frag` (IPv6 fragment header) with the exthdr expression.
//!
//! ip6t_frag finds the fragment header anywhere in the extension-header
//! chain (`ipv6_find_hdr`) and fails without one, whatever the inversions;
//! `exthdr` finds it the same way and stops the rule when it is missing, so
//! every field test also requires the header, and a match testing nothing
//! tests its presence. Fields: identification (bytes 4..8) in range xor
//! `!`; `--fragres`: the reserved byte and the two reserved bits of the
//! offset word are zero (iptables-translate's "frag reserved 1" inverts
//! this); `--fragfirst`: offset 0; `--fragmore`/`--fraglast`: the M flag
//! set/clear. `--fraglen` is ignored, as the kernel ignores it.

use crate::lower::{Cx, Result};
use iptables::ext::matches::frag::Frag;
use nft::expr::exthdr::OP_IPV6;

/// `NEXTHDR_FRAGMENT`.
const FRAGMENT: u8 = 44;

/// `(offset word & mask) == value` of the fragment header (bytes 2..4).
fn offset_word(cx: &mut Cx, mask: u16, value: u16) {
    cx.exthdr(OP_IPV6, FRAGMENT, 2, 2);
    cx.masked_eq(&value.to_be_bytes(), &mask.to_be_bytes(), false);
}

pub fn lower(m: &Frag, cx: &mut Cx) -> Result<()> {
    let ids = m.ids != (0, u32::MAX) || m.inv_ids;
    if !(ids || m.res || m.first || m.more || m.last) {
        cx.exthdr_exists(OP_IPV6, FRAGMENT, false);
        return Ok(());
    }
    if ids {
        cx.exthdr(OP_IPV6, FRAGMENT, 4, 4);
        cx.range(&m.ids.0.to_be_bytes(), &m.ids.1.to_be_bytes(), m.inv_ids);
    }
    if m.res {
        cx.exthdr(OP_IPV6, FRAGMENT, 1, 1);
        cx.eq(&[0], false);
        offset_word(cx, 0x0006, 0);
    }
    if m.first {
        offset_word(cx, 0xfff8, 0);
    }
    if m.more {
        offset_word(cx, 0x0001, 1);
    }
    if m.last {
        offset_word(cx, 0x0001, 0);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use nft::Expr;
    use ruleset::Family;

    fn frag(ids: (u32, u32), inv_ids: bool, flags: [bool; 4]) -> Frag {
        Frag {
            ids,
            inv_ids,
            len: Some(8),
            inv_len: false,
            res: flags[0],
            first: flags[1],
            more: flags[2],
            last: flags[3],
        }
    }

    fn load(offset: u32, len: u32) -> Expr {
        exthdr(OP_IPV6, FRAGMENT, offset, len)
    }

    #[test]
    fn lowering() {
        let b = u32::to_be_bytes;
        let none = [false; 4];
        let present = exthdr_present(OP_IPV6, FRAGMENT);
        let cases: Vec<(Frag, Vec<Expr>)> = vec![
            (frag((0, u32::MAX), false, none), vec![present, eq(&[1])]),
            (
                frag((100, 200), false, none),
                vec![load(4, 4), range(&b(100), &b(200), false)],
            ),
            (frag((100, 100), true, none), vec![load(4, 4), ne(&b(100))]),
            (
                frag((0, u32::MAX), true, none),
                vec![load(4, 4), range(&[0; 4], &[0xff; 4], true)],
            ),
            (
                frag((0, u32::MAX), false, [true, false, false, false]),
                vec![load(1, 1), eq(&[0]), load(2, 2), mask(&[0, 6]), eq(&[0, 0])],
            ),
            (
                frag((0, u32::MAX), false, [false, true, true, false]),
                vec![
                    load(2, 2),
                    mask(&[0xff, 0xf8]),
                    eq(&[0, 0]),
                    load(2, 2),
                    mask(&[0, 1]),
                    eq(&[0, 1]),
                ],
            ),
            (
                frag((7, 7), false, [false, false, false, true]),
                vec![
                    load(4, 4),
                    eq(&b(7)),
                    load(2, 2),
                    mask(&[0, 1]),
                    eq(&[0, 0]),
                ],
            ),
        ];
        for (m, want) in cases {
            assert_eq!(
                run(Family::Ipv6, |cx| lower(&m, cx)).unwrap(),
                want,
                "{m:?}"
            );
        }
    }
}

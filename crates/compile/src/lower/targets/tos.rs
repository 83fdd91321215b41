//! Lowering of `-j TOS` (xt_DSCP.c, `tos_tg`/`tos_tg6`): the IPv4 TOS byte
//! or the IPv6 traffic class becomes `(ds & ~mask) ^ value`, rewritten
//! through its 16-bit header word (see [`super::rewrite`]). A rule that
//! changes nothing (`--and-tos 0xff`) lowers to nothing, as the target
//! leaves such packets alone.

use super::rewrite::dsfield;
use crate::lower::{Cx, Result};
use iptables::ext::targets::tos::Tos;

pub fn lower(t: &Tos, cx: &mut Cx) -> Result<()> {
    if t.mask != 0 || t.value != 0 {
        dsfield(cx, !t.mask, t.value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::targets::rewrite::test::word;
    use crate::lower::testutil::run;
    use ruleset::Family;

    /// (value, mask, IPv4 word and/xor, IPv6 word and/xor)
    type Case = (u8, u8, (u16, u16), (u16, u16));

    #[test]
    fn forms() {
        let cases: &[Case] = &[
            // --set-tos 0x1f (mask 0xff)
            (0x1f, 0xff, (0xff00, 0x001f), (0xf00f, 0x01f0)),
            // --set-tos 0x12/0x34
            (0x12, 0x34, (0xffcb, 0x0012), (0xfcbf, 0x0120)),
            // --and-tos 0x12: value 0, mask !0x12
            (0x00, 0xed, (0xff12, 0x0000), (0xf12f, 0x0000)),
            // --or-tos 0x12: value = mask = 0x12
            (0x12, 0x12, (0xffed, 0x0012), (0xfedf, 0x0120)),
            // --xor-tos 0x12: mask 0
            (0x12, 0x00, (0xffff, 0x0012), (0xffff, 0x0120)),
        ];
        for &(value, mask, v4, v6) in cases {
            let t = Tos { value, mask };
            assert_eq!(
                run(Family::Ipv4, |cx| lower(&t, cx)).unwrap(),
                word(false, 0, v4.0, v4.1),
                "{t:?}"
            );
            assert_eq!(
                run(Family::Ipv6, |cx| lower(&t, cx)).unwrap(),
                word(true, 0, v6.0, v6.1),
                "{t:?}"
            );
        }
        let noop = Tos { value: 0, mask: 0 };
        assert_eq!(run(Family::Ipv4, |cx| lower(&noop, cx)).unwrap(), vec![]);
    }

    /// The IPv6 word's and/xor do to the traffic class what the target
    /// does, and keep the version and flow label: every class, every
    /// mask/value pair of a sample, against `(tc & ~mask) ^ value`.
    #[test]
    fn v6_word_is_the_target() {
        for (value, mask) in [(0x12u8, 0x34u8), (0xff, 0xff), (0x01, 0x00), (0, 0xed)] {
            let (and, xor) = (0xf00f | u16::from(!mask) << 4, u16::from(value) << 4);
            for tc in 0..=255u8 {
                let word = 0x6000 | u16::from(tc) << 4 | 0x5;
                let got = (word & and) ^ xor;
                assert_eq!(got & 0xf00f, 0x6005);
                assert_eq!((got >> 4) as u8, (tc & !mask) ^ value);
            }
        }
    }
}

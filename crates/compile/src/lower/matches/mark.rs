//! Lowering of `-m mark`: xt_mark matches `(skb->mark & mask) == mark`
//! (negated with `!`), comparing with the mark as given — bits outside
//! the mask make it never match (always, inverted), and so does the cmp.

use crate::lower::{Cx, Result};
use iptables::ext::matches::mark::Mark;
use nft::expr::meta;

/// `(reg1 & mask) == value` on a host-order u32, `!=` when `invert`; the
/// value is not masked (as xt_mark and xt_connmark compare it).
pub(crate) fn mark_test(cx: &mut Cx, value: u32, mask: u32, invert: bool) {
    if mask != u32::MAX {
        cx.mask(&mask.to_ne_bytes());
    }
    cx.eq(&value.to_ne_bytes(), invert);
}

pub fn lower(m: &Mark, cx: &mut Cx) -> Result<()> {
    cx.meta(meta::MARK);
    mark_test(cx, m.mark, m.mask, m.inv);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    #[test]
    fn lowering() {
        let mk = |mark, mask, inv| Mark { mark, mask, inv };
        let cases = [
            (mk(1, u32::MAX, true), vec![ne(&ne32(1))]),
            (mk(0xa, 0xa, true), vec![mask(&ne32(0xa)), ne(&ne32(0xa))]),
            (
                mk(0x10, 0xf0, false),
                vec![mask(&ne32(0xf0)), eq(&ne32(0x10))],
            ),
            // Value bits outside the mask: kept, so it never matches.
            (mk(3, 1, false), vec![mask(&ne32(1)), eq(&ne32(3))]),
            (mk(0, 0, false), vec![mask(&ne32(0)), eq(&ne32(0))]),
        ];
        for (m, want) in cases {
            for fam in [Family::Ipv4, Family::Ipv6] {
                let want = [vec![meta(meta::MARK)], want.clone()].concat();
                assert_eq!(run(fam, |cx| lower(&m, cx)).unwrap(), want, "{m:?}");
            }
        }
    }
}

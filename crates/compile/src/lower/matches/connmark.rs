//! Lowering of `-m connmark`: `ct mark` masked and compared with the value
//! as given. xt_connmark fails packets without a conntrack entry (even
//! inverted), as the ct expression does by ending the rule.

use super::mark::mark_test;
use crate::lower::{Cx, Result};
use iptables::ext::matches::connmark::Connmark;
use nft::expr::ct;

pub fn lower(m: &Connmark, cx: &mut Cx) -> Result<()> {
    cx.ct(ct::MARK, None);
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
        let mk = |mark, mask, inv| Connmark { mark, mask, inv };
        let cases = [
            (mk(2, u32::MAX, false), vec![eq(&ne32(2))]),
            (mk(2, u32::MAX, true), vec![ne(&ne32(2))]),
            (mk(10, 10, false), vec![mask(&ne32(10)), eq(&ne32(10))]),
            (mk(10, 10, true), vec![mask(&ne32(10)), ne(&ne32(10))]),
        ];
        for (m, want) in cases {
            for fam in [Family::Ipv4, Family::Ipv6] {
                let want = [vec![ct(ct::MARK, None)], want.clone()].concat();
                assert_eq!(run(fam, |cx| lower(&m, cx)).unwrap(), want, "{m:?}");
            }
        }
    }
}

//! Lowering of `-m state`: iptables runs it as xt_conntrack's state test
//! alone, which is exact as `ct state` (readable for every packet, with or
//! without a conntrack entry).

use super::conntrack::state_test;
use crate::lower::{Cx, Result};
use iptables::ext::matches::state::State;

pub fn lower(m: &State, cx: &mut Cx) -> Result<()> {
    state_test(cx, m.mask, m.inv);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use iptables::ext::matches::conntrack::{ST_ESTABLISHED, ST_INVALID, ST_RELATED, ST_UNTRACKED};
    use nft::expr::ct;
    use ruleset::Family;

    #[test]
    fn lowering() {
        let cases = [
            (ST_ESTABLISHED | ST_RELATED, false, 6, ne(&[0; 4])),
            (ST_INVALID, true, 1, eq(&[0; 4])),
            (ST_UNTRACKED, false, 64, ne(&[0; 4])),
        ];
        for fam in [Family::Ipv4, Family::Ipv6] {
            for (mask_, inv, bits, test) in &cases {
                let m = State {
                    mask: *mask_,
                    inv: *inv,
                };
                let want = vec![ct(ct::STATE, None), mask(&ne32(*bits)), test.clone()];
                assert_eq!(run(fam, |cx| lower(&m, cx)).unwrap(), want);
            }
        }
    }
}

//! Lowering of `-m hl` (IPv6): the header's hop limit (byte 7) compared
//! with `==`, `!=`, `<` or `>`, as the kernel's hl match does.

use super::ttl::compare;
use crate::lower::{Cx, Result};
use iptables::ext::matches::hl::Hl;

pub fn lower(m: &Hl, cx: &mut Cx) -> Result<()> {
    compare(cx, 7, m.mode, m.hop_limit);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use iptables::ext::matches::ttl::{EQ, GT, LT, NE};
    use nft::expr::CmpOp;
    use ruleset::Family;

    #[test]
    fn lowering() {
        let cases = [
            (EQ, 64, CmpOp::Eq),
            (NE, 3, CmpOp::Neq),
            (LT, 2, CmpOp::Lt),
            (GT, 3, CmpOp::Gt),
        ];
        for (mode, hop_limit, op) in cases {
            let m = Hl { mode, hop_limit };
            let got = run(Family::Ipv6, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, vec![nh(7, 1), cmp(op, &[hop_limit])], "{m:?}");
        }
    }
}

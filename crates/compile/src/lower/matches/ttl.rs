//! Lowering of `-m ttl` (IPv4): the header's TTL (byte 8) compared with
//! `==`, `!=`, `<` or `>`, as the kernel's ttl match does.

use crate::lower::{Cx, Result};
use iptables::ext::matches::ttl::{Ttl, EQ, GT, LT, NE};
use nft::expr::CmpOp;

/// Compare the one-byte header field at network offset `off` with `v`
/// under a ttl/hl mode (shared with `-m hl`).
pub(crate) fn compare(cx: &mut Cx, off: u32, mode: u8, v: u8) {
    let op = match mode {
        NE => CmpOp::Neq,
        LT => CmpOp::Lt,
        GT => CmpOp::Gt,
        EQ => CmpOp::Eq,
        _ => CmpOp::Eq,
    };
    cx.nh(off, 1);
    cx.cmp(op, &[v]);
}

pub fn lower(m: &Ttl, cx: &mut Cx) -> Result<()> {
    compare(cx, 8, m.mode, m.ttl);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    #[test]
    fn lowering() {
        let cases = [
            (EQ, 3, CmpOp::Eq),
            (NE, 3, CmpOp::Neq),
            (LT, 0, CmpOp::Lt),
            (GT, 255, CmpOp::Gt),
            (GT, 5, CmpOp::Gt),
        ];
        for (mode, ttl, op) in cases {
            let m = Ttl { mode, ttl };
            let got = run(Family::Ipv4, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, vec![nh(8, 1), cmp(op, &[ttl])], "{m:?}");
        }
    }
}

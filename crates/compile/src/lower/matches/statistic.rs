//! Lowering of `-m statistic`.
//!
//! Random mode: xt_statistic matches when `(random & 0x7fffffff) <
//! probability` (`>=` inverted); nftables' `meta random` gives a fresh
//! 32-bit random number, masked and compared the same way (as big-endian
//! bytes; any byte order of a uniform random value is uniform).
//!
//! Nth mode: xt_statistic's counter starts at `every - packet` and the
//! rule matches when it wraps to 0, i.e. on packets `packet+1`,
//! `packet+1+every`, …; `numgen inc mod every` yields 0, 1, … from the
//! first packet, so `== packet` matches the same packets (`!=` inverted).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::statistic::Statistic;
use nft::expr::{reg, CmpOp};
use nft::Expr;

/// NFT_META_PRANDOM
const META_PRANDOM: u32 = 24;
/// NFT_NG_INCREMENTAL
const NG_INC: u32 = 0;

pub fn lower(m: &Statistic, cx: &mut Cx) -> Result<()> {
    if m.nth {
        let modulus = m.val.checked_add(1).ok_or_else(|| {
            LowerError::not_native(
                "-m statistic --every 4294967296",
                "numgen's modulus is a 32-bit value",
            )
        })?;
        cx.push(Expr::Numgen {
            dreg: reg::R1,
            modulus,
            ty: NG_INC,
            offset: None,
        });
        cx.eq(&m.packet.to_ne_bytes(), m.inv);
    } else {
        cx.meta(META_PRANDOM);
        cx.mask(&0x7fff_ffffu32.to_be_bytes());
        let op = if m.inv { CmpOp::Gte } else { CmpOp::Lt };
        cx.cmp(op, &m.val.to_be_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    fn st(nth: bool, val: u32, packet: u32, inv: bool) -> Statistic {
        Statistic {
            nth,
            val,
            packet,
            inv,
        }
    }

    #[test]
    fn lowering() {
        let ng = |modulus| Expr::Numgen {
            dreg: reg::R1,
            modulus,
            ty: 0,
            offset: None,
        };
        let rnd = |op, v: u32| {
            vec![
                meta(24),
                mask(&[0x7f, 0xff, 0xff, 0xff]),
                cmp(op, &v.to_be_bytes()),
            ]
        };
        let cases = [
            (st(true, 9, 1, false), vec![ng(10), eq(&ne32(1))]),
            (st(true, 9, 5, true), vec![ng(10), ne(&ne32(5))]),
            (st(true, 0, 0, false), vec![ng(1), eq(&ne32(0))]),
            (st(false, 214748365, 0, false), rnd(CmpOp::Lt, 214748365)),
            (st(false, 1 << 31, 0, true), rnd(CmpOp::Gte, 1 << 31)),
            (st(false, 0, 0, false), rnd(CmpOp::Lt, 0)),
        ];
        for (m, want) in cases {
            for fam in [Family::Ipv4, Family::Ipv6] {
                assert_eq!(run(fam, |cx| lower(&m, cx)).unwrap(), want, "{m:?}");
            }
        }
        assert!(run(Family::Ipv4, |cx| lower(&st(true, u32::MAX, 0, false), cx)).is_err());
    }
}

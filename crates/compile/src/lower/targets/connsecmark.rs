//! Lowering of `-j CONNSECMARK` (xt_CONNSECMARK.c), with nft's `ct
//! secmark` and `meta secmark`:
//!
//! - `--save`: a packet with a security mark gives it to its conntrack if
//!   that has none: `ct secmark == 0, meta secmark != 0, ct secmark set
//!   meta secmark`.
//! - `--restore`: a packet without one takes its conntrack's, if that has
//!   one: `meta secmark == 0, ct secmark != 0, meta secmark set ct
//!   secmark`.
//!
//! Without a conntrack the `ct` load ends the rule, as the target does
//! nothing then; `ct secmark set` reports the change to conntrack events
//! as the target does.

use crate::lower::{Cx, Result};
use iptables::ext::targets::connsecmark::{Connsecmark, ConnsecmarkMode};
use nft::expr::{ct, meta, reg, CmpOp};
use nft::Expr;

const ZERO: [u8; 4] = [0; 4];

pub fn lower(t: &Connsecmark, cx: &mut Cx) -> Result<()> {
    match t.mode {
        ConnsecmarkMode::Save => {
            cx.ct(ct::SECMARK, None);
            cx.cmp(CmpOp::Eq, &ZERO);
            cx.meta(meta::SECMARK);
            cx.cmp(CmpOp::Neq, &ZERO);
            cx.push(Expr::CtSet {
                key: ct::SECMARK,
                sreg: reg::R1,
                dir: None,
            });
        }
        ConnsecmarkMode::Restore => {
            cx.meta(meta::SECMARK);
            cx.cmp(CmpOp::Eq, &ZERO);
            cx.ct(ct::SECMARK, None);
            cx.cmp(CmpOp::Neq, &ZERO);
            cx.push(Expr::MetaSet {
                key: meta::SECMARK,
                sreg: reg::R1,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::{ct as ct_load, ct_set, eq, meta as meta_load, meta_set, ne, run};
    use ruleset::Family;

    #[test]
    fn forms() {
        let cases = [
            (
                ConnsecmarkMode::Save,
                vec![
                    ct_load(ct::SECMARK, None),
                    eq(&ZERO),
                    meta_load(meta::SECMARK),
                    ne(&ZERO),
                    ct_set(ct::SECMARK, None),
                ],
            ),
            (
                ConnsecmarkMode::Restore,
                vec![
                    meta_load(meta::SECMARK),
                    eq(&ZERO),
                    ct_load(ct::SECMARK, None),
                    ne(&ZERO),
                    meta_set(meta::SECMARK),
                ],
            ),
        ];
        for (mode, want) in cases {
            for fam in [Family::Ipv4, Family::Ipv6] {
                let t = Connsecmark { mode };
                assert_eq!(run(fam, |cx| lower(&t, cx)).unwrap(), want, "{mode:?}");
            }
        }
    }
}

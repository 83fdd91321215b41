//! Lowering of `-j MASQUERADE`: the `masq` expression, ports (if any) in
//! registers 1 and 2, the range flags as they are (see [`super::snat`]).

use super::snat::{check_offset, flags, ports};
use crate::lower::{Cx, Result};
use iptables::ext::targets::masquerade::Masquerade;
use nft::expr::reg;
use nft::Expr;

pub fn lower(t: &Masquerade, cx: &mut Cx) -> Result<()> {
    check_offset("MASQUERADE", &t.range)?;
    let (reg_proto_min, reg_proto_max) = ports(cx, &t.range, reg::R1, reg::R2);
    cx.push(Expr::Masq {
        flags: flags(&t.range),
        reg_proto_min,
        reg_proto_max,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::{imm, nat_range, run};
    use iptables::ext::targets::snat::{PROTO_RANDOM, PROTO_RANDOM_FULLY, PROTO_SPECIFIED};
    use ruleset::Family;

    fn masq(flags: Option<u32>, lo: Option<u32>, hi: Option<u32>) -> Expr {
        Expr::Masq {
            flags,
            reg_proto_min: lo,
            reg_proto_max: hi,
        }
    }

    #[test]
    fn forms() {
        let p = PROTO_SPECIFIED;
        let cases: Vec<(u8, (u16, u16), Vec<Expr>)> = vec![
            (0, (0, 0), vec![masq(None, None, None)]),
            (
                p,
                (10, 10),
                vec![imm(1, &[0, 10]), masq(Some(2), Some(1), None)],
            ),
            (
                p | PROTO_RANDOM,
                (10, 20),
                vec![
                    imm(1, &[0, 10]),
                    imm(2, &[0, 20]),
                    masq(Some(6), Some(1), Some(2)),
                ],
            ),
            (
                PROTO_RANDOM | PROTO_RANDOM_FULLY,
                (0, 0),
                vec![masq(Some(0x14), None, None)],
            ),
        ];
        for (f, pr, want) in cases {
            for fam in [Family::Ipv4, Family::Ipv6] {
                let t = Masquerade {
                    range: nat_range(f, ("", ""), pr),
                };
                assert_eq!(run(fam, |cx| lower(&t, cx)).unwrap(), want, "{t:?}");
            }
        }
    }
}

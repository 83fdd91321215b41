//! Lowering of `-j REDIRECT`: the `redir` expression, ports (if any) in
//! registers 1 and 2, the range flags as they are (see [`super::snat`]).

use super::snat::{check_offset, flags, ports};
use crate::lower::{Cx, Result};
use iptables::ext::targets::redirect::Redirect;
use nft::expr::reg;
use nft::Expr;

pub fn lower(t: &Redirect, cx: &mut Cx) -> Result<()> {
    check_offset("REDIRECT", &t.range)?;
    let (reg_proto_min, reg_proto_max) = ports(cx, &t.range, reg::R1, reg::R2);
    cx.push(Expr::Redir {
        reg_proto_min,
        reg_proto_max,
        flags: flags(&t.range),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::{imm, nat_range, run};
    use iptables::ext::targets::snat::{PROTO_RANDOM, PROTO_SPECIFIED};
    use ruleset::Family;

    fn redir(flags: Option<u32>, lo: Option<u32>, hi: Option<u32>) -> Expr {
        Expr::Redir {
            reg_proto_min: lo,
            reg_proto_max: hi,
            flags,
        }
    }

    #[test]
    fn forms() {
        let p = PROTO_SPECIFIED;
        let cases: Vec<(u8, (u16, u16), Vec<Expr>)> = vec![
            (0, (0, 0), vec![redir(None, None, None)]),
            (
                p,
                (0, 0),
                vec![imm(1, &[0, 0]), redir(Some(2), Some(1), None)],
            ),
            (
                p,
                (0, 65535),
                vec![
                    imm(1, &[0, 0]),
                    imm(2, &[0xff, 0xff]),
                    redir(Some(2), Some(1), Some(2)),
                ],
            ),
            (
                p | PROTO_RANDOM,
                (8080, 8080),
                vec![
                    imm(1, &8080u16.to_be_bytes()),
                    redir(Some(6), Some(1), None),
                ],
            ),
            (PROTO_RANDOM, (0, 0), vec![redir(Some(4), None, None)]),
        ];
        for (f, pr, want) in cases {
            for fam in [Family::Ipv4, Family::Ipv6] {
                let t = Redirect {
                    range: nat_range(f, ("", ""), pr),
                };
                assert_eq!(run(fam, |cx| lower(&t, cx)).unwrap(), want, "{t:?}");
            }
        }
    }
}

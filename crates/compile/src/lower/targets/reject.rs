//! Lowering of `-j REJECT`: the `reject` expression. ICMP types become
//! `NFT_REJECT_ICMP_UNREACH` with the ICMP (IPv4) or ICMPv6 code the kernel's
//! ipt_REJECT/ip6t_REJECT send for them; `tcp-reset` becomes
//! `NFT_REJECT_TCP_RST` (both send the same reset through nf_send_reset).
//! The ip/ip6 reject expressions are family specific, so the codes are those
//! of the family, not the abstract ICMPX ones.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::reject::Reject;
use nft::Expr;

/// `enum nft_reject_types`.
const ICMP_UNREACH: u32 = 0;
const TCP_RST: u32 = 1;

/// What to send for an ipt_reject_with / ip6t_reject_with value: `None` for
/// a TCP reset, else the ICMP(v6) destination-unreachable code.
fn code(v6: bool, with: u8) -> Option<Option<u8>> {
    Some(match (v6, with) {
        // IPv4: net, host, protocol, port unreachable; net/host prohibited
        // (ICMP_NET_ANO 9, ICMP_HOST_ANO 10); admin prohibited
        // (ICMP_PKT_FILTERED 13).
        (false, 0..=3) => Some(with),
        (false, 5) => Some(9),
        (false, 6) => Some(10),
        (false, 7) => None,
        (false, 8) => Some(13),
        // IPv6: no route 0, admin prohibited 1, not neighbour 2, address
        // unreachable 3, port unreachable 4, policy fail 5, reject route 6.
        (true, 0..=4) => Some(with),
        (true, 6) => None,
        (true, 7) => Some(5),
        (true, 8) => Some(6),
        _ => return None,
    })
}

pub fn lower(t: &Reject, cx: &mut Cx) -> Result<()> {
    let v6 = cx.is_v6();
    let Some(c) = code(v6, t.with) else {
        return Err(LowerError::not_native(
            format!("-j REJECT with type {}", t.with),
            "this reject type sends no ICMP unreachable code or TCP reset",
        ));
    };
    cx.push(match c {
        Some(code) => Expr::Reject {
            ty: ICMP_UNREACH,
            code: Some(code),
        },
        None => Expr::Reject {
            ty: TCP_RST,
            code: None,
        },
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::run;
    use ruleset::Family;

    fn icmp(code: u8) -> Expr {
        Expr::Reject {
            ty: ICMP_UNREACH,
            code: Some(code),
        }
    }
    const RST: Expr = Expr::Reject {
        ty: TCP_RST,
        code: None,
    };

    #[test]
    fn codes() {
        let cases: &[(Family, u8, Expr)] = &[
            (Family::Ipv4, 0, icmp(0)),
            (Family::Ipv4, 1, icmp(1)),
            (Family::Ipv4, 2, icmp(2)),
            (Family::Ipv4, 3, icmp(3)),
            (Family::Ipv4, 5, icmp(9)),
            (Family::Ipv4, 6, icmp(10)),
            (Family::Ipv4, 7, RST),
            (Family::Ipv4, 8, icmp(13)),
            (Family::Ipv6, 0, icmp(0)),
            (Family::Ipv6, 1, icmp(1)),
            (Family::Ipv6, 3, icmp(3)),
            (Family::Ipv6, 4, icmp(4)),
            (Family::Ipv6, 6, RST),
            (Family::Ipv6, 7, icmp(5)),
            (Family::Ipv6, 8, icmp(6)),
        ];
        for (fam, with, want) in cases {
            let t = Reject {
                v6: *fam == Family::Ipv6,
                with: *with,
            };
            assert_eq!(
                run(*fam, |cx| lower(&t, cx)).unwrap(),
                vec![want.clone()],
                "{t:?}"
            );
        }
        // The obsolete echo-reply types have no lowering.
        for (fam, with) in [(Family::Ipv4, 4), (Family::Ipv6, 5)] {
            let t = Reject {
                v6: fam == Family::Ipv6,
                with,
            };
            assert!(run(fam, |cx| lower(&t, cx)).is_err());
        }
    }
}

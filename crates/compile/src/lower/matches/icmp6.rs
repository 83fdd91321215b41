//! Lowering of `-m icmp6` (IPv6): type and code as transport-header loads.
//!
//! ip6tables' icmp6 match refuses non-first fragments and otherwise matches
//! `(type == T && lo <= code <= hi) ^ invert` (there is no `any` type in the
//! kernel's IPv6 match). The transport header nftables loads is the one
//! after the extension headers, as ip6tables finds it.

use super::icmp::{require_proto, type_code};
use crate::lower::{Cx, Result};
use iptables::ext::matches::icmp6::Icmp6;

pub fn lower(m: &Icmp6, cx: &mut Cx) -> Result<()> {
    require_proto(cx, 58);
    type_code(cx, m.typ, m.code_min, m.code_max, m.inv);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use nft::expr::meta as mk;
    use ruleset::Family;

    fn icmp6(typ: u8, code_min: u8, code_max: u8, inv: bool) -> Icmp6 {
        Icmp6 {
            typ,
            code_min,
            code_max,
            inv,
        }
    }

    #[test]
    fn lowering() {
        let cases: Vec<(Icmp6, u8, Vec<nft::Expr>)> = vec![
            (icmp6(128, 0, 255, false), 58, vec![th(0, 1), eq(&[128])]),
            (icmp6(2, 0, 255, true), 58, vec![th(0, 1), ne(&[2])]),
            (
                icmp6(1, 4, 4, false),
                58,
                vec![th(0, 1), eq(&[1]), th(1, 1), eq(&[4])],
            ),
            (icmp6(1, 4, 4, true), 58, vec![th(0, 2), ne(&[1, 4])]),
            (
                icmp6(1, 0, 3, true),
                58,
                vec![th(0, 2), range(&[1, 0], &[1, 3], true)],
            ),
            // 255 is an ordinary type for IPv6
            (icmp6(255, 0, 255, false), 58, vec![th(0, 1), eq(&[255])]),
            (
                icmp6(135, 0, 255, false),
                0,
                vec![meta(mk::L4PROTO), eq(&[58]), th(0, 1), eq(&[135])],
            ),
        ];
        for (m, proto, want) in cases {
            let (got, _) = run_proto(Family::Ipv6, proto, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, want, "{m:?}");
        }
    }
}

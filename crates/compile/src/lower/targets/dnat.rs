//! Lowering of `-j DNAT`: the `nat` expression of type dnat; see
//! [`super::snat`] for the registers and flags.

use super::snat::{nat, NAT_DNAT};
use crate::lower::{Cx, Result};
use iptables::ext::targets::dnat::Dnat;

pub fn lower(t: &Dnat, cx: &mut Cx) -> Result<()> {
    nat("DNAT", NAT_DNAT, &t.range, cx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::{imm, nat_range, run};
    use crate::lower::LowerError;
    use iptables::ext::targets::snat::{
        MAP_IPS, PERSISTENT, PROTO_OFFSET, PROTO_RANDOM, PROTO_SPECIFIED,
    };
    use nft::Expr;
    use ruleset::Family;

    #[test]
    fn forms() {
        let v6 = |s: &str| s.parse::<std::net::Ipv6Addr>().unwrap().octets();
        let cases: Vec<(Family, _, Vec<Expr>)> = vec![
            // --to-destination [fec0::1234-fec0::2000]:1-20 --random --persistent
            (
                Family::Ipv6,
                nat_range(
                    MAP_IPS | PROTO_SPECIFIED | PROTO_RANDOM | PERSISTENT,
                    ("fec0::1234", "fec0::2000"),
                    (1, 20),
                ),
                vec![
                    imm(1, &v6("fec0::1234")),
                    imm(2, &v6("fec0::2000")),
                    imm(3, &[0, 1]),
                    imm(4, &[0, 20]),
                    Expr::Nat {
                        ty: 1,
                        family: 10,
                        reg_addr_min: Some(1),
                        reg_addr_max: Some(2),
                        reg_proto_min: Some(3),
                        reg_proto_max: Some(4),
                        flags: Some(0xf),
                    },
                ],
            ),
            // --to-destination 10.0.0.1
            (
                Family::Ipv4,
                nat_range(MAP_IPS, ("10.0.0.1", "10.0.0.1"), (0, 0)),
                vec![
                    imm(1, &[10, 0, 0, 1]),
                    Expr::Nat {
                        ty: 1,
                        family: 2,
                        reg_addr_min: Some(1),
                        reg_addr_max: None,
                        reg_proto_min: None,
                        reg_proto_max: None,
                        flags: Some(1),
                    },
                ],
            ),
        ];
        for (fam, r, want) in cases {
            let got = run(fam, |cx| lower(&Dnat { range: r.clone() }, cx)).unwrap();
            assert_eq!(got, want, "{r:?}");
        }
        // --to-destination 1.2.3.4:1000-2000/3000
        let mut r = nat_range(
            MAP_IPS | PROTO_SPECIFIED | PROTO_OFFSET,
            ("1.2.3.4", "1.2.3.4"),
            (1000, 2000),
        );
        r.base_port = 3000;
        let e = run(Family::Ipv4, |cx| lower(&Dnat { range: r }, cx)).unwrap_err();
        assert!(matches!(e, LowerError::NotNative { .. }));
    }
}

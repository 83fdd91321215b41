//! Lowering of `-j SNAT`: the `nat` expression (type snat) with the range's
//! addresses and ports loaded by `immediate`s. This file also holds what the
//! NAT targets share (SNAT, DNAT, MASQUERADE, REDIRECT).
//!
//! Registers: minimum address in 1, maximum address in 2 (only when it
//! differs), minimum port in 3, maximum port in 4 (only when it differs); the
//! kernel takes a missing maximum register as equal to the minimum. Ports are
//! network byte order, as the kernel stores them in `nf_nat_range2`. The range
//! flags go to the expression as they are (MAP_IPS, PROTO_SPECIFIED, RANDOM,
//! PERSISTENT, RANDOM_FULLY); a shifted port range (PROTO_OFFSET) has no
//! native form: no nat/masq/redir attribute carries the base port (kernel
//! 6.18 ignores an NFTA_NAT_REG_PROTO_BASE, as proposed upstream but not
//! merged: a rule given one dumps back without it, and the flag alone
//! would shift from port 0).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::snat::{NatRange, Snat, MAP_IPS, PROTO_OFFSET, PROTO_SPECIFIED};
use nft::expr::reg;
use nft::{Data, Expr};

/// `enum nft_nat_types`.
pub(crate) const NAT_SNAT: u32 = 0;
pub(crate) const NAT_DNAT: u32 = 1;
/// NFPROTO_IPV4 / NFPROTO_IPV6.
const NFPROTO_IPV4: u32 = 2;
const NFPROTO_IPV6: u32 = 10;

/// Load `data` into register `r`.
fn imm(cx: &mut Cx, r: u32, data: &[u8]) {
    cx.push(Expr::Immediate {
        dreg: r,
        data: Data::Value(data.to_vec()),
    });
}

/// Reject a shifted port range (`--to-ports a-b/base`).
pub(crate) fn check_offset(target: &str, r: &NatRange) -> Result<()> {
    if r.flags & PROTO_OFFSET != 0 {
        return Err(LowerError::not_native(
            format!("-j {target} with a shifted port range (port-port/base)"),
            "the kernel's nat expressions take no base port for \
             NF_NAT_RANGE_PROTO_OFFSET (an NFTA_NAT_REG_PROTO_BASE is ignored), so \
             the ports could not be shifted from it",
        ));
    }
    Ok(())
}

/// The range's flags for the expression, `None` when there are none.
pub(crate) fn flags(r: &NatRange) -> Option<u32> {
    (r.flags != 0).then_some(r.flags as u32)
}

/// Load the port range (if `PROTO_SPECIFIED`) into `lo_reg` (and `hi_reg`
/// when the range has two ports); the (min, max) registers for the
/// expression.
pub(crate) fn ports(
    cx: &mut Cx,
    r: &NatRange,
    lo_reg: u32,
    hi_reg: u32,
) -> (Option<u32>, Option<u32>) {
    if r.flags & PROTO_SPECIFIED == 0 {
        return (None, None);
    }
    imm(cx, lo_reg, &r.min_port.to_be_bytes());
    if r.max_port == r.min_port {
        return (Some(lo_reg), None);
    }
    imm(cx, hi_reg, &r.max_port.to_be_bytes());
    (Some(lo_reg), Some(hi_reg))
}

/// A `nat` expression of type `ty` (snat/dnat) for the range.
pub(crate) fn nat(target: &str, ty: u32, r: &NatRange, cx: &mut Cx) -> Result<()> {
    check_offset(target, r)?;
    let (family, alen) = if cx.is_v6() {
        (NFPROTO_IPV6, 16)
    } else {
        (NFPROTO_IPV4, 4)
    };
    let (mut amin, mut amax) = (None, None);
    if r.flags & MAP_IPS != 0 {
        imm(cx, reg::R1, &r.min_addr[..alen]);
        amin = Some(reg::R1);
        if r.max_addr[..alen] != r.min_addr[..alen] {
            imm(cx, reg::R2, &r.max_addr[..alen]);
            amax = Some(reg::R2);
        }
    }
    let (pmin, pmax) = ports(cx, r, reg::R3, reg::R4);
    cx.push(Expr::Nat {
        ty,
        family,
        reg_addr_min: amin,
        reg_addr_max: amax,
        reg_proto_min: pmin,
        reg_proto_max: pmax,
        flags: flags(r),
    });
    Ok(())
}

pub fn lower(t: &Snat, cx: &mut Cx) -> Result<()> {
    nat("SNAT", NAT_SNAT, &t.range, cx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::{imm, nat_range, run};
    use iptables::ext::targets::snat::{PERSISTENT, PROTO_RANDOM, PROTO_RANDOM_FULLY};
    use ruleset::Family;

    fn nat_expr(
        family: u32,
        a: (Option<u32>, Option<u32>),
        p: (Option<u32>, Option<u32>),
        flags: Option<u32>,
    ) -> Expr {
        Expr::Nat {
            ty: NAT_SNAT,
            family,
            reg_addr_min: a.0,
            reg_addr_max: a.1,
            reg_proto_min: p.0,
            reg_proto_max: p.1,
            flags,
        }
    }

    #[test]
    fn forms() {
        let (m, p) = (MAP_IPS, PROTO_SPECIFIED);
        let cases: Vec<(Family, NatRange, Vec<Expr>)> = vec![
            // --to-source 1.2.3.4
            (
                Family::Ipv4,
                nat_range(m, ("1.2.3.4", "1.2.3.4"), (0, 0)),
                vec![
                    imm(1, &[1, 2, 3, 4]),
                    nat_expr(2, (Some(1), None), (None, None), Some(1)),
                ],
            ),
            // --to-source 1.2.3.4-1.2.3.6:1-1023 --random-fully --persistent
            (
                Family::Ipv4,
                nat_range(
                    m | p | PROTO_RANDOM_FULLY | PERSISTENT,
                    ("1.2.3.4", "1.2.3.6"),
                    (1, 1023),
                ),
                vec![
                    imm(1, &[1, 2, 3, 4]),
                    imm(2, &[1, 2, 3, 6]),
                    imm(3, &[0, 1]),
                    imm(4, &[3, 0xff]),
                    nat_expr(2, (Some(1), Some(2)), (Some(3), Some(4)), Some(0x1b)),
                ],
            ),
            // --to-source :80 (ports only) --random
            (
                Family::Ipv4,
                nat_range(p | PROTO_RANDOM, ("", ""), (80, 80)),
                vec![
                    imm(3, &[0, 80]),
                    nat_expr(2, (None, None), (Some(3), None), Some(6)),
                ],
            ),
            // --to-source [fec0::1]:0-65535
            (
                Family::Ipv6,
                nat_range(m | p, ("fec0::1", "fec0::1"), (0, 65535)),
                vec![
                    imm(
                        1,
                        &"fec0::1".parse::<std::net::Ipv6Addr>().unwrap().octets(),
                    ),
                    imm(3, &[0, 0]),
                    imm(4, &[0xff, 0xff]),
                    nat_expr(10, (Some(1), None), (Some(3), Some(4)), Some(3)),
                ],
            ),
        ];
        for (fam, r, want) in cases {
            let got = run(fam, |cx| lower(&Snat { range: r.clone() }, cx)).unwrap();
            assert_eq!(got, want, "{r:?}");
        }
    }

    #[test]
    fn shifted_ports_not_native() {
        let r = nat_range(PROTO_SPECIFIED | PROTO_OFFSET, ("", ""), (10, 20));
        let e = run(Family::Ipv4, |cx| lower(&Snat { range: r }, cx)).unwrap_err();
        assert!(matches!(e, LowerError::NotNative { .. }));
    }
}

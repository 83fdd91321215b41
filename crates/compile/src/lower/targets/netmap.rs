//! Lowering of `-j NETMAP` (xt_NETMAP.c): the `nat` expression with the
//! range flag NF_NAT_RANGE_NETMAP (nft's `snat/dnat prefix to`), which
//! keeps the host part of the address and takes the network part from the
//! range, as xt_NETMAP does (both compute the mask as `~(min ^ max)` per
//! 32-bit word).
//!
//! xt_NETMAP maps the destination in PREROUTING and OUTPUT and the source
//! in POSTROUTING and INPUT, deciding by the hook the packet is in; the
//! `nat` expression's type is fixed when the rule is loaded. So a rule in
//! a built-in chain lowers to dnat or snat by its chain, and a rule in a
//! user-defined chain (reachable from either) has no native form.

use super::snat::{NAT_DNAT, NAT_SNAT};
use crate::layout::base_chain;
use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::netmap::Netmap;
use nft::chain::hook;
use nft::expr::reg;
use nft::{Data, Expr};

/// NF_NAT_RANGE_MAP_IPS | NF_NAT_RANGE_NETMAP.
const FLAGS: u32 = 0x01 | 0x40;
/// NFPROTO_IPV4 / NFPROTO_IPV6.
const NFPROTO_IPV4: u32 = 2;
const NFPROTO_IPV6: u32 = 10;

pub fn lower(t: &Netmap, cx: &mut Cx) -> Result<()> {
    let ty = match base_chain(cx.table, cx.chain).map(|b| b.hook) {
        Some(hook::PRE_ROUTING | hook::LOCAL_OUT) => NAT_DNAT,
        Some(hook::POST_ROUTING | hook::LOCAL_IN) => NAT_SNAT,
        _ => {
            return Err(LowerError::not_native(
                format!("-j NETMAP in the user-defined chain {}", cx.chain),
                "NETMAP maps the destination or the source depending on the \
                 hook the packet is in, and nftables' nat expression has that \
                 choice fixed when the rule is loaded",
            ))
        }
    };
    let (family, alen) = if cx.is_v6() {
        (NFPROTO_IPV6, 16)
    } else {
        (NFPROTO_IPV4, 4)
    };
    let min = &t.addr[..alen];
    let max: Vec<u8> = min.iter().zip(&t.mask).map(|(a, m)| a | !m).collect();
    cx.push(Expr::Immediate {
        dreg: reg::R1,
        data: Data::Value(min.to_vec()),
    });
    let reg_addr_max = (max != min).then(|| {
        cx.push(Expr::Immediate {
            dreg: reg::R2,
            data: Data::Value(max),
        });
        reg::R2
    });
    cx.push(Expr::Nat {
        ty,
        family,
        reg_addr_min: Some(reg::R1),
        reg_addr_max,
        reg_proto_min: None,
        reg_proto_max: None,
        flags: Some(FLAGS),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::imm;
    use iptables::Rule;
    use ruleset::{Family, TableKind};

    fn run(family: Family, chain: &str, t: &Netmap) -> Result<Vec<Expr>> {
        let rule = Rule::default();
        let mut cx = Cx::new(family, TableKind::Nat, chain, &rule);
        lower(t, &mut cx)?;
        Ok(cx.out)
    }

    fn net(addr: &str, bits: u32) -> Netmap {
        let mut a = [0u8; 16];
        let mut m = [0u8; 16];
        let n = if addr.contains(':') {
            a = addr.parse::<std::net::Ipv6Addr>().unwrap().octets();
            128
        } else {
            a[..4].copy_from_slice(&addr.parse::<std::net::Ipv4Addr>().unwrap().octets());
            32
        };
        for i in 0..bits.min(n) as usize {
            m[i / 8] |= 0x80 >> (i % 8);
        }
        Netmap { addr: a, mask: m }
    }

    fn nat(ty: u32, family: u32, max: bool) -> Expr {
        Expr::Nat {
            ty,
            family,
            reg_addr_min: Some(1),
            reg_addr_max: max.then_some(2),
            reg_proto_min: None,
            reg_proto_max: None,
            flags: Some(0x41),
        }
    }

    #[test]
    fn forms() {
        let v4 = net("1.2.3.0", 24);
        for (chain, ty) in [
            ("PREROUTING", NAT_DNAT),
            ("OUTPUT", NAT_DNAT),
            ("POSTROUTING", NAT_SNAT),
            ("INPUT", NAT_SNAT),
        ] {
            assert_eq!(
                run(Family::Ipv4, chain, &v4).unwrap(),
                vec![
                    imm(1, &[1, 2, 3, 0]),
                    imm(2, &[1, 2, 3, 255]),
                    nat(ty, 2, true)
                ],
                "{chain}"
            );
        }
        // A single address: no max register (the kernel takes the min).
        assert_eq!(
            run(Family::Ipv4, "PREROUTING", &net("9.9.9.9", 32)).unwrap(),
            vec![imm(1, &[9, 9, 9, 9]), nat(NAT_DNAT, 2, false)]
        );
        let v6 = net("2001:db8::", 32);
        let mut max = [0xffu8; 16];
        max[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        assert_eq!(
            run(Family::Ipv6, "POSTROUTING", &v6).unwrap(),
            vec![imm(1, &v6.addr), imm(2, &max), nat(NAT_SNAT, 10, true)]
        );
        let e = run(Family::Ipv4, "mynat", &v4).unwrap_err();
        assert!(matches!(e, LowerError::NotNative { .. }));
    }
}

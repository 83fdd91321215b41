//! Lowering of `-j TEE` (xt_TEE.c): without `--oif`, the `dup` expression
//! (nft's `dup to ADDR`), which runs the same `nf_dup_ipv4`/`nf_dup_ipv6`
//! with no output interface (xt_TEE passes 0, nft_dup -1; both leave the
//! route lookup unbound).
//!
//! With `--oif` there is no native form: xt_TEE follows the interface by
//! name (a notifier updates its index as the interface comes and goes, and
//! without it the copy is routed freely), while `dup ... device` takes an
//! interface index fixed when the rule is loaded. nft_compat runs xt_TEE
//! itself (it runs in any table).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::tee::Tee;
use nft::expr::{reg, Dup};
use nft::{Data, Expr};

pub fn lower(t: &Tee, cx: &mut Cx) -> Result<()> {
    if !t.oif.is_empty() {
        return Err(LowerError::not_native(
            format!("-j TEE --oif {}", t.oif),
            "nftables' dup takes an interface index fixed when the rule is \
             loaded, while xt_TEE follows the interface by name",
        ));
    }
    let alen = if cx.is_v6() { 16 } else { 4 };
    cx.push(Expr::Immediate {
        dreg: reg::R1,
        data: Data::Value(t.gw[..alen].to_vec()),
    });
    cx.push(Expr::Dup(Dup {
        sreg_addr: reg::R1,
        sreg_dev: None,
    }));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::{imm, run};
    use ruleset::Family;

    #[test]
    fn forms() {
        let mut gw = [0u8; 16];
        gw[..4].copy_from_slice(&[192, 168, 0, 2]);
        let t = Tee {
            gw,
            oif: String::new(),
        };
        let dup = Expr::Dup(Dup {
            sreg_addr: 1,
            sreg_dev: None,
        });
        assert_eq!(
            run(Family::Ipv4, |cx| lower(&t, cx)).unwrap(),
            vec![imm(1, &[192, 168, 0, 2]), dup.clone()]
        );
        let gw6: std::net::Ipv6Addr = "2001:db8::1".parse().unwrap();
        let t6 = Tee {
            gw: gw6.octets(),
            oif: String::new(),
        };
        assert_eq!(
            run(Family::Ipv6, |cx| lower(&t6, cx)).unwrap(),
            vec![imm(1, &gw6.octets()), dup]
        );
        let oif = Tee {
            gw,
            oif: "eth0".into(),
        };
        let e = run(Family::Ipv4, |cx| lower(&oif, cx)).unwrap_err();
        assert!(matches!(e, LowerError::NotNative { .. }));
    }
}

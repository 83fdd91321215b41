//! Lowering of `-j TRACE`: `meta nftrace set 1` (an immediate 1 in register
//! 1, then a meta set of NFT_META_NFTRACE), which sets skb->nf_trace as
//! xt_TRACE does. Trace events then go out through nfnetlink (nft monitor
//! trace), as they do for every nftables rule.

use crate::lower::{Cx, Result};
use iptables::ext::targets::trace::Trace;
use nft::expr::reg;
use nft::{Data, Expr};

/// NFT_META_NFTRACE in `enum nft_meta_keys`.
const META_NFTRACE: u32 = 12;

pub fn lower(_: &Trace, cx: &mut Cx) -> Result<()> {
    cx.push(Expr::Immediate {
        dreg: reg::R1,
        data: Data::Value(vec![1]),
    });
    cx.push(Expr::MetaSet {
        key: META_NFTRACE,
        sreg: reg::R1,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::{imm, meta_set, run};
    use ruleset::Family;

    #[test]
    fn trace() {
        for fam in [Family::Ipv4, Family::Ipv6] {
            assert_eq!(
                run(fam, |cx| lower(&Trace, cx)).unwrap(),
                vec![imm(1, &[1]), meta_set(12)]
            );
        }
    }
}

//! nft_compat's `match` and `target`: an x_tables extension run from an
//! nf_tables rule, as iptables-nft emits any extension it has no native
//! translation for (linux/netfilter/nf_tables_compat.h).
//!
//! The info bytes are the extension's `struct xt_*_info` in host byte
//! order, `XT_ALIGN`ed (8 bytes on 64-bit hosts): the kernel refuses a
//! length other than the extension's aligned size, and dumps exactly that
//! many bytes back. Extensions that check the rule's layer-4 protocol
//! (e.g. `sctp`, `TCPMSS`) read it from the rule's `NFTA_RULE_COMPAT`
//! ([`crate::rule::RuleCompat`]), not from the rule's expressions.

use super::Expr;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const MATCH: &str = "match";
pub(super) const TARGET: &str = "target";

/// `enum nft_match_attributes`.
pub(crate) const NFTA_MATCH_NAME: u16 = 1;
/// Big-endian u32.
pub(crate) const NFTA_MATCH_REV: u16 = 2;
/// Binary: the extension's info struct.
pub(crate) const NFTA_MATCH_INFO: u16 = 3;

/// `enum nft_target_attributes`.
pub(crate) const NFTA_TARGET_NAME: u16 = 1;
pub(crate) const NFTA_TARGET_REV: u16 = 2;
pub(crate) const NFTA_TARGET_INFO: u16 = 3;

/// Name, revision and info, in the order the kernel dumps them.
pub(super) fn emit(e: &Expr, w: &mut Writer) {
    match e {
        Expr::Match { name, rev, info } => {
            w.put_str(NFTA_MATCH_NAME, name);
            w.put_be32(NFTA_MATCH_REV, *rev);
            w.put(NFTA_MATCH_INFO, info);
        }
        Expr::Target { name, rev, info } => {
            w.put_str(NFTA_TARGET_NAME, name);
            w.put_be32(NFTA_TARGET_REV, *rev);
            w.put(NFTA_TARGET_INFO, info);
        }
        _ => {}
    }
}

/// All three attributes are required, as the kernel requires them.
pub(super) fn parse_match(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Match {
        name: t.string(NFTA_MATCH_NAME)?,
        rev: t.be32(NFTA_MATCH_REV)?,
        info: t.need(NFTA_MATCH_INFO)?.payload.to_vec(),
    })
}

pub(super) fn parse_target(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Target {
        name: t.string(NFTA_TARGET_NAME)?,
        rev: t.be32(NFTA_TARGET_REV)?,
        info: t.need(NFTA_TARGET_INFO)?.payload.to_vec(),
    })
}

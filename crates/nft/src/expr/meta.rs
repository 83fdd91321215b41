//! `meta`: load packet metadata into a register, or set it from one;
//! `enum nft_meta_keys` values used here and the kind's codec.

use super::Expr;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "meta";

/// `enum nft_meta_attributes`.
pub(crate) const NFTA_META_DREG: u16 = 1;
pub(crate) const NFTA_META_KEY: u16 = 2;
pub(crate) const NFTA_META_SREG: u16 = 3;

pub const LEN: u32 = 0;
pub const PROTOCOL: u32 = 1;
pub const MARK: u32 = 3;
pub const IIF: u32 = 4;
pub const OIF: u32 = 5;
pub const IIFNAME: u32 = 6;
pub const OIFNAME: u32 = 7;
pub const SKUID: u32 = 10;
pub const SKGID: u32 = 11;
/// The packet's security mark (`skb->secmark`), a host-order u32.
pub const SECMARK: u32 = 14;
pub const NFPROTO: u32 = 15;
pub const L4PROTO: u32 = 16;
pub const PKTTYPE: u32 = 19;

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    match e {
        Expr::Meta { key, dreg } => {
            w.put_be32(NFTA_META_DREG, *dreg);
            w.put_be32(NFTA_META_KEY, *key);
        }
        Expr::MetaSet { key, sreg } => {
            w.put_be32(NFTA_META_KEY, *key);
            w.put_be32(NFTA_META_SREG, *sreg);
        }
        _ => {}
    }
}

/// A destination register makes it a load; without one it is a set.
pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(match t.opt_be32(NFTA_META_DREG)? {
        Some(dreg) => Expr::Meta {
            key: t.be32(NFTA_META_KEY)?,
            dreg,
        },
        None => Expr::MetaSet {
            key: t.be32(NFTA_META_KEY)?,
            sreg: t.be32(NFTA_META_SREG)?,
        },
    })
}

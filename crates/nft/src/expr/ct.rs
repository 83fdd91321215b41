//! `ct`: load conntrack state into a register, or set it from one;
//! `enum nft_ct_keys` values used here and the kind's codec. Also
//! `notrack`, which has no attributes.

use super::Expr;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "ct";
/// `notrack`: mark the packet untracked. Carries no `NFTA_EXPR_DATA`.
pub(super) const NOTRACK: &str = "notrack";

/// `enum nft_ct_attributes`.
pub(crate) const NFTA_CT_DREG: u16 = 1;
pub(crate) const NFTA_CT_KEY: u16 = 2;
/// u8: `IP_CT_DIR_ORIGINAL` 0, `IP_CT_DIR_REPLY` 1.
pub(crate) const NFTA_CT_DIRECTION: u16 = 3;
pub(crate) const NFTA_CT_SREG: u16 = 4;

pub const STATE: u32 = 0;
pub const DIRECTION: u32 = 1;
pub const STATUS: u32 = 2;
pub const MARK: u32 = 3;
/// The connection's security mark, a host-order u32.
pub const SECMARK: u32 = 4;
pub const EXPIRATION: u32 = 5;
pub const L3PROTOCOL: u32 = 7;
pub const SRC: u32 = 8;
pub const DST: u32 = 9;
pub const PROTOCOL: u32 = 10;
pub const PROTO_SRC: u32 = 11;
pub const PROTO_DST: u32 = 12;
pub const ZONE: u32 = 17;

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    match e {
        Expr::Ct { key, dreg, dir } => {
            w.put_be32(NFTA_CT_DREG, *dreg);
            w.put_be32(NFTA_CT_KEY, *key);
            if let Some(d) = dir {
                w.put_u8(NFTA_CT_DIRECTION, *d);
            }
        }
        Expr::CtSet { key, sreg, dir } => {
            w.put_be32(NFTA_CT_KEY, *key);
            if let Some(d) = dir {
                w.put_u8(NFTA_CT_DIRECTION, *d);
            }
            w.put_be32(NFTA_CT_SREG, *sreg);
        }
        _ => {}
    }
}

/// A destination register makes it a load; without one it is a set.
pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(match t.opt_be32(NFTA_CT_DREG)? {
        Some(dreg) => Expr::Ct {
            key: t.be32(NFTA_CT_KEY)?,
            dreg,
            dir: t.opt_u8(NFTA_CT_DIRECTION)?,
        },
        None => Expr::CtSet {
            key: t.be32(NFTA_CT_KEY)?,
            sreg: t.be32(NFTA_CT_SREG)?,
            dir: t.opt_u8(NFTA_CT_DIRECTION)?,
        },
    })
}

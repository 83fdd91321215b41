//! The address translations: `nat` (snat/dnat to addresses and ports in
//! registers), `masq` (to the outgoing interface's address) and `redir`
//! (to the local host). Three kernel kinds with one job.

use super::Expr;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAT: &str = "nat";
pub(super) const MASQ: &str = "masq";
pub(super) const REDIR: &str = "redir";

/// `enum nft_nat_attributes`.
pub(crate) const NFTA_NAT_TYPE: u16 = 1;
pub(crate) const NFTA_NAT_FAMILY: u16 = 2;
pub(crate) const NFTA_NAT_REG_ADDR_MIN: u16 = 3;
pub(crate) const NFTA_NAT_REG_ADDR_MAX: u16 = 4;
pub(crate) const NFTA_NAT_REG_PROTO_MIN: u16 = 5;
pub(crate) const NFTA_NAT_REG_PROTO_MAX: u16 = 6;
pub(crate) const NFTA_NAT_FLAGS: u16 = 7;

/// `enum nft_masq_attributes`.
pub(crate) const NFTA_MASQ_FLAGS: u16 = 1;
pub(crate) const NFTA_MASQ_REG_PROTO_MIN: u16 = 2;
pub(crate) const NFTA_MASQ_REG_PROTO_MAX: u16 = 3;

/// `enum nft_redir_attributes`.
pub(crate) const NFTA_REDIR_REG_PROTO_MIN: u16 = 1;
pub(crate) const NFTA_REDIR_REG_PROTO_MAX: u16 = 2;
pub(crate) const NFTA_REDIR_FLAGS: u16 = 3;

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    match e {
        Expr::Nat {
            ty,
            family,
            reg_addr_min,
            reg_addr_max,
            reg_proto_min,
            reg_proto_max,
            flags,
        } => {
            w.put_be32(NFTA_NAT_TYPE, *ty);
            w.put_be32(NFTA_NAT_FAMILY, *family);
            w.opt_be32(NFTA_NAT_REG_ADDR_MIN, *reg_addr_min);
            w.opt_be32(NFTA_NAT_REG_ADDR_MAX, *reg_addr_max);
            w.opt_be32(NFTA_NAT_REG_PROTO_MIN, *reg_proto_min);
            w.opt_be32(NFTA_NAT_REG_PROTO_MAX, *reg_proto_max);
            w.opt_be32(NFTA_NAT_FLAGS, *flags);
        }
        Expr::Masq {
            flags,
            reg_proto_min,
            reg_proto_max,
        } => {
            w.opt_be32(NFTA_MASQ_FLAGS, *flags);
            w.opt_be32(NFTA_MASQ_REG_PROTO_MIN, *reg_proto_min);
            w.opt_be32(NFTA_MASQ_REG_PROTO_MAX, *reg_proto_max);
        }
        Expr::Redir {
            reg_proto_min,
            reg_proto_max,
            flags,
        } => {
            w.opt_be32(NFTA_REDIR_REG_PROTO_MIN, *reg_proto_min);
            w.opt_be32(NFTA_REDIR_REG_PROTO_MAX, *reg_proto_max);
            w.opt_be32(NFTA_REDIR_FLAGS, *flags);
        }
        _ => {}
    }
}

pub(super) fn parse_nat(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Nat {
        ty: t.be32(NFTA_NAT_TYPE)?,
        family: t.be32(NFTA_NAT_FAMILY)?,
        reg_addr_min: t.opt_be32(NFTA_NAT_REG_ADDR_MIN)?,
        reg_addr_max: t.opt_be32(NFTA_NAT_REG_ADDR_MAX)?,
        reg_proto_min: t.opt_be32(NFTA_NAT_REG_PROTO_MIN)?,
        reg_proto_max: t.opt_be32(NFTA_NAT_REG_PROTO_MAX)?,
        flags: t.opt_be32(NFTA_NAT_FLAGS)?,
    })
}

pub(super) fn parse_masq(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Masq {
        flags: t.opt_be32(NFTA_MASQ_FLAGS)?,
        reg_proto_min: t.opt_be32(NFTA_MASQ_REG_PROTO_MIN)?,
        reg_proto_max: t.opt_be32(NFTA_MASQ_REG_PROTO_MAX)?,
    })
}

pub(super) fn parse_redir(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Redir {
        reg_proto_min: t.opt_be32(NFTA_REDIR_REG_PROTO_MIN)?,
        reg_proto_max: t.opt_be32(NFTA_REDIR_REG_PROTO_MAX)?,
        flags: t.opt_be32(NFTA_REDIR_FLAGS)?,
    })
}

//! `payload`: load bytes of a packet header into a register, or write a
//! register into the packet (mangle) with checksum fix-up.

use super::Expr;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "payload";

/// `enum nft_payload_attributes`.
pub(crate) const NFTA_PAYLOAD_DREG: u16 = 1;
pub(crate) const NFTA_PAYLOAD_BASE: u16 = 2;
pub(crate) const NFTA_PAYLOAD_OFFSET: u16 = 3;
pub(crate) const NFTA_PAYLOAD_LEN: u16 = 4;
pub(crate) const NFTA_PAYLOAD_SREG: u16 = 5;
pub(crate) const NFTA_PAYLOAD_CSUM_TYPE: u16 = 6;
pub(crate) const NFTA_PAYLOAD_CSUM_OFFSET: u16 = 7;
pub(crate) const NFTA_PAYLOAD_CSUM_FLAGS: u16 = 8;

/// Payload bases (`enum nft_payload_bases`).
pub mod base {
    pub const LL: u32 = 0;
    pub const NETWORK: u32 = 1;
    pub const TRANSPORT: u32 = 2;
}

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    match e {
        Expr::Payload {
            dreg,
            base,
            offset,
            len,
        } => {
            w.put_be32(NFTA_PAYLOAD_DREG, *dreg);
            w.put_be32(NFTA_PAYLOAD_BASE, *base);
            w.put_be32(NFTA_PAYLOAD_OFFSET, *offset);
            w.put_be32(NFTA_PAYLOAD_LEN, *len);
        }
        Expr::PayloadSet {
            sreg,
            base,
            offset,
            len,
            csum_type,
            csum_offset,
            csum_flags,
        } => {
            w.put_be32(NFTA_PAYLOAD_BASE, *base);
            w.put_be32(NFTA_PAYLOAD_OFFSET, *offset);
            w.put_be32(NFTA_PAYLOAD_LEN, *len);
            w.put_be32(NFTA_PAYLOAD_SREG, *sreg);
            w.opt_be32(NFTA_PAYLOAD_CSUM_TYPE, *csum_type);
            w.opt_be32(NFTA_PAYLOAD_CSUM_OFFSET, *csum_offset);
            w.opt_be32(NFTA_PAYLOAD_CSUM_FLAGS, *csum_flags);
        }
        _ => {}
    }
}

/// A destination register makes it a load; without one it is a set.
pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(match t.opt_be32(NFTA_PAYLOAD_DREG)? {
        Some(dreg) => Expr::Payload {
            dreg,
            base: t.be32(NFTA_PAYLOAD_BASE)?,
            offset: t.be32(NFTA_PAYLOAD_OFFSET)?,
            len: t.be32(NFTA_PAYLOAD_LEN)?,
        },
        None => Expr::PayloadSet {
            sreg: t.be32(NFTA_PAYLOAD_SREG)?,
            base: t.be32(NFTA_PAYLOAD_BASE)?,
            offset: t.be32(NFTA_PAYLOAD_OFFSET)?,
            len: t.be32(NFTA_PAYLOAD_LEN)?,
            csum_type: t.opt_be32(NFTA_PAYLOAD_CSUM_TYPE)?,
            csum_offset: t.opt_be32(NFTA_PAYLOAD_CSUM_OFFSET)?,
            csum_flags: t.opt_be32(NFTA_PAYLOAD_CSUM_FLAGS)?,
        },
    })
}

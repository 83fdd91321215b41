//! `lookup`: test a register against a set, or map it through a map.

use super::Expr;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "lookup";

/// `enum nft_lookup_attributes`.
pub(crate) const NFTA_LOOKUP_SET: u16 = 1;
pub(crate) const NFTA_LOOKUP_SREG: u16 = 2;
pub(crate) const NFTA_LOOKUP_DREG: u16 = 3;
pub(crate) const NFTA_LOOKUP_SET_ID: u16 = 4;
pub(crate) const NFTA_LOOKUP_FLAGS: u16 = 5;

/// `NFT_LOOKUP_F_INV`: match when the key is NOT in the set.
pub const LOOKUP_F_INV: u32 = 1;

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    if let Expr::Lookup {
        set,
        set_id,
        sreg,
        dreg,
        flags,
    } = e
    {
        w.put_str(NFTA_LOOKUP_SET, set);
        w.put_be32(NFTA_LOOKUP_SREG, *sreg);
        w.opt_be32(NFTA_LOOKUP_DREG, *dreg);
        w.opt_be32(NFTA_LOOKUP_SET_ID, *set_id);
        w.opt_be32(NFTA_LOOKUP_FLAGS, *flags);
    }
}

pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Lookup {
        set: t.string(NFTA_LOOKUP_SET)?,
        sreg: t.be32(NFTA_LOOKUP_SREG)?,
        dreg: t.opt_be32(NFTA_LOOKUP_DREG)?,
        set_id: t.opt_be32(NFTA_LOOKUP_SET_ID)?,
        flags: t.opt_be32(NFTA_LOOKUP_FLAGS)?,
    })
}

//! `numgen`: a number (incremental or random) modulo `modulus` into a
//! register.

use super::Expr;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "numgen";

/// `enum nft_ng_attributes`.
pub(crate) const NFTA_NG_DREG: u16 = 1;
pub(crate) const NFTA_NG_MODULUS: u16 = 2;
/// `enum nft_ng_types`: `NFT_NG_INCREMENTAL` 0, `NFT_NG_RANDOM` 1.
pub(crate) const NFTA_NG_TYPE: u16 = 3;
pub(crate) const NFTA_NG_OFFSET: u16 = 4;

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    if let Expr::Numgen {
        dreg,
        modulus,
        ty,
        offset,
    } = e
    {
        w.put_be32(NFTA_NG_DREG, *dreg);
        w.put_be32(NFTA_NG_MODULUS, *modulus);
        w.put_be32(NFTA_NG_TYPE, *ty);
        w.opt_be32(NFTA_NG_OFFSET, *offset);
    }
}

pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Numgen {
        dreg: t.be32(NFTA_NG_DREG)?,
        modulus: t.be32(NFTA_NG_MODULUS)?,
        ty: t.be32(NFTA_NG_TYPE)?,
        offset: t.opt_be32(NFTA_NG_OFFSET)?,
    })
}

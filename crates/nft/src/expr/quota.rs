//! `quota`: match until (or once) a byte budget is used up.

use super::Expr;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "quota";

/// `enum nft_quota_attributes` (`NFTA_QUOTA_PAD` 3 only aligns u64s).
pub(crate) const NFTA_QUOTA_BYTES: u16 = 1;
/// `NFT_QUOTA_F_INV` 1 (match once over), `NFT_QUOTA_F_DEPLETED` 2.
pub(crate) const NFTA_QUOTA_FLAGS: u16 = 2;
pub(crate) const NFTA_QUOTA_CONSUMED: u16 = 4;

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    if let Expr::Quota {
        bytes,
        flags,
        consumed,
    } = e
    {
        w.put_be64(NFTA_QUOTA_BYTES, *bytes);
        w.put_be32(NFTA_QUOTA_FLAGS, *flags);
        w.opt_be64(NFTA_QUOTA_CONSUMED, *consumed);
    }
}

pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Quota {
        bytes: t.be64(NFTA_QUOTA_BYTES)?,
        flags: t.opt_be32(NFTA_QUOTA_FLAGS)?.unwrap_or(0),
        consumed: t.opt_be64(NFTA_QUOTA_CONSUMED)?,
    })
}

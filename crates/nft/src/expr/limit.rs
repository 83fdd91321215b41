//! `limit`: token-bucket rate limit in packets or bytes.

use super::Expr;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "limit";

/// `enum nft_limit_attributes` (`NFTA_LIMIT_PAD` 6 only aligns u64s).
pub(crate) const NFTA_LIMIT_RATE: u16 = 1;
/// Seconds.
pub(crate) const NFTA_LIMIT_UNIT: u16 = 2;
pub(crate) const NFTA_LIMIT_BURST: u16 = 3;
/// `enum nft_limit_type`: `NFT_LIMIT_PKTS` 0, `NFT_LIMIT_PKT_BYTES` 1.
pub(crate) const NFTA_LIMIT_TYPE: u16 = 4;
pub(crate) const NFTA_LIMIT_FLAGS: u16 = 5;

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    if let Expr::Limit {
        rate,
        unit,
        burst,
        ty,
        flags,
    } = e
    {
        w.put_be64(NFTA_LIMIT_RATE, *rate);
        w.put_be64(NFTA_LIMIT_UNIT, *unit);
        w.put_be32(NFTA_LIMIT_BURST, *burst);
        w.put_be32(NFTA_LIMIT_TYPE, *ty);
        w.put_be32(NFTA_LIMIT_FLAGS, *flags);
    }
}

/// Missing burst, type and flags are 0, as the kernel takes them.
pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Limit {
        rate: t.be64(NFTA_LIMIT_RATE)?,
        unit: t.be64(NFTA_LIMIT_UNIT)?,
        burst: t.opt_be32(NFTA_LIMIT_BURST)?.unwrap_or(0),
        ty: t.opt_be32(NFTA_LIMIT_TYPE)?.unwrap_or(0),
        flags: t.opt_be32(NFTA_LIMIT_FLAGS)?.unwrap_or(0),
    })
}

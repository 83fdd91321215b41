//! `log`: log the packet to the kernel log or an nflog group.

use super::Expr;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "log";

/// `enum nft_log_attributes`.
pub(crate) const NFTA_LOG_GROUP: u16 = 1;
pub(crate) const NFTA_LOG_PREFIX: u16 = 2;
pub(crate) const NFTA_LOG_SNAPLEN: u16 = 3;
pub(crate) const NFTA_LOG_QTHRESHOLD: u16 = 4;
pub(crate) const NFTA_LOG_LEVEL: u16 = 5;
pub(crate) const NFTA_LOG_FLAGS: u16 = 6;

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    if let Expr::Log {
        group,
        prefix,
        snaplen,
        qthreshold,
        level,
        flags,
    } = e
    {
        if let Some(g) = group {
            w.put_be16(NFTA_LOG_GROUP, *g);
        }
        w.opt_str(NFTA_LOG_PREFIX, prefix.as_deref());
        w.opt_be32(NFTA_LOG_SNAPLEN, *snaplen);
        if let Some(q) = qthreshold {
            w.put_be16(NFTA_LOG_QTHRESHOLD, *q);
        }
        w.opt_be32(NFTA_LOG_LEVEL, *level);
        w.opt_be32(NFTA_LOG_FLAGS, *flags);
    }
}

pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Log {
        group: t.opt_be16(NFTA_LOG_GROUP)?,
        prefix: t.opt_string(NFTA_LOG_PREFIX)?,
        snaplen: t.opt_be32(NFTA_LOG_SNAPLEN)?,
        qthreshold: t.opt_be16(NFTA_LOG_QTHRESHOLD)?,
        level: t.opt_be32(NFTA_LOG_LEVEL)?,
        flags: t.opt_be32(NFTA_LOG_FLAGS)?,
    })
}

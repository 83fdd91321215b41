//! `reject`: drop the packet and answer with an ICMP error or TCP reset.

use super::Expr;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "reject";

/// `enum nft_reject_attributes`.
pub(crate) const NFTA_REJECT_TYPE: u16 = 1;
/// u8.
pub(crate) const NFTA_REJECT_ICMP_CODE: u16 = 2;

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    if let Expr::Reject { ty, code } = e {
        w.put_be32(NFTA_REJECT_TYPE, *ty);
        if let Some(c) = code {
            w.put_u8(NFTA_REJECT_ICMP_CODE, *c);
        }
    }
}

pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Reject {
        ty: t.be32(NFTA_REJECT_TYPE)?,
        code: t.opt_u8(NFTA_REJECT_ICMP_CODE)?,
    })
}

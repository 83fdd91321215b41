//! `range`: test a register against an inclusive range of values.

use super::Expr;
use crate::data::Data;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "range";

/// `enum nft_range_attributes`.
pub(crate) const NFTA_RANGE_SREG: u16 = 1;
/// `enum nft_range_ops`: `NFT_RANGE_EQ` 0, `NFT_RANGE_NEQ` 1.
pub(crate) const NFTA_RANGE_OP: u16 = 2;
pub(crate) const NFTA_RANGE_FROM_DATA: u16 = 3;
pub(crate) const NFTA_RANGE_TO_DATA: u16 = 4;

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    if let Expr::Range {
        sreg,
        neq,
        from,
        to,
    } = e
    {
        w.put_be32(NFTA_RANGE_SREG, *sreg);
        w.put_be32(NFTA_RANGE_OP, *neq as u32);
        Data::emit_value(w, NFTA_RANGE_FROM_DATA, from);
        Data::emit_value(w, NFTA_RANGE_TO_DATA, to);
    }
}

pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Range {
        sreg: t.be32(NFTA_RANGE_SREG)?,
        neq: t.be32(NFTA_RANGE_OP)? != 0,
        from: Data::parse_value(&t.need(NFTA_RANGE_FROM_DATA)?)?,
        to: Data::parse_value(&t.need(NFTA_RANGE_TO_DATA)?)?,
    })
}

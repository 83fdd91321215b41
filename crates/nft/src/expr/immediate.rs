//! `immediate`: load a constant value or a verdict into a register.

use super::Expr;
use crate::data::Data;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "immediate";

/// `enum nft_immediate_attributes`.
pub(crate) const NFTA_IMMEDIATE_DREG: u16 = 1;
/// Nest of `NFTA_DATA_VALUE` or `NFTA_DATA_VERDICT`.
pub(crate) const NFTA_IMMEDIATE_DATA: u16 = 2;

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    if let Expr::Immediate { dreg, data } = e {
        w.put_be32(NFTA_IMMEDIATE_DREG, *dreg);
        data.emit(w, NFTA_IMMEDIATE_DATA);
    }
}

pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Immediate {
        dreg: t.be32(NFTA_IMMEDIATE_DREG)?,
        data: Data::parse(&t.need(NFTA_IMMEDIATE_DATA)?)?,
    })
}

//! `cmp`: compare a register against a constant value.

use super::Expr;
use crate::data::Data;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "cmp";

/// `enum nft_cmp_attributes`.
pub(crate) const NFTA_CMP_SREG: u16 = 1;
pub(crate) const NFTA_CMP_OP: u16 = 2;
/// Nest holding `NFTA_DATA_VALUE`.
pub(crate) const NFTA_CMP_DATA: u16 = 3;

/// Comparison operator of `cmp` (`enum nft_cmp_ops`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq = 0,
    Neq = 1,
    Lt = 2,
    Lte = 3,
    Gt = 4,
    Gte = 5,
}

impl CmpOp {
    fn from_u32(v: u32) -> Result<CmpOp, Error> {
        Ok(match v {
            0 => CmpOp::Eq,
            1 => CmpOp::Neq,
            2 => CmpOp::Lt,
            3 => CmpOp::Lte,
            4 => CmpOp::Gt,
            5 => CmpOp::Gte,
            _ => return Err(Error::BadAttr(NFTA_CMP_OP)),
        })
    }
}

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    if let Expr::Cmp { sreg, op, data } = e {
        w.put_be32(NFTA_CMP_SREG, *sreg);
        w.put_be32(NFTA_CMP_OP, *op as u32);
        Data::emit_value(w, NFTA_CMP_DATA, data);
    }
}

pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Cmp {
        sreg: t.be32(NFTA_CMP_SREG)?,
        op: CmpOp::from_u32(t.be32(NFTA_CMP_OP)?)?,
        data: Data::parse_value(&t.need(NFTA_CMP_DATA)?)?,
    })
}

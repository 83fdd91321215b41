//! `bitwise`: mask-and-xor of a register ([`Expr::Bitwise`]) or a shift
//! of its 32-bit words ([`Expr::Shift`]), told apart by `NFTA_BITWISE_OP`.

use super::Expr;
use crate::data::Data;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "bitwise";

/// `enum nft_bitwise_attributes`.
pub(crate) const NFTA_BITWISE_SREG: u16 = 1;
pub(crate) const NFTA_BITWISE_DREG: u16 = 2;
pub(crate) const NFTA_BITWISE_LEN: u16 = 3;
pub(crate) const NFTA_BITWISE_MASK: u16 = 4;
pub(crate) const NFTA_BITWISE_XOR: u16 = 5;
pub(crate) const NFTA_BITWISE_OP: u16 = 6;
pub(crate) const NFTA_BITWISE_DATA: u16 = 7;

/// `enum nft_bitwise_ops` (`MASK_XOR` was `NFT_BITWISE_BOOL` before 6.13).
/// Later ops (boolean and/or/xor of two registers) parse as
/// [`Expr::Other`].
pub(crate) const NFT_BITWISE_MASK_XOR: u32 = 0;
pub(crate) const NFT_BITWISE_LSHIFT: u32 = 1;
pub(crate) const NFT_BITWISE_RSHIFT: u32 = 2;

/// `bitwise` shift (`NFT_BITWISE_LSHIFT`/`RSHIFT`): each host-order 32-bit
/// word of `len` bytes of `sreg` shifted by `amount` (< 32) bits into `dreg`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shift {
    pub sreg: u32,
    pub dreg: u32,
    pub len: u32,
    /// Right shift; left otherwise.
    pub right: bool,
    pub amount: u32,
}

impl Shift {
    pub(super) fn emit(&self, w: &mut Writer) {
        w.put_be32(NFTA_BITWISE_SREG, self.sreg);
        w.put_be32(NFTA_BITWISE_DREG, self.dreg);
        w.put_be32(NFTA_BITWISE_LEN, self.len);
        let op = if self.right {
            NFT_BITWISE_RSHIFT
        } else {
            NFT_BITWISE_LSHIFT
        };
        w.put_be32(NFTA_BITWISE_OP, op);
        // The shift amount is a host-order u32 value.
        Data::emit_value(w, NFTA_BITWISE_DATA, &self.amount.to_ne_bytes());
    }

    fn parse(t: &Tb, op: u32) -> Result<Self, Error> {
        let v = Data::parse_value(&t.need(NFTA_BITWISE_DATA)?)?;
        let amount: [u8; 4] = v
            .as_slice()
            .try_into()
            .map_err(|_| Error::BadAttr(NFTA_BITWISE_DATA))?;
        Ok(Shift {
            sreg: t.be32(NFTA_BITWISE_SREG)?,
            dreg: t.be32(NFTA_BITWISE_DREG)?,
            len: t.be32(NFTA_BITWISE_LEN)?,
            right: op == NFT_BITWISE_RSHIFT,
            amount: u32::from_ne_bytes(amount),
        })
    }
}

/// Mask/xor; shifts are [`Shift::emit`].
pub(super) fn emit(e: &Expr, w: &mut Writer) {
    if let Expr::Bitwise {
        sreg,
        dreg,
        len,
        mask,
        xor,
    } = e
    {
        w.put_be32(NFTA_BITWISE_SREG, *sreg);
        w.put_be32(NFTA_BITWISE_DREG, *dreg);
        w.put_be32(NFTA_BITWISE_LEN, *len);
        Data::emit_value(w, NFTA_BITWISE_MASK, mask);
        Data::emit_value(w, NFTA_BITWISE_XOR, xor);
        w.put_be32(NFTA_BITWISE_OP, NFT_BITWISE_MASK_XOR);
    }
}

/// Mask/xor (also when `OP` is absent, as kernels before shifts dump it)
/// or a shift; `None` for any other op.
pub(super) fn parse(t: &Tb) -> Result<Option<Expr>, Error> {
    Ok(match t.opt_be32(NFTA_BITWISE_OP)? {
        None | Some(NFT_BITWISE_MASK_XOR) => Some(Expr::Bitwise {
            sreg: t.be32(NFTA_BITWISE_SREG)?,
            dreg: t.be32(NFTA_BITWISE_DREG)?,
            len: t.be32(NFTA_BITWISE_LEN)?,
            mask: Data::parse_value(&t.need(NFTA_BITWISE_MASK)?)?,
            xor: Data::parse_value(&t.need(NFTA_BITWISE_XOR)?)?,
        }),
        Some(op @ (NFT_BITWISE_LSHIFT | NFT_BITWISE_RSHIFT)) => {
            Some(Expr::Shift(Shift::parse(t, op)?))
        }
        Some(_) => None,
    })
}

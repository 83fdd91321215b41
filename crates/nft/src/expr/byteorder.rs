//! `byteorder`: convert a register between host and network byte order;
//! `enum nft_byteorder_ops` values and the kind's codec.

use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "byteorder";

/// `enum nft_byteorder_attributes`.
pub(crate) const NFTA_BYTEORDER_SREG: u16 = 1;
pub(crate) const NFTA_BYTEORDER_DREG: u16 = 2;
pub(crate) const NFTA_BYTEORDER_OP: u16 = 3;
pub(crate) const NFTA_BYTEORDER_LEN: u16 = 4;
pub(crate) const NFTA_BYTEORDER_SIZE: u16 = 5;

/// `enum nft_byteorder_ops`.
pub const NTOH: u32 = 0;
pub const HTON: u32 = 1;

/// `byteorder`: convert `len` bytes of `sreg`, as units of `size` (2 or 4)
/// bytes, between host and network order (`op`: [`NTOH`] or [`HTON`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Byteorder {
    pub sreg: u32,
    pub dreg: u32,
    pub op: u32,
    pub len: u32,
    pub size: u32,
}

impl Byteorder {
    pub(super) fn emit(&self, w: &mut Writer) {
        w.put_be32(NFTA_BYTEORDER_SREG, self.sreg);
        w.put_be32(NFTA_BYTEORDER_DREG, self.dreg);
        w.put_be32(NFTA_BYTEORDER_OP, self.op);
        w.put_be32(NFTA_BYTEORDER_LEN, self.len);
        w.put_be32(NFTA_BYTEORDER_SIZE, self.size);
    }

    pub(super) fn parse(t: &Tb) -> Result<Self, Error> {
        Ok(Byteorder {
            sreg: t.be32(NFTA_BYTEORDER_SREG)?,
            dreg: t.be32(NFTA_BYTEORDER_DREG)?,
            op: t.be32(NFTA_BYTEORDER_OP)?,
            len: t.be32(NFTA_BYTEORDER_LEN)?,
            size: t.be32(NFTA_BYTEORDER_SIZE)?,
        })
    }
}

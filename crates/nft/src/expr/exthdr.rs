//! `exthdr`: load (or test the presence of) a field of an IPv6 extension
//! header, IPv4 option, TCP option or SCTP chunk, write a TCP option field,
//! or reset (strip) a TCP option; `enum nft_exthdr_op` and
//! `NFT_EXTHDR_F_*` values and the kind's codec.

use super::Expr;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "exthdr";

/// `enum nft_exthdr_attributes`.
pub(crate) const NFTA_EXTHDR_DREG: u16 = 1;
/// u8: header / option / chunk type.
pub(crate) const NFTA_EXTHDR_TYPE: u16 = 2;
pub(crate) const NFTA_EXTHDR_OFFSET: u16 = 3;
pub(crate) const NFTA_EXTHDR_LEN: u16 = 4;
pub(crate) const NFTA_EXTHDR_FLAGS: u16 = 5;
pub(crate) const NFTA_EXTHDR_OP: u16 = 6;
pub(crate) const NFTA_EXTHDR_SREG: u16 = 7;

pub const OP_IPV6: u32 = 0;
pub const OP_TCPOPT: u32 = 1;
pub const OP_IPV4: u32 = 2;
pub const OP_SCTP: u32 = 3;
/// Load 1 into the register if the header/option exists, else 0
/// (instead of stopping the rule when it is missing).
pub const F_PRESENT: u32 = 1;

/// `exthdr` load: `len` bytes at `offset` of extension header / option /
/// chunk `ty` (in the space `op`, see `OP_*`) into `dreg`; with
/// [`F_PRESENT`] only whether it exists (a 1-byte boolean).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Exthdr {
    pub dreg: u32,
    pub op: u32,
    pub ty: u8,
    pub offset: u32,
    pub len: u32,
    pub flags: u32,
}

impl Exthdr {
    pub(super) fn emit(&self, w: &mut Writer) {
        w.put_be32(NFTA_EXTHDR_DREG, self.dreg);
        w.put_u8(NFTA_EXTHDR_TYPE, self.ty);
        w.put_be32(NFTA_EXTHDR_OFFSET, self.offset);
        w.put_be32(NFTA_EXTHDR_LEN, self.len);
        w.put_be32(NFTA_EXTHDR_FLAGS, self.flags);
        w.put_be32(NFTA_EXTHDR_OP, self.op);
    }

    fn parse(t: &Tb, dreg: u32) -> Result<Self, Error> {
        Ok(Exthdr {
            dreg,
            ty: t.need(NFTA_EXTHDR_TYPE)?.u8()?,
            offset: t.be32(NFTA_EXTHDR_OFFSET)?,
            len: t.be32(NFTA_EXTHDR_LEN)?,
            flags: t.opt_be32(NFTA_EXTHDR_FLAGS)?.unwrap_or(0),
            op: t.opt_be32(NFTA_EXTHDR_OP)?.unwrap_or(OP_IPV6),
        })
    }
}

/// `exthdr` write: `sreg` into `len` bytes at `offset` of option `ty` (the
/// kernel supports TCP options), fixing the checksum. Carries no flags:
/// the kernel refuses `NFTA_EXTHDR_FLAGS` on a write (it lists them as 0).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExthdrSet {
    pub sreg: u32,
    pub op: u32,
    pub ty: u8,
    pub offset: u32,
    pub len: u32,
}

impl ExthdrSet {
    pub(super) fn emit(&self, w: &mut Writer) {
        w.put_u8(NFTA_EXTHDR_TYPE, self.ty);
        w.put_be32(NFTA_EXTHDR_OFFSET, self.offset);
        w.put_be32(NFTA_EXTHDR_LEN, self.len);
        w.put_be32(NFTA_EXTHDR_OP, self.op);
        w.put_be32(NFTA_EXTHDR_SREG, self.sreg);
    }

    fn parse(t: &Tb) -> Result<Self, Error> {
        Ok(ExthdrSet {
            sreg: t.be32(NFTA_EXTHDR_SREG)?,
            ty: t.need(NFTA_EXTHDR_TYPE)?.u8()?,
            offset: t.be32(NFTA_EXTHDR_OFFSET)?,
            len: t.be32(NFTA_EXTHDR_LEN)?,
            op: t.opt_be32(NFTA_EXTHDR_OP)?.unwrap_or(OP_IPV6),
        })
    }
}

/// `exthdr` reset (`tcp option NAME reset`): overwrite the first option
/// of type `ty` in the space `op` (the kernel supports TCP options only)
/// with NOPs, fixing the checksum; nothing when the packet has none. It
/// has neither register; the kernel dumps offset, length and flags as 0,
/// which carry nothing here.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExthdrStrip {
    pub op: u32,
    pub ty: u8,
}

impl ExthdrStrip {
    pub(super) fn emit(&self, w: &mut Writer) {
        w.put_u8(NFTA_EXTHDR_TYPE, self.ty);
        w.put_be32(NFTA_EXTHDR_OP, self.op);
    }

    fn parse(t: &Tb) -> Result<Self, Error> {
        Ok(ExthdrStrip {
            ty: t.need(NFTA_EXTHDR_TYPE)?.u8()?,
            op: t.opt_be32(NFTA_EXTHDR_OP)?.unwrap_or(OP_IPV6),
        })
    }
}

/// A destination register makes it a load, a source register a write;
/// with neither it is a reset (the kernel's selection of the same ops).
pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(match t.opt_be32(NFTA_EXTHDR_DREG)? {
        Some(dreg) => Expr::Exthdr(Exthdr::parse(t, dreg)?),
        None if t.get(NFTA_EXTHDR_SREG).is_some() => Expr::ExthdrSet(ExthdrSet::parse(t)?),
        None => Expr::ExthdrStrip(ExthdrStrip::parse(t)?),
    })
}

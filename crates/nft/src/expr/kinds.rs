//! Expression kinds kept out of `expr.rs` for size: `byteorder`, bitwise
//! shifts, `exthdr` (load and write), `fib` and `rt`. Each is a struct with
//! the attributes of its `NFTA_EXPR_DATA` nest (numbers per
//! linux/netfilter/nf_tables.h); [`super::Expr`] wraps them.

use crate::data::Data;
use crate::netlink::{Tb, Writer};
use crate::Error;

/// `enum nft_byteorder_ops`.
pub mod byteorder {
    pub const NTOH: u32 = 0;
    pub const HTON: u32 = 1;
}

/// `enum nft_exthdr_op` and `NFT_EXTHDR_F_*`.
pub mod exthdr {
    pub const OP_IPV6: u32 = 0;
    pub const OP_TCPOPT: u32 = 1;
    pub const OP_IPV4: u32 = 2;
    pub const OP_SCTP: u32 = 3;
    /// Load 1 into the register if the header/option exists, else 0
    /// (instead of stopping the rule when it is missing).
    pub const F_PRESENT: u32 = 1;
}

/// `NFTA_FIB_F_*` lookup flags and `enum nft_fib_result`.
pub mod fib {
    pub const F_SADDR: u32 = 1 << 0;
    pub const F_DADDR: u32 = 1 << 1;
    pub const F_MARK: u32 = 1 << 2;
    pub const F_IIF: u32 = 1 << 3;
    pub const F_OIF: u32 = 1 << 4;
    pub const F_PRESENT: u32 = 1 << 5;
    pub const RESULT_OIF: u32 = 1;
    pub const RESULT_OIFNAME: u32 = 2;
    pub const RESULT_ADDRTYPE: u32 = 3;
}

/// `enum nft_rt_keys`.
pub mod rt {
    pub const CLASSID: u32 = 0;
    pub const NEXTHOP4: u32 = 1;
    pub const NEXTHOP6: u32 = 2;
    pub const TCPMSS: u32 = 3;
    pub const XFRM: u32 = 4;
}

/// `byteorder`: convert `len` bytes of `sreg`, as units of `size` (2 or 4)
/// bytes, between host and network order (`op`, see [`byteorder`]).
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
        w.put_be32(1, self.sreg);
        w.put_be32(2, self.dreg);
        w.put_be32(3, self.op);
        w.put_be32(4, self.len);
        w.put_be32(5, self.size);
    }
    pub(super) fn parse(t: &Tb) -> Result<Self, Error> {
        Ok(Byteorder {
            sreg: t.be32(1)?,
            dreg: t.be32(2)?,
            op: t.be32(3)?,
            len: t.be32(4)?,
            size: t.be32(5)?,
        })
    }
}

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
        w.put_be32(1, self.sreg);
        w.put_be32(2, self.dreg);
        w.put_be32(3, self.len);
        w.put_be32(6, if self.right { 2 } else { 1 });
        // NFTA_BITWISE_DATA: the shift amount as a host-order u32 value.
        Data::emit_value(w, 7, &self.amount.to_ne_bytes());
    }
    /// `op` is the already-read `NFTA_BITWISE_OP` (1 or 2).
    pub(super) fn parse(t: &Tb, op: u32) -> Result<Self, Error> {
        let v = Data::parse_value(&t.need(7)?)?;
        let amount: [u8; 4] = v.as_slice().try_into().map_err(|_| Error::BadAttr(7))?;
        Ok(Shift {
            sreg: t.be32(1)?,
            dreg: t.be32(2)?,
            len: t.be32(3)?,
            right: op == 2,
            amount: u32::from_ne_bytes(amount),
        })
    }
}

/// `exthdr` load: `len` bytes at `offset` of extension header / option /
/// chunk `ty` (in the space `op`, see [`exthdr`]) into `dreg`; with
/// `F_PRESENT` only whether it exists (a 1-byte boolean).
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
        w.put_be32(1, self.dreg);
        w.put_u8(2, self.ty);
        w.put_be32(3, self.offset);
        w.put_be32(4, self.len);
        w.put_be32(5, self.flags);
        w.put_be32(6, self.op);
    }
    pub(super) fn parse(t: &Tb, dreg: u32) -> Result<Self, Error> {
        Ok(Exthdr {
            dreg,
            ty: t.need(2)?.u8()?,
            offset: t.be32(3)?,
            len: t.be32(4)?,
            flags: t.opt_be32(5)?.unwrap_or(0),
            op: t.opt_be32(6)?.unwrap_or(exthdr::OP_IPV6),
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
        w.put_u8(2, self.ty);
        w.put_be32(3, self.offset);
        w.put_be32(4, self.len);
        w.put_be32(6, self.op);
        w.put_be32(7, self.sreg);
    }
    pub(super) fn parse(t: &Tb) -> Result<Self, Error> {
        Ok(ExthdrSet {
            sreg: t.be32(7)?,
            ty: t.need(2)?.u8()?,
            offset: t.be32(3)?,
            len: t.be32(4)?,
            op: t.opt_be32(6)?.unwrap_or(exthdr::OP_IPV6),
        })
    }
}

/// `fib`: a route lookup keyed by `flags` (see [`fib`]), its `result`
/// (host-order u32 ifindex or route type, or an interface name) in `dreg`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fib {
    pub dreg: u32,
    pub result: u32,
    pub flags: u32,
}

impl Fib {
    pub(super) fn emit(&self, w: &mut Writer) {
        w.put_be32(1, self.dreg);
        w.put_be32(2, self.result);
        w.put_be32(3, self.flags);
    }
    pub(super) fn parse(t: &Tb) -> Result<Self, Error> {
        Ok(Fib {
            dreg: t.be32(1)?,
            result: t.be32(2)?,
            flags: t.be32(3)?,
        })
    }
}

/// `rt`: a property `key` (see [`rt`]) of the packet's route into `dreg`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rt {
    pub dreg: u32,
    pub key: u32,
}

impl Rt {
    pub(super) fn emit(&self, w: &mut Writer) {
        w.put_be32(1, self.dreg);
        w.put_be32(2, self.key);
    }
    pub(super) fn parse(t: &Tb) -> Result<Self, Error> {
        Ok(Rt {
            dreg: t.be32(1)?,
            key: t.be32(2)?,
        })
    }
}

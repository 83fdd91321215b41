//! `dup`: send a copy of the packet to a gateway address (optionally out of
//! one interface), as the xtables TEE target does; the original packet
//! continues. The kernel's name and attributes of the kind, and its codec.

use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "dup";

/// `enum nft_dup_attributes`.
pub(crate) const NFTA_DUP_SREG_ADDR: u16 = 1;
pub(crate) const NFTA_DUP_SREG_DEV: u16 = 2;

/// `dup to <address in sreg_addr> [device <ifindex in sreg_dev>]`: the
/// address register holds 4 (IPv4) or 16 (IPv6) bytes, the device register
/// a host-order interface index. Without a device the copy is routed by its
/// destination alone.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dup {
    pub sreg_addr: u32,
    pub sreg_dev: Option<u32>,
}

impl Dup {
    pub(super) fn emit(&self, w: &mut Writer) {
        w.put_be32(NFTA_DUP_SREG_ADDR, self.sreg_addr);
        w.opt_be32(NFTA_DUP_SREG_DEV, self.sreg_dev);
    }

    pub(super) fn parse(t: &Tb) -> Result<Self, Error> {
        Ok(Dup {
            sreg_addr: t.be32(NFTA_DUP_SREG_ADDR)?,
            sreg_dev: t.opt_be32(NFTA_DUP_SREG_DEV)?,
        })
    }
}

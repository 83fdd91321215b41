//! `fib`: a route lookup for the packet; `NFTA_FIB_F_*` flags and
//! `enum nft_fib_result` values and the kind's codec.

use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "fib";

/// `enum nft_fib_attributes`.
pub(crate) const NFTA_FIB_DREG: u16 = 1;
pub(crate) const NFTA_FIB_RESULT: u16 = 2;
pub(crate) const NFTA_FIB_FLAGS: u16 = 3;

pub const F_SADDR: u32 = 1 << 0;
pub const F_DADDR: u32 = 1 << 1;
pub const F_MARK: u32 = 1 << 2;
pub const F_IIF: u32 = 1 << 3;
pub const F_OIF: u32 = 1 << 4;
pub const F_PRESENT: u32 = 1 << 5;
pub const RESULT_OIF: u32 = 1;
pub const RESULT_OIFNAME: u32 = 2;
pub const RESULT_ADDRTYPE: u32 = 3;

/// `fib`: a route lookup keyed by `flags` (`F_*`), its `result`
/// (host-order u32 ifindex or route type, or an interface name) in `dreg`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fib {
    pub dreg: u32,
    pub result: u32,
    pub flags: u32,
}

impl Fib {
    pub(super) fn emit(&self, w: &mut Writer) {
        w.put_be32(NFTA_FIB_DREG, self.dreg);
        w.put_be32(NFTA_FIB_RESULT, self.result);
        w.put_be32(NFTA_FIB_FLAGS, self.flags);
    }

    pub(super) fn parse(t: &Tb) -> Result<Self, Error> {
        Ok(Fib {
            dreg: t.be32(NFTA_FIB_DREG)?,
            result: t.be32(NFTA_FIB_RESULT)?,
            flags: t.be32(NFTA_FIB_FLAGS)?,
        })
    }
}

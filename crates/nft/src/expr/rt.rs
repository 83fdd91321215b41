//! `rt`: a property of the packet's route; `enum nft_rt_keys` values and
//! the kind's codec.

use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "rt";

/// `enum nft_rt_attributes`.
pub(crate) const NFTA_RT_DREG: u16 = 1;
pub(crate) const NFTA_RT_KEY: u16 = 2;

pub const CLASSID: u32 = 0;
pub const NEXTHOP4: u32 = 1;
pub const NEXTHOP6: u32 = 2;
pub const TCPMSS: u32 = 3;
pub const XFRM: u32 = 4;

/// `rt`: a property `key` (see the constants above) of the packet's route
/// into `dreg`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rt {
    pub dreg: u32,
    pub key: u32,
}

impl Rt {
    pub(super) fn emit(&self, w: &mut Writer) {
        w.put_be32(NFTA_RT_DREG, self.dreg);
        w.put_be32(NFTA_RT_KEY, self.key);
    }

    pub(super) fn parse(t: &Tb) -> Result<Self, Error> {
        Ok(Rt {
            dreg: t.be32(NFTA_RT_DREG)?,
            key: t.be32(NFTA_RT_KEY)?,
        })
    }
}

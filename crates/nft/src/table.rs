//! Tables (`NFT_MSG_NEWTABLE`/`DELTABLE`/`GETTABLE`, `NFTA_TABLE_*`).

use crate::netlink::{Attrs, Tb, Writer};
use crate::{msg, Error, Family, Object};

const NAME: u16 = 1;
const FLAGS: u16 = 2;
const USE: u16 = 3;
const HANDLE: u16 = 4;
const USERDATA: u16 = 6;

/// `NFT_TABLE_F_DORMANT`.
pub const F_DORMANT: u32 = 1;
/// `NFT_TABLE_F_OWNER`: the table dies with the socket that created it.
pub const F_OWNER: u32 = 2;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    pub family: Family,
    pub name: String,
    /// `NFT_TABLE_F_*` (u32, big-endian on the wire).
    pub flags: Option<u32>,
    /// Kernel-assigned handle (read from dumps/echo; identifies on delete).
    pub handle: Option<u64>,
    /// Opaque user data (at most 256 bytes for the kernel).
    pub userdata: Option<Vec<u8>>,
    /// Number of chains/sets (read-only).
    pub use_count: Option<u32>,
}

impl Table {
    pub fn new(family: Family, name: &str) -> Table {
        Table {
            family,
            name: name.to_string(),
            ..Default::default()
        }
    }
}

impl Object for Table {
    const NEW: u16 = msg::NEWTABLE;
    const DEL: u16 = msg::DELTABLE;
    const GET: u16 = msg::GETTABLE;

    fn family(&self) -> Family {
        self.family
    }

    fn emit(&self, w: &mut Writer) {
        if !self.name.is_empty() {
            w.put_str(NAME, &self.name);
        }
        w.opt_be32(FLAGS, self.flags);
        w.opt_be64(HANDLE, self.handle);
        w.opt_bytes(USERDATA, self.userdata.as_deref());
    }

    fn parse(family: Family, attrs: Attrs) -> Result<Table, Error> {
        let t = Tb::parse(attrs)?;
        Ok(Table {
            family,
            name: t.opt_string(NAME)?.unwrap_or_default(),
            flags: t.opt_be32(FLAGS)?,
            handle: t.opt_be64(HANDLE)?,
            userdata: t.opt_bytes(USERDATA),
            use_count: t.opt_be32(USE)?,
        })
    }
}

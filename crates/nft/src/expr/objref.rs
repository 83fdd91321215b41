//! Stateful objects (`NFT_MSG_NEWOBJ`/`DELOBJ`/`GETOBJ`, `NFTA_OBJ_*`) and
//! the `objref` expression that attaches one to a packet. They live here,
//! next to the expression, because a rule reaches an object only through
//! `objref`; objects belong to a table and must exist before (or be added
//! earlier in the same batch than) the rules referring to them, and cannot
//! be deleted while referenced.
//!
//! Typed object data: ct helper and ct timeout; other types keep their raw
//! `NFTA_OBJ_DATA` bytes so that any object round-trips.

use crate::netlink::{Attrs, Tb, Writer};
use crate::{Error, Family, Object};

/// `NFT_MSG_NEWOBJ`, `GETOBJ`, `DELOBJ`.
pub mod msg {
    pub const NEWOBJ: u16 = 18;
    pub const GETOBJ: u16 = 19;
    pub const DELOBJ: u16 = 20;
}

/// `NFT_OBJECT_*` types.
pub mod obj_type {
    pub const COUNTER: u32 = 1;
    pub const QUOTA: u32 = 2;
    pub const CT_HELPER: u32 = 3;
    pub const LIMIT: u32 = 4;
    pub const CT_TIMEOUT: u32 = 7;
}

const TABLE: u16 = 1;
const NAME: u16 = 2;
const TYPE: u16 = 3;
const DATA: u16 = 4;
const USE: u16 = 5;
const HANDLE: u16 = 6;
const USERDATA: u16 = 8;

/// The data of a stateful object, by type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ObjData {
    /// `ct helper`: the kernel helper `name` (e.g. "ftp") for layer-3
    /// family `l3proto` (`NFPROTO_*`, 2 or 10) and layer-4 protocol
    /// `l4proto` (IPPROTO_*).
    CtHelper {
        name: String,
        l3proto: Option<u16>,
        l4proto: u8,
    },
    /// `ct timeout`: per-state timeouts in seconds for `l4proto`, as
    /// (`CTA_TIMEOUT_<PROTO>_<STATE>` attribute type, seconds) pairs.
    CtTimeout {
        l3proto: u16,
        l4proto: u8,
        policy: Vec<(u16, u32)>,
    },
    /// Any other type: `NFT_OBJECT_*` number and raw data bytes.
    Other { ty: u32, data: Vec<u8> },
}

impl ObjData {
    /// The `NFT_OBJECT_*` type.
    pub fn ty(&self) -> u32 {
        match self {
            ObjData::CtHelper { .. } => obj_type::CT_HELPER,
            ObjData::CtTimeout { .. } => obj_type::CT_TIMEOUT,
            ObjData::Other { ty, .. } => *ty,
        }
    }

    fn emit(&self, w: &mut Writer) {
        match self {
            ObjData::CtHelper {
                name,
                l3proto,
                l4proto,
            } => {
                w.put_str(1, name);
                if let Some(l3) = l3proto {
                    w.put_be16(2, *l3);
                }
                w.put_u8(3, *l4proto);
            }
            ObjData::CtTimeout {
                l3proto,
                l4proto,
                policy,
            } => {
                w.put_be16(1, *l3proto);
                w.put_u8(2, *l4proto);
                let n = w.begin_nest(3);
                for (ty, secs) in policy {
                    w.put_be32(*ty, *secs);
                }
                w.end_nest(n);
            }
            ObjData::Other { data, .. } => w.buf.extend_from_slice(data),
        }
    }

    fn parse(ty: u32, data: &[u8]) -> Result<ObjData, Error> {
        let t = Tb::parse(Attrs::new(data))?;
        Ok(match ty {
            obj_type::CT_HELPER => ObjData::CtHelper {
                name: t.string(1)?,
                l3proto: t.opt_be16(2)?,
                l4proto: t.need(3)?.u8()?,
            },
            obj_type::CT_TIMEOUT => {
                let mut policy = Vec::new();
                if let Some(p) = t.get(3) {
                    for a in p.nested() {
                        let a = a?;
                        policy.push((a.ty, a.be32()?));
                    }
                }
                ObjData::CtTimeout {
                    l3proto: t.need(1)?.be16()?,
                    l4proto: t.need(2)?.u8()?,
                    policy,
                }
            }
            _ => ObjData::Other {
                ty,
                data: data.to_vec(),
            },
        })
    }
}

/// A stateful object of a table. For a delete, only `family`, `table`,
/// `name` (or `handle`) and the type matter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Obj {
    pub family: Family,
    pub table: String,
    pub name: String,
    pub data: ObjData,
    /// Kernel-assigned handle (from dumps/echo).
    pub handle: Option<u64>,
    pub userdata: Option<Vec<u8>>,
    /// Number of rules referring to it (read-only).
    pub use_count: Option<u32>,
}

impl Obj {
    pub fn new(family: Family, table: &str, name: &str, data: ObjData) -> Obj {
        Obj {
            family,
            table: table.to_string(),
            name: name.to_string(),
            data,
            handle: None,
            userdata: None,
            use_count: None,
        }
    }
}

impl Object for Obj {
    const NEW: u16 = msg::NEWOBJ;
    const DEL: u16 = msg::DELOBJ;
    const GET: u16 = msg::GETOBJ;

    fn family(&self) -> Family {
        self.family
    }

    fn emit(&self, w: &mut Writer) {
        w.put_str(TABLE, &self.table);
        if !self.name.is_empty() {
            w.put_str(NAME, &self.name);
        }
        w.put_be32(TYPE, self.data.ty());
        let n = w.begin_nest(DATA);
        self.data.emit(w);
        w.end_nest(n);
        w.opt_be64(HANDLE, self.handle);
        w.opt_bytes(USERDATA, self.userdata.as_deref());
    }

    fn parse(family: Family, attrs: Attrs) -> Result<Obj, Error> {
        let t = Tb::parse(attrs)?;
        let ty = t.be32(TYPE)?;
        let data = t.get(DATA).map(|a| a.payload).unwrap_or(&[]);
        Ok(Obj {
            family,
            table: t.string(TABLE)?,
            name: t.opt_string(NAME)?.unwrap_or_default(),
            data: ObjData::parse(ty, data)?,
            handle: t.opt_be64(HANDLE)?,
            userdata: t.opt_bytes(USERDATA),
            use_count: t.opt_be32(USE)?,
        })
    }
}

/// `objref` by name: attach the object `name` of type `ty`
/// (`NFT_OBJECT_*`) of the rule's table to the packet (a ct helper or
/// timeout is assigned to the packet's new conntrack).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Objref {
    pub ty: u32,
    pub name: String,
}

impl Objref {
    pub(super) fn emit(&self, w: &mut Writer) {
        w.put_be32(1, self.ty);
        w.put_str(2, &self.name);
    }
    /// `None` for the set form (object chosen by a map lookup), which stays
    /// an [`super::Expr::Other`].
    pub(super) fn parse(t: &Tb) -> Result<Option<Self>, Error> {
        let Some(ty) = t.opt_be32(1)? else {
            return Ok(None);
        };
        Ok(Some(Objref {
            ty,
            name: t.string(2)?,
        }))
    }
}

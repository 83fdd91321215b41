//! Stateful objects (`NFT_MSG_NEWOBJ`/`DELOBJ`/`GETOBJ`, `NFTA_OBJ_*`) and
//! the `objref` expression that attaches one to a packet. They live here,
//! next to the expression, because a rule reaches an object only through
//! `objref`; objects belong to a table and must exist before (or be added
//! earlier in the same batch than) the rules referring to them, and cannot
//! be deleted while referenced.
//!
//! Typed object data: ct helper, ct timeout and secmark; other types keep
//! their raw `NFTA_OBJ_DATA` bytes so that any object round-trips.

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
    pub const SECMARK: u32 = 8;
}

/// `enum nft_object_attributes` (`NFTA_OBJ_PAD` 7 only aligns u64s).
pub(crate) const NFTA_OBJ_TABLE: u16 = 1;
pub(crate) const NFTA_OBJ_NAME: u16 = 2;
pub(crate) const NFTA_OBJ_TYPE: u16 = 3;
pub(crate) const NFTA_OBJ_DATA: u16 = 4;
pub(crate) const NFTA_OBJ_USE: u16 = 5;
pub(crate) const NFTA_OBJ_HANDLE: u16 = 6;
pub(crate) const NFTA_OBJ_USERDATA: u16 = 8;

/// `enum nft_ct_helper_attributes`.
pub(crate) const NFTA_CT_HELPER_NAME: u16 = 1;
/// Big-endian u16.
pub(crate) const NFTA_CT_HELPER_L3PROTO: u16 = 2;
/// u8.
pub(crate) const NFTA_CT_HELPER_L4PROTO: u16 = 3;

/// `enum nft_ct_timeout_timeout_attributes`.
pub(crate) const NFTA_CT_TIMEOUT_L3PROTO: u16 = 1;
pub(crate) const NFTA_CT_TIMEOUT_L4PROTO: u16 = 2;
/// Nest of `CTA_TIMEOUT_<PROTO>_<STATE>` big-endian u32 seconds.
pub(crate) const NFTA_CT_TIMEOUT_DATA: u16 = 3;

/// `enum nft_secmark_attributes`: the security context, a string.
pub(crate) const NFTA_SECMARK_CTX: u16 = 1;

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
    /// `secmark`: the security context `ctx` (e.g.
    /// `system_u:object_r:ssh_packet_t:s0`); the kernel maps it to a secid
    /// when the object is created (and refuses it when no security module
    /// knows the context) and sets that secid on the packets an `objref`
    /// of the object sees.
    Secmark { ctx: String },
    /// Any other type: `NFT_OBJECT_*` number and raw data bytes.
    Other { ty: u32, data: Vec<u8> },
}

impl ObjData {
    /// The `NFT_OBJECT_*` type.
    pub fn ty(&self) -> u32 {
        match self {
            ObjData::CtHelper { .. } => obj_type::CT_HELPER,
            ObjData::CtTimeout { .. } => obj_type::CT_TIMEOUT,
            ObjData::Secmark { .. } => obj_type::SECMARK,
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
                w.put_str(NFTA_CT_HELPER_NAME, name);
                if let Some(l3) = l3proto {
                    w.put_be16(NFTA_CT_HELPER_L3PROTO, *l3);
                }
                w.put_u8(NFTA_CT_HELPER_L4PROTO, *l4proto);
            }
            ObjData::CtTimeout {
                l3proto,
                l4proto,
                policy,
            } => {
                w.put_be16(NFTA_CT_TIMEOUT_L3PROTO, *l3proto);
                w.put_u8(NFTA_CT_TIMEOUT_L4PROTO, *l4proto);
                let n = w.begin_nest(NFTA_CT_TIMEOUT_DATA);
                for (ty, secs) in policy {
                    w.put_be32(*ty, *secs);
                }
                w.end_nest(n);
            }
            ObjData::Secmark { ctx } => w.put_str(NFTA_SECMARK_CTX, ctx),
            ObjData::Other { data, .. } => w.buf.extend_from_slice(data),
        }
    }

    fn parse(ty: u32, data: &[u8]) -> Result<ObjData, Error> {
        let t = Tb::parse(Attrs::new(data))?;
        Ok(match ty {
            obj_type::CT_HELPER => ObjData::CtHelper {
                name: t.string(NFTA_CT_HELPER_NAME)?,
                l3proto: t.opt_be16(NFTA_CT_HELPER_L3PROTO)?,
                l4proto: t.need(NFTA_CT_HELPER_L4PROTO)?.u8()?,
            },
            obj_type::CT_TIMEOUT => {
                let mut policy = Vec::new();
                if let Some(p) = t.get(NFTA_CT_TIMEOUT_DATA) {
                    for a in p.nested() {
                        let a = a?;
                        policy.push((a.ty, a.be32()?));
                    }
                }
                ObjData::CtTimeout {
                    l3proto: t.need(NFTA_CT_TIMEOUT_L3PROTO)?.be16()?,
                    l4proto: t.need(NFTA_CT_TIMEOUT_L4PROTO)?.u8()?,
                    policy,
                }
            }
            obj_type::SECMARK => ObjData::Secmark {
                ctx: t.string(NFTA_SECMARK_CTX)?,
            },
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
        w.put_str(NFTA_OBJ_TABLE, &self.table);
        if !self.name.is_empty() {
            w.put_str(NFTA_OBJ_NAME, &self.name);
        }
        w.put_be32(NFTA_OBJ_TYPE, self.data.ty());
        let n = w.begin_nest(NFTA_OBJ_DATA);
        self.data.emit(w);
        w.end_nest(n);
        w.opt_be64(NFTA_OBJ_HANDLE, self.handle);
        w.opt_bytes(NFTA_OBJ_USERDATA, self.userdata.as_deref());
    }

    fn parse(family: Family, attrs: Attrs) -> Result<Obj, Error> {
        let t = Tb::parse(attrs)?;
        let ty = t.be32(NFTA_OBJ_TYPE)?;
        let data = t.get(NFTA_OBJ_DATA).map(|a| a.payload).unwrap_or(&[]);
        Ok(Obj {
            family,
            table: t.string(NFTA_OBJ_TABLE)?,
            name: t.opt_string(NFTA_OBJ_NAME)?.unwrap_or_default(),
            data: ObjData::parse(ty, data)?,
            handle: t.opt_be64(NFTA_OBJ_HANDLE)?,
            userdata: t.opt_bytes(NFTA_OBJ_USERDATA),
            use_count: t.opt_be32(NFTA_OBJ_USE)?,
        })
    }
}

/// The `objref` expression's kernel name.
pub(super) const NAME: &str = "objref";

/// `enum nft_objref_attributes` (the set form's `NFTA_OBJREF_SET_*`
/// stay raw in [`super::Expr::Other`]).
pub(crate) const NFTA_OBJREF_IMM_TYPE: u16 = 1;
pub(crate) const NFTA_OBJREF_IMM_NAME: u16 = 2;

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
        w.put_be32(NFTA_OBJREF_IMM_TYPE, self.ty);
        w.put_str(NFTA_OBJREF_IMM_NAME, &self.name);
    }
    /// `None` for the set form (object chosen by a map lookup), which stays
    /// an [`super::Expr::Other`].
    pub(super) fn parse(t: &Tb) -> Result<Option<Self>, Error> {
        let Some(ty) = t.opt_be32(NFTA_OBJREF_IMM_TYPE)? else {
            return Ok(None);
        };
        Ok(Some(Objref {
            ty,
            name: t.string(NFTA_OBJREF_IMM_NAME)?,
        }))
    }
}

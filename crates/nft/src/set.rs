//! Sets and maps (`NFT_MSG_NEWSET`/`DELSET`/`GETSET`, `NFTA_SET_*`).

use crate::expr::{self, Expr};
use crate::netlink::{Attrs, Tb, Writer};
use crate::{msg, Error, Family, Object};

const TABLE: u16 = 1;
const NAME: u16 = 2;
const FLAGS: u16 = 3;
const KEY_TYPE: u16 = 4;
const KEY_LEN: u16 = 5;
const DATA_TYPE: u16 = 6;
const DATA_LEN: u16 = 7;
const POLICY: u16 = 8;
const DESC: u16 = 9;
const ID: u16 = 10;
const TIMEOUT: u16 = 11;
const GC_INTERVAL: u16 = 12;
const USERDATA: u16 = 13;
const HANDLE: u16 = 16;
const EXPR: u16 = 17;
const EXPRESSIONS: u16 = 18;

const DESC_SIZE: u16 = 1;
const DESC_CONCAT: u16 = 2;
const LIST_ELEM: u16 = 1;
const FIELD_LEN: u16 = 1;

/// `NFT_SET_*` flags.
pub mod flags {
    pub const ANONYMOUS: u32 = 0x1;
    pub const CONSTANT: u32 = 0x2;
    pub const INTERVAL: u32 = 0x4;
    pub const MAP: u32 = 0x8;
    pub const TIMEOUT: u32 = 0x10;
    pub const EVAL: u32 = 0x20;
    pub const OBJECT: u32 = 0x40;
    pub const CONCAT: u32 = 0x80;
    pub const EXPR: u32 = 0x100;
}

/// `NFT_DATA_VERDICT`: the data type of a verdict map.
pub const DATA_TYPE_VERDICT: u32 = 0xffff_ff00;

/// A set or map. `key_type`/`data_type` are nft's userspace type ids (e.g.
/// 7 ipv4_addr, 13 inet_service); the kernel only stores them, except
/// `DATA_TYPE_VERDICT`. Lengths are in bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Set {
    pub family: Family,
    pub table: String,
    pub name: String,
    pub handle: Option<u64>,
    /// `flags::*`.
    pub flags: Option<u32>,
    pub key_type: Option<u32>,
    pub key_len: Option<u32>,
    pub data_type: Option<u32>,
    pub data_len: Option<u32>,
    pub policy: Option<u32>,
    /// Expected number of elements (`NFTA_SET_DESC_SIZE`).
    pub size: Option<u32>,
    /// Field lengths of a concatenated key (`NFTA_SET_DESC_CONCAT`), bytes each.
    pub concat: Vec<u32>,
    /// Batch-local id: lookups and element adds in the same batch may name
    /// the set by it. REQUIRED on `NEWSET`: kernel 6.18 refuses a new set
    /// without it (`EINVAL`).
    pub id: Option<u32>,
    /// Default element timeout, milliseconds.
    pub timeout: Option<u64>,
    /// Garbage-collection interval, milliseconds.
    pub gc_interval: Option<u32>,
    pub userdata: Option<Vec<u8>>,
    /// Expressions every element gets (e.g. a counter per element). One is
    /// sent as `NFTA_SET_EXPR`, several as `NFTA_SET_EXPRESSIONS`.
    pub exprs: Vec<Expr>,
}

impl Set {
    pub fn new(family: Family, table: &str, name: &str) -> Set {
        Set {
            family,
            table: table.to_string(),
            name: name.to_string(),
            ..Default::default()
        }
    }
}

impl Object for Set {
    const NEW: u16 = msg::NEWSET;
    const DEL: u16 = msg::DELSET;
    const GET: u16 = msg::GETSET;

    fn family(&self) -> Family {
        self.family
    }

    fn emit(&self, w: &mut Writer) {
        if !self.table.is_empty() {
            w.put_str(TABLE, &self.table);
        }
        if !self.name.is_empty() {
            w.put_str(NAME, &self.name);
        }
        w.opt_be32(FLAGS, self.flags);
        w.opt_be32(KEY_TYPE, self.key_type);
        w.opt_be32(KEY_LEN, self.key_len);
        w.opt_be32(DATA_TYPE, self.data_type);
        w.opt_be32(DATA_LEN, self.data_len);
        w.opt_be32(POLICY, self.policy);
        if self.size.is_some() || !self.concat.is_empty() {
            let d = w.begin_nest(DESC);
            w.opt_be32(DESC_SIZE, self.size);
            if !self.concat.is_empty() {
                let c = w.begin_nest(DESC_CONCAT);
                for len in &self.concat {
                    let e = w.begin_nest(LIST_ELEM);
                    w.put_be32(FIELD_LEN, *len);
                    w.end_nest(e);
                }
                w.end_nest(c);
            }
            w.end_nest(d);
        }
        w.opt_be32(ID, self.id);
        w.opt_be64(TIMEOUT, self.timeout);
        w.opt_be32(GC_INTERVAL, self.gc_interval);
        w.opt_bytes(USERDATA, self.userdata.as_deref());
        w.opt_be64(HANDLE, self.handle);
        match self.exprs.as_slice() {
            [] => {}
            [one] => {
                let n = w.begin_nest(EXPR);
                one.emit_body(w);
                w.end_nest(n);
            }
            many => expr::emit_list(w, EXPRESSIONS, many),
        }
    }

    fn parse(family: Family, attrs: Attrs) -> Result<Set, Error> {
        let t = Tb::parse(attrs)?;
        let (mut size, mut concat) = (None, Vec::new());
        if let Some(d) = t.get(DESC) {
            let d = Tb::parse(d.nested())?;
            size = d.opt_be32(DESC_SIZE)?;
            if let Some(c) = d.get(DESC_CONCAT) {
                for e in c.nested() {
                    concat.push(Tb::parse(e?.nested())?.be32(FIELD_LEN)?);
                }
            }
        }
        let mut exprs = Vec::new();
        if let Some(e) = t.get(EXPR) {
            exprs.push(Expr::parse(&e)?);
        }
        if let Some(l) = t.get(EXPRESSIONS) {
            exprs.extend(expr::parse_list(&l)?);
        }
        Ok(Set {
            family,
            table: t.opt_string(TABLE)?.unwrap_or_default(),
            name: t.opt_string(NAME)?.unwrap_or_default(),
            handle: t.opt_be64(HANDLE)?,
            flags: t.opt_be32(FLAGS)?,
            key_type: t.opt_be32(KEY_TYPE)?,
            key_len: t.opt_be32(KEY_LEN)?,
            data_type: t.opt_be32(DATA_TYPE)?,
            data_len: t.opt_be32(DATA_LEN)?,
            policy: t.opt_be32(POLICY)?,
            size,
            concat,
            id: t.opt_be32(ID)?,
            timeout: t.opt_be64(TIMEOUT)?,
            gc_interval: t.opt_be32(GC_INTERVAL)?,
            userdata: t.opt_bytes(USERDATA),
            exprs,
        })
    }
}

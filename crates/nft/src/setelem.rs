//! Set elements (`NFT_MSG_NEWSETELEM`/`DELSETELEM`/`GETSETELEM`,
//! `NFTA_SET_ELEM_LIST_*` around `NFTA_SET_ELEM_*`).
//!
//! One message carries any number of elements of one set. Interval sets
//! without concatenation take a start element and an end element flagged
//! `F_INTERVAL_END` (end = last value + 1); concatenated interval sets take
//! `key` and `key_end` in one element.

use crate::data::Data;
use crate::expr::{self, Expr};
use crate::netlink::{Attr, Attrs, Tb, Writer};
use crate::{msg, Error, Family, Object};

const LIST_TABLE: u16 = 1;
const LIST_SET: u16 = 2;
const LIST_ELEMENTS: u16 = 3;
const LIST_SET_ID: u16 = 4;
const LIST_ELEM: u16 = 1;

const KEY: u16 = 1;
const DATA: u16 = 2;
const FLAGS: u16 = 3;
const TIMEOUT: u16 = 4;
const EXPIRATION: u16 = 5;
const USERDATA: u16 = 6;
const EXPR: u16 = 7;
const KEY_END: u16 = 10;
const EXPRESSIONS: u16 = 11;

/// `NFT_SET_ELEM_INTERVAL_END`.
pub const F_INTERVAL_END: u32 = 1;
/// `NFT_SET_ELEM_CATCHALL`: the element matches any key (no `key`).
pub const F_CATCHALL: u32 = 2;

/// One element. Keys are raw bytes in register byte order (addresses and
/// ports big-endian, as in the packet).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetElem {
    pub key: Option<Vec<u8>>,
    pub key_end: Option<Vec<u8>>,
    /// Map value or verdict.
    pub data: Option<Data>,
    pub flags: Option<u32>,
    /// Milliseconds.
    pub timeout: Option<u64>,
    /// Milliseconds left (read-only).
    pub expiration: Option<u64>,
    pub userdata: Option<Vec<u8>>,
    /// Per-element expressions (e.g. a counter). One is sent as
    /// `NFTA_SET_ELEM_EXPR`, several as `NFTA_SET_ELEM_EXPRESSIONS`.
    pub exprs: Vec<Expr>,
}

impl SetElem {
    pub fn key(key: &[u8]) -> SetElem {
        SetElem {
            key: Some(key.to_vec()),
            ..Default::default()
        }
    }

    pub(crate) fn emit(&self, w: &mut Writer) {
        let n = w.begin_nest(LIST_ELEM);
        if let Some(k) = &self.key {
            Data::emit_value(w, KEY, k);
        }
        if let Some(d) = &self.data {
            d.emit(w, DATA);
        }
        w.opt_be32(FLAGS, self.flags);
        w.opt_be64(TIMEOUT, self.timeout);
        w.opt_bytes(USERDATA, self.userdata.as_deref());
        match self.exprs.as_slice() {
            [] => {}
            [one] => {
                let e = w.begin_nest(EXPR);
                one.emit_body(w);
                w.end_nest(e);
            }
            many => expr::emit_list(w, EXPRESSIONS, many),
        }
        if let Some(k) = &self.key_end {
            Data::emit_value(w, KEY_END, k);
        }
        w.end_nest(n);
    }

    fn parse(a: &Attr) -> Result<SetElem, Error> {
        let t = Tb::parse(a.nested())?;
        let mut exprs = Vec::new();
        if let Some(e) = t.get(EXPR) {
            exprs.push(Expr::parse(&e)?);
        }
        if let Some(l) = t.get(EXPRESSIONS) {
            exprs.extend(expr::parse_list(&l)?);
        }
        Ok(SetElem {
            key: t.get(KEY).map(|a| Data::parse_value(&a)).transpose()?,
            key_end: t.get(KEY_END).map(|a| Data::parse_value(&a)).transpose()?,
            data: t.get(DATA).map(|a| Data::parse(&a)).transpose()?,
            flags: t.opt_be32(FLAGS)?,
            timeout: t.opt_be64(TIMEOUT)?,
            expiration: t.opt_be64(EXPIRATION)?,
            userdata: t.opt_bytes(USERDATA),
            exprs,
        })
    }
}

/// Elements of one set, as one message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetElems {
    pub family: Family,
    pub table: String,
    pub set: String,
    /// Batch-local id of a set created in the same batch.
    pub set_id: Option<u32>,
    pub elems: Vec<SetElem>,
}

impl SetElems {
    pub fn new(family: Family, table: &str, set: &str, elems: Vec<SetElem>) -> SetElems {
        SetElems {
            family,
            table: table.to_string(),
            set: set.to_string(),
            set_id: None,
            elems,
        }
    }
}

/// Largest `NFTA_SET_ELEM_LIST_ELEMENTS` nest a message gets, bytes (the
/// attribute length field is 16 bits).
pub(crate) const MAX_NEST: usize = 60 * 1024;

impl SetElems {
    /// Writes the list attributes and as many elements from `from` as fit in
    /// one `ELEMENTS` nest; returns the index of the first element not
    /// written (`elems.len()` when all fit) and the nest's offset (the
    /// message's last attribute; `None` without elements).
    pub(crate) fn emit_part(&self, w: &mut Writer, from: usize) -> (usize, Option<usize>) {
        w.put_str(LIST_TABLE, &self.table);
        w.put_str(LIST_SET, &self.set);
        w.opt_be32(LIST_SET_ID, self.set_id);
        if self.elems.is_empty() {
            return (0, None);
        }
        let n = w.begin_nest(LIST_ELEMENTS);
        let mut i = from;
        while i < self.elems.len() {
            let mark = w.buf.len();
            self.elems[i].emit(w);
            if w.nest_len(n) > MAX_NEST && i > from {
                w.buf.truncate(mark);
                break;
            }
            i += 1;
        }
        w.end_nest(n);
        (i, Some(n))
    }

    /// Appends every element to the `ELEMENTS` nest at `nest`, the last
    /// attribute of the message at `msg` (which ends the buffer): the nest
    /// and the message lengths are patched. False, leaving the buffer as
    /// it was, when they would not all fit within [`MAX_NEST`].
    pub(crate) fn emit_more(&self, w: &mut Writer, msg: usize, nest: usize) -> bool {
        let mark = w.buf.len();
        for e in &self.elems {
            e.emit(w);
            if w.nest_len(nest) > MAX_NEST {
                w.buf.truncate(mark);
                return false;
            }
        }
        w.end_nest(nest);
        w.end_msg(msg);
        true
    }
}

impl Object for SetElems {
    const NEW: u16 = msg::NEWSETELEM;
    const DEL: u16 = msg::DELSETELEM;
    const GET: u16 = msg::GETSETELEM;

    fn family(&self) -> Family {
        self.family
    }

    /// Emits all elements in one message; panics beyond ~64 KiB of
    /// elements. [`crate::Batch`] splits long lists over several messages
    /// instead (see [`Object::emit_split`]).
    fn emit(&self, w: &mut Writer) {
        let (end, _) = self.emit_part(w, 0);
        assert!(
            end == self.elems.len(),
            "set element list too large for one message"
        );
    }

    fn emit_split(&self, w: &mut Writer, from: usize) -> Option<usize> {
        let (next, _) = self.emit_part(w, from);
        (next < self.elems.len()).then_some(next)
    }

    fn parse(family: Family, attrs: Attrs) -> Result<SetElems, Error> {
        let t = Tb::parse(attrs)?;
        let mut elems = Vec::new();
        if let Some(l) = t.get(LIST_ELEMENTS) {
            for e in l.nested() {
                let e = e?;
                if e.ty == LIST_ELEM {
                    elems.push(SetElem::parse(&e)?);
                }
            }
        }
        Ok(SetElems {
            family,
            table: t.opt_string(LIST_TABLE)?.unwrap_or_default(),
            set: t.opt_string(LIST_SET)?.unwrap_or_default(),
            set_id: t.opt_be32(LIST_SET_ID)?,
            elems,
        })
    }
}

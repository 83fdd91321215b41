//! Objects to netlink messages, laid out as the kernel's
//! `nf_tables_fill_*_info` lay them out (attribute order and presence),
//! for dumps, single gets, echoes and notifications; plus the netlink
//! control messages (`NLMSG_ERROR`, `NLMSG_DONE`).
//!
//! Attribute numbers are the uapi's (`linux/netfilter/nf_tables.h`).

use nft::data::Data;
use nft::expr;
use nft::netlink::{nft_type, Writer, NLMSG_DONE, NLMSG_ERROR, NLM_F_MULTI};
use nft::{msg, Family};

use crate::model::{Chain, Elem, Rule, Set, Table};

/// The header of one message: `NFT_MSG_*` type, netlink flags, sequence
/// number, port id, family, and the generation whose low 16 bits go to
/// `res_id`.
#[derive(Clone, Copy, Debug)]
pub struct Hdr {
    pub ty: u16,
    pub flags: u16,
    pub seq: u32,
    pub pid: u32,
    pub family: Family,
    pub genid: u32,
}

/// Opens a message; returns its start for [`end`].
fn begin(w: &mut Writer, h: &Hdr) -> usize {
    let start = w.begin_msg(
        nft_type(h.ty),
        h.flags,
        h.seq,
        h.family as u8,
        (h.genid & 0xffff) as u16,
    );
    w.buf[start + 12..start + 16].copy_from_slice(&h.pid.to_ne_bytes());
    start
}

fn end(w: &mut Writer, start: usize) {
    w.end_msg(start);
}

/// The table's header fields, for live tables and deleted ones alike.
pub struct TableInfo<'a> {
    pub name: &'a str,
    pub flags: u32,
    pub use_: u32,
    pub handle: u64,
    pub userdata: Option<&'a [u8]>,
}

impl<'a> From<&'a Table> for TableInfo<'a> {
    fn from(t: &'a Table) -> Self {
        TableInfo {
            name: &t.name,
            flags: t.flags,
            use_: t.table_use(),
            handle: t.handle,
            userdata: t.userdata.as_deref(),
        }
    }
}

/// A table; a deletion carries only its name, use count and handle.
pub fn table(out: &mut Vec<u8>, h: &Hdr, t: &TableInfo) {
    let mut w = Writer::new(out);
    let m = begin(&mut w, h);
    w.put_str(1, t.name);
    w.put_be32(3, t.use_);
    w.put_be64(4, t.handle);
    if h.ty != msg::DELTABLE {
        w.put_be32(2, t.flags);
        w.opt_bytes(6, t.userdata);
    }
    end(&mut w, m);
}

/// A chain; a deletion carries only its table, handle and name.
pub fn chain(out: &mut Vec<u8>, h: &Hdr, tname: &str, c: &Chain, use_: u32) {
    let mut w = Writer::new(out);
    let m = begin(&mut w, h);
    w.put_str(1, tname);
    w.put_be64(2, c.handle);
    w.put_str(3, &c.name);
    if h.ty == msg::DELCHAIN {
        end(&mut w, m);
        return;
    }
    if let Some(b) = &c.base {
        let n = w.begin_nest(4);
        w.put_be32(1, b.hooknum);
        w.put_be32(2, b.priority as u32);
        w.opt_str(3, b.dev.as_deref());
        w.end_nest(n);
        w.put_be32(5, b.policy);
        w.put_str(7, &b.ty);
        if let Some((bytes, packets)) = b.counters {
            let n = w.begin_nest(8);
            w.put_be64(2, packets);
            w.put_be64(1, bytes);
            w.end_nest(n);
        }
    }
    if c.flags != 0 {
        w.put_be32(10, c.flags);
    }
    w.put_be32(6, use_);
    w.opt_bytes(12, c.userdata.as_deref());
    end(&mut w, m);
}

/// A rule; `position` (the previous rule's handle) only when non-zero.
pub fn rule(out: &mut Vec<u8>, h: &Hdr, tname: &str, cname: &str, r: &Rule, position: u64) {
    let mut w = Writer::new(out);
    let m = begin(&mut w, h);
    w.put_str(1, tname);
    w.put_str(2, cname);
    w.put_be64(3, r.handle);
    if position != 0 {
        w.put_be64(6, position);
    }
    expr::emit_list(&mut w, 4, &r.exprs);
    w.opt_bytes(7, r.userdata.as_deref());
    end(&mut w, m);
}

/// A set; a deletion carries only its table, name and handle.
pub fn set(out: &mut Vec<u8>, h: &Hdr, tname: &str, s: &Set) {
    let mut w = Writer::new(out);
    let m = begin(&mut w, h);
    w.put_str(1, tname);
    w.put_str(2, &s.name);
    w.put_be64(16, s.handle);
    if h.ty == msg::DELSET {
        end(&mut w, m);
        return;
    }
    if s.flags != 0 {
        w.put_be32(3, s.flags);
    }
    w.put_be32(4, s.key_type);
    w.put_be32(5, s.key_len);
    if s.is_map() {
        w.put_be32(6, s.data_type);
        w.put_be32(7, s.data_len);
    }
    if s.timeout != 0 {
        w.put_be64(11, s.timeout);
    }
    if s.gc_interval != 0 {
        w.put_be32(12, s.gc_interval);
    }
    if s.policy != 0 {
        w.put_be32(8, s.policy);
    }
    w.opt_bytes(13, s.userdata.as_deref());
    let d = w.begin_nest(9);
    if s.size != 0 {
        w.put_be32(1, s.size);
    }
    if s.concat.len() > 1 {
        let c = w.begin_nest(2);
        for len in &s.concat {
            let e = w.begin_nest(1);
            w.put_be32(1, *len);
            w.end_nest(e);
        }
        w.end_nest(c);
    }
    w.end_nest(d);
    match s.exprs.as_slice() {
        [] => {}
        [one] => {
            let n = w.begin_nest(17);
            one.emit_body(&mut w);
            w.end_nest(n);
        }
        many => expr::emit_list(&mut w, 18, many),
    }
    end(&mut w, m);
}

/// One element (`nf_tables_fill_setelem`) inside an open
/// `NFTA_SET_ELEM_LIST_ELEMENTS` nest.
pub fn elem(w: &mut Writer, e: &Elem) {
    let n = w.begin_nest(1);
    if let Some(k) = &e.key {
        Data::emit_value(w, 1, k);
    }
    if let Some(k) = &e.key_end {
        Data::emit_value(w, 10, k);
    }
    if let Some(d) = &e.data {
        d.emit(w, 2);
    }
    match e.exprs.as_slice() {
        [] => {}
        [one] => {
            let x = w.begin_nest(7);
            one.emit_body(w);
            w.end_nest(x);
        }
        many => expr::emit_list(w, 11, many),
    }
    if e.flags != 0 {
        w.put_be32(3, e.flags);
    }
    if let Some(t) = e.timeout {
        w.put_be64(4, t);
    }
    w.opt_bytes(6, e.userdata.as_deref());
    w.end_nest(n);
}

/// Size of one element as [`elem`] writes it, bytes.
pub fn elem_len(e: &Elem) -> usize {
    let mut buf = Vec::new();
    elem(&mut Writer::new(&mut buf), e);
    buf.len()
}

/// An element list message (`NEWSETELEM`/`DELSETELEM`) of `elems`.
pub fn elems<'e>(
    out: &mut Vec<u8>,
    h: &Hdr,
    tname: &str,
    sname: &str,
    elems: impl IntoIterator<Item = &'e Elem>,
) {
    let mut w = Writer::new(out);
    let m = begin(&mut w, h);
    w.put_str(1, tname);
    w.put_str(2, sname);
    let n = w.begin_nest(3);
    for e in elems {
        elem(&mut w, e);
    }
    w.end_nest(n);
    end(&mut w, m);
}

/// `NEWGEN`: generation id and the task that asked or committed.
pub fn gen(out: &mut Vec<u8>, h: &Hdr, task: &Task) {
    let mut w = Writer::new(out);
    let m = begin(&mut w, h);
    w.put_be32(1, h.genid);
    w.put_be32(2, task.pid);
    w.put_str(3, &task.comm);
    end(&mut w, m);
}

/// A task as `NEWGEN` names it: thread id and command name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Task {
    pub pid: u32,
    pub comm: String,
}

/// `NLMSG_ERROR` for the request whose header is `req` (its first 16
/// bytes): `code` 0 for an ACK, else the positive errno. As with
/// `NETLINK_CAP_ACK`, only the request's header is copied back.
pub fn ack(out: &mut Vec<u8>, pid: u32, req: &[u8], code: i32) {
    let seq = u32::from_ne_bytes([req[8], req[9], req[10], req[11]]);
    let start = out.len();
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(&NLMSG_ERROR.to_ne_bytes());
    // NLM_F_CAPPED: the request's payload is not copied.
    out.extend_from_slice(&0x100u16.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&pid.to_ne_bytes());
    out.extend_from_slice(&(-code).to_ne_bytes());
    out.extend_from_slice(&req[..16]);
    let len = (out.len() - start) as u32;
    out[start..start + 4].copy_from_slice(&len.to_ne_bytes());
}

/// `NLMSG_DONE` closing a dump (`extra` flags: `NLM_F_DUMP_INTR`).
pub fn done(out: &mut Vec<u8>, seq: u32, pid: u32, extra: u16) {
    let start = out.len();
    out.extend_from_slice(&20u32.to_ne_bytes());
    out.extend_from_slice(&NLMSG_DONE.to_ne_bytes());
    out.extend_from_slice(&(NLM_F_MULTI | extra).to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&pid.to_ne_bytes());
    out.extend_from_slice(&0i32.to_ne_bytes());
    debug_assert_eq!(out.len() - start, 20);
}

//! Requests outside a batch (`netlink_rcv_skb`): dumps, single gets and
//! `GETGEN`, each message of the datagram in turn; errors (and ACKs asked
//! for) as `NLMSG_ERROR`.
//!
//! Facts (kernel 6.18):
//! - Dumps come in datagrams of at most 32 KiB (whole messages), each
//!   message `NLM_F_MULTI` (rules also `NLM_F_APPEND`), closed by
//!   `NLMSG_DONE` in a datagram of its own (an element dump's ends with an
//!   empty element message, which `NLMSG_DONE` joins).
//! - Filters: tables and chains by family; rules by family, table and
//!   chain (an absent table or chain is an empty dump); sets by family and
//!   table (an absent table is `ENOENT`); elements of one set (`ENOENT`
//!   for an absent table or set), many per message, the last message of
//!   the dump empty.
//! - A rule in a dump carries the previous rule's handle as its position.
//! - Changes (`NEW*`, `DEL*`) outside a batch are `EINVAL`.

use nft::netlink::{
    Msg, Msgs, NFNL_SUBSYS_NFTABLES, NLMSG_HDRLEN, NLM_F_ACK, NLM_F_APPEND, NLM_F_DUMP,
    NLM_F_DUMP_INTR, NLM_F_MULTI, NLM_F_REQUEST,
};
use nft::{msg, Family, Object};

use crate::encode::{self, Hdr, TableInfo, Task};
use crate::errno::*;
use crate::model::{Elem, Ruleset};
use crate::state::State;

/// Largest dump datagram, bytes (`SKB_WITH_OVERHEAD(32768)`).
pub const DUMP_SIZE: usize = 32768 - 320;

pub fn run(st: &mut State, portid: u32, d: &[u8], task: &Task) {
    for m in Msgs::new(d) {
        let Ok(m) = m else {
            return;
        };
        if m.flags & NLM_F_REQUEST == 0 {
            continue;
        }
        let at = m.payload.as_ptr() as usize - d.as_ptr() as usize - NLMSG_HDRLEN;
        let hdr = &d[at..at + NLMSG_HDRLEN];
        let r = if m.ty < 0x10 {
            Ok(())
        } else if m.ty >> 8 != NFNL_SUBSYS_NFTABLES {
            Err(EINVAL)
        } else if m.flags & NLM_F_DUMP != 0 {
            st.stats.dumps += 1;
            if m.ty & 0xff == msg::GETSETELEM {
                st.stats.elem_dumps += 1;
            }
            match dump(st, portid, &m) {
                // A dump is answered by its DONE, never by an ACK.
                Ok(datagrams) => {
                    for dg in datagrams {
                        st.queue(portid, dg);
                    }
                    continue;
                }
                Err(e) => Err(e),
            }
        } else {
            st.stats.gets += 1;
            let mut replies = Vec::new();
            let r = get(st, portid, &m, task, &mut replies);
            for one in replies {
                st.queue(portid, one);
            }
            r
        };
        let code = r.err().unwrap_or(0);
        if code != 0 || m.flags & NLM_F_ACK != 0 {
            let mut out = Vec::new();
            encode::ack(&mut out, portid, hdr, code);
            st.queue(portid, out);
        }
    }
}

fn family_of<'a>(m: &Msg<'a>) -> Result<(Family, nft::netlink::Attrs<'a>), i32> {
    let nf = m.nf().map_err(|_| EINVAL)?;
    Ok((Family::from_u8(nf.family).map_err(|_| EINVAL)?, nf.attrs))
}

fn parse<'a, O: Object>(m: &Msg<'a>) -> Result<O, i32> {
    let (f, attrs) = family_of(m)?;
    O::parse(f, attrs).map_err(|_| EINVAL)
}

fn matches(want: Family, have: Family) -> bool {
    want == Family::Unspec || want == have
}

/// The replies of one dump request, packed into datagrams.
fn dump(st: &mut State, portid: u32, m: &Msg) -> Result<Vec<Vec<u8>>, i32> {
    let intr = if std::mem::take(&mut st.faults.interrupt_dump) {
        NLM_F_DUMP_INTR
    } else {
        0
    };
    let rs = &st.rs;
    let (fam, _) = family_of(m)?;
    let h = |ty: u16, family: Family, extra: u16| Hdr {
        ty,
        flags: NLM_F_MULTI | extra | intr,
        seq: m.seq,
        pid: portid,
        family,
        genid: st.genid,
    };
    let mut msgs: Vec<Vec<u8>> = Vec::new();
    match m.ty & 0xff {
        msg::GETTABLE => {
            for t in rs.tables.iter().filter(|t| matches(fam, t.family)) {
                let mut b = Vec::new();
                encode::table(&mut b, &h(msg::NEWTABLE, t.family, 0), &TableInfo::from(t));
                msgs.push(b);
            }
        }
        msg::GETCHAIN => {
            for t in rs.tables.iter().filter(|t| matches(fam, t.family)) {
                let uses = t.uses();
                for c in &t.chains {
                    let mut b = Vec::new();
                    let hh = h(msg::NEWCHAIN, t.family, 0);
                    let u = uses.get(c.name.as_str()).copied().unwrap_or(0);
                    encode::chain(&mut b, &hh, &t.name, c, u);
                    msgs.push(b);
                }
            }
        }
        msg::GETRULE => {
            let f: nft::Rule = parse(m)?;
            for t in rs.tables.iter().filter(|t| matches(fam, t.family)) {
                if !f.table.is_empty() && f.table != t.name {
                    continue;
                }
                let by_chain = !f.table.is_empty() && !f.chain.is_empty();
                for c in t.chains.iter().filter(|c| !by_chain || c.name == f.chain) {
                    let mut prev = 0;
                    for s in c.rules.iter() {
                        let mut b = Vec::new();
                        let hh = h(msg::NEWRULE, t.family, NLM_F_APPEND);
                        encode::rule(&mut b, &hh, &t.name, &c.name, &s.rule, prev);
                        prev = s.rule.handle;
                        msgs.push(b);
                    }
                }
            }
        }
        msg::GETSET => {
            let f: nft::Set = parse(m)?;
            if !f.table.is_empty() && rs.table(fam, &f.table).is_none() {
                return Err(ENOENT);
            }
            for t in rs.tables.iter().filter(|t| matches(fam, t.family)) {
                if !f.table.is_empty() && f.table != t.name {
                    continue;
                }
                for s in &t.sets {
                    let mut b = Vec::new();
                    encode::set(&mut b, &h(msg::NEWSET, t.family, 0), &t.name, s);
                    msgs.push(b);
                }
            }
        }
        msg::GETSETELEM | msg::GETSETELEM_RESET => {
            let f: nft::SetElems = parse(m)?;
            let (ti, si) = set_of(rs, fam, &f.table, &f.set)?;
            let (t, s) = (&rs.tables[ti], &rs.tables[ti].sets[si]);
            let hh = h(msg::NEWSETELEM, t.family, 0);
            // One message per datagram; the last one, empty, shares its
            // datagram with DONE.
            let mut out = elem_messages(&hh, &t.name, &s.name, s.walk().into_iter());
            encode::done(
                out.last_mut().expect("an empty last message"),
                m.seq,
                portid,
                intr,
            );
            if m.ty & 0xff == msg::GETSETELEM_RESET {
                // What was dumped had its counters; now they are zero.
                let set = std::sync::Arc::make_mut(&mut st.rs.tables[ti].sets[si]);
                for e in std::sync::Arc::make_mut(&mut set.elems).values_mut() {
                    for x in &mut e.exprs {
                        if let nft::Expr::Counter { bytes, packets } = x {
                            (*bytes, *packets) = (0, 0);
                        }
                    }
                }
            }
            return Ok(out);
        }
        _ => return Err(EINVAL),
    }
    // The dump ends with a pass over the objects that adds nothing: DONE
    // alone.
    let mut out = pack(msgs);
    let mut done = Vec::new();
    encode::done(&mut done, m.seq, portid, intr);
    out.push(done);
    Ok(out)
}

/// Element dump messages: as many elements per message as fit a dump
/// datagram, and a last, empty one.
fn elem_messages<'e>(
    h: &Hdr,
    tname: &str,
    sname: &str,
    elems: impl Iterator<Item = &'e Elem>,
) -> Vec<Vec<u8>> {
    let mut msgs = Vec::new();
    let mut part: Vec<&Elem> = Vec::new();
    // Message overhead: headers, names and the list nest.
    let base = 64 + tname.len() + sname.len();
    let mut size = base;
    for e in elems {
        let n = encode::elem_len(e);
        if size + n > DUMP_SIZE && !part.is_empty() {
            let mut b = Vec::new();
            encode::elems(&mut b, h, tname, sname, part.drain(..));
            msgs.push(b);
            size = base;
        }
        size += n;
        part.push(e);
    }
    if !part.is_empty() {
        let mut b = Vec::new();
        encode::elems(&mut b, h, tname, sname, part.drain(..));
        msgs.push(b);
    }
    let mut b = Vec::new();
    encode::elems(&mut b, h, tname, sname, std::iter::empty());
    msgs.push(b);
    msgs
}

/// Packs messages into datagrams of at most [`DUMP_SIZE`] bytes.
fn pack(msgs: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    for m in msgs {
        match out.last_mut() {
            Some(d) if d.len() + m.len() <= DUMP_SIZE => d.extend_from_slice(&m),
            _ => out.push(m),
        }
    }
    out
}

/// The table and set an element request names.
fn set_of(rs: &Ruleset, fam: Family, table: &str, set: &str) -> Result<(usize, usize), i32> {
    if table.is_empty() {
        return Err(EINVAL);
    }
    let ti = rs.table(fam, table).ok_or(ENOENT)?;
    if set.is_empty() {
        return Err(EINVAL);
    }
    let si = rs.tables[ti].set(set).ok_or(ENOENT)?;
    Ok((ti, si))
}

/// The replies of one single get, appended to `out` (those before a
/// failing element of a `GETSETELEM` stay).
fn get(st: &State, portid: u32, m: &Msg, task: &Task, out: &mut Vec<Vec<u8>>) -> Result<(), i32> {
    let rs = &st.rs;
    let (fam, _) = family_of(m)?;
    let h = |ty: u16| Hdr {
        ty,
        flags: 0,
        seq: m.seq,
        pid: portid,
        family: fam,
        genid: st.genid,
    };
    let mut b = Vec::new();
    let need = |name: &str| if name.is_empty() { Err(EINVAL) } else { Ok(()) };
    match m.ty & 0xff {
        msg::GETTABLE => {
            let f: nft::Table = parse(m)?;
            need(&f.name)?;
            let ti = rs.table(fam, &f.name).ok_or(ENOENT)?;
            encode::table(&mut b, &h(msg::NEWTABLE), &TableInfo::from(&rs.tables[ti]));
        }
        msg::GETCHAIN => {
            let f: nft::Chain = parse(m)?;
            need(&f.table)?;
            let ti = rs.table(fam, &f.table).ok_or(ENOENT)?;
            need(&f.name)?;
            let t = &rs.tables[ti];
            let ci = t.chain(&f.name).ok_or(ENOENT)?;
            let c = &t.chains[ci];
            encode::chain(&mut b, &h(msg::NEWCHAIN), &t.name, c, t.chain_use(&c.name));
        }
        msg::GETRULE => {
            let f: nft::Rule = parse(m)?;
            need(&f.table)?;
            let ti = rs.table(fam, &f.table).ok_or(ENOENT)?;
            need(&f.chain)?;
            let t = &rs.tables[ti];
            let c = &t.chains[t.chain(&f.chain).ok_or(ENOENT)?];
            let handle = f.handle.ok_or(EINVAL)?;
            let s = c
                .rules
                .iter()
                .find(|s| s.rule.handle == handle)
                .ok_or(ENOENT)?;
            encode::rule(&mut b, &h(msg::NEWRULE), &t.name, &c.name, &s.rule, 0);
        }
        msg::GETSET => {
            let f: nft::Set = parse(m)?;
            let ti = if f.table.is_empty() {
                None
            } else {
                Some(rs.table(fam, &f.table).ok_or(ENOENT)?)
            };
            if fam == Family::Unspec {
                return Err(EAFNOSUPPORT);
            }
            let ti = ti.ok_or(EINVAL)?;
            need(&f.name)?;
            let t = &rs.tables[ti];
            let si = t.set(&f.name).ok_or(ENOENT)?;
            encode::set(&mut b, &h(msg::NEWSET), &t.name, &t.sets[si]);
        }
        msg::GETSETELEM => {
            let f: nft::SetElems = parse(m)?;
            let (ti, si) = set_of(rs, fam, &f.table, &f.set)?;
            if f.elems.is_empty() {
                return Err(EINVAL);
            }
            let (t, s) = (&rs.tables[ti], &rs.tables[ti].sets[si]);
            for e in &f.elems {
                let found = crate::ops::find_elem(s, e)?;
                let mut one = Vec::new();
                encode::elems(&mut one, &h(msg::NEWSETELEM), &t.name, &s.name, [found]);
                out.push(one);
            }
            return Ok(());
        }
        msg::GETGEN => {
            let hh = Hdr {
                family: Family::Unspec,
                ..h(msg::NEWGEN)
            };
            encode::gen(&mut b, &hh, task);
        }
        _ => return Err(EINVAL),
    }
    out.push(b);
    Ok(())
}

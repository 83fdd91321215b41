//! A batch, as `nfnetlink_rcv_batch` and `nf_tables_commit` run it:
//! begin (with the generation check), every message applied to a working
//! copy (errors collected, processing goes on after one), then commit or
//! abort, and the errors and ACKs delivered last — each its own datagram,
//! in message order.
//!
//! Facts (kernel 6.18; checked by the differential test):
//! - `NFNL_BATCH_GENID` other than 0 and the current generation: only
//!   `ERESTART` on the begin message.
//! - `NLM_F_ACK` is honoured on the begin message (always), on each
//!   message (also in a batch that is then aborted) and on the end message
//!   (only when the batch commits).
//! - Messages after the end message, and a batch without one, do nothing.
//! - A commit whose ruleset fails validation (jumps too deep) is replayed
//!   with validation after every rule and element, so the error lands on
//!   the message that made the table invalid (and on every later rule or
//!   element of that table, which validates it again).
//! - A batch with no transaction commits without a new generation and
//!   without notifications, but its end is still acknowledged.

use nft::netlink::{
    Msg, Msgs, NFNL_BATCH_GENID, NFNL_MSG_BATCH_BEGIN, NFNL_MSG_BATCH_END, NFNL_SUBSYS_NFTABLES,
    NLMSG_HDRLEN, NLM_F_ACK, NLM_F_ECHO, NLM_F_REQUEST,
};
use nft::Family;

use crate::encode::{self, Task};
use crate::errno::*;
use crate::model::Ruleset;
use crate::ops::{self, Prep};
use crate::state::State;
use crate::txn::{Ctx, Trans, Txn};
use crate::{notify, validate, FailAt, Loss};

/// `NLMSG_MIN_TYPE`: types below are netlink control messages.
const NLMSG_MIN_TYPE: u16 = 0x10;

/// One message of the batch and its raw header (for ACKs).
struct Item<'a> {
    msg: Msg<'a>,
    hdr: &'a [u8],
}

/// What processing the messages left.
struct Pass {
    rs: Ruleset,
    txn: Txn,
    /// (request header, 0 or errno), in order.
    acks: Vec<(Vec<u8>, i32)>,
    failed: bool,
    /// The end message's header, if the batch had one.
    end: Option<Vec<u8>>,
    /// The kernel-wide table handle counter after this pass (handles are
    /// not given back on abort).
    table_handles: u64,
}

pub fn run(st: &mut State, portid: u32, d: &[u8], task: &Task) {
    st.stats.batches += 1;
    let mut items = Vec::new();
    let mut malformed = false;
    for m in Msgs::new(d) {
        let Ok(msg) = m else {
            malformed = true;
            break;
        };
        let at = msg.payload.as_ptr() as usize - d.as_ptr() as usize - NLMSG_HDRLEN;
        items.push(Item {
            msg,
            hdr: &d[at..at + NLMSG_HDRLEN],
        });
    }
    let Some(begin) = items.first() else {
        return;
    };
    let begin_hdr = begin.hdr.to_vec();
    let Ok(nf) = begin.msg.nf() else {
        return;
    };
    if nf.res_id != NFNL_SUBSYS_NFTABLES {
        reply_ack(st, portid, &begin_hdr, EINVAL);
        return;
    }
    let genid = nft::netlink::Tb::parse(nf.attrs)
        .ok()
        .and_then(|t| t.opt_be32(NFNL_BATCH_GENID).ok().flatten())
        .unwrap_or(0);
    if genid != 0 && genid != st.genid {
        reply_ack(st, portid, &begin_hdr, ERESTART);
        return;
    }
    let loss = st.faults.lose_replies.take();
    let fail = st.faults.fail_commit.take();
    if let Some((FailAt::Begin, e)) = fail {
        reply(st, portid, loss, |out| {
            encode::ack(out, portid, &begin_hdr, e)
        });
        return;
    }
    let begin_ack = begin.msg.flags & NLM_F_ACK != 0;
    let mut pass = process(st, portid, &items[1..], malformed, false, fail);
    st.table_handles = pass.table_handles;
    let mut commit_err = None;
    let mut committed = false;
    if !pass.failed && pass.end.is_some() {
        if pass.txn.needs_validation && validate_all(&pass.rs).is_err() {
            pass = process(st, portid, &items[1..], malformed, true, fail);
            st.table_handles = pass.table_handles;
        } else if let Some((FailAt::Commit, e)) = fail {
            commit_err = Some(e);
        } else if unbound_anonymous(&pass) {
            commit_err = Some(EINVAL);
        } else {
            committed = true;
        }
    }
    // What the kernel takes for "the batch" after the begin message: the
    // first message after it (commit-time errors and NEWGEN carry its
    // sequence number).
    let (first_hdr, first_seq, first_echo) = match items.get(1) {
        Some(it) => (it.hdr.to_vec(), it.msg.seq, it.msg.flags & NLM_F_ECHO != 0),
        None => (begin_hdr.clone(), begin.msg.seq, false),
    };
    let mut acks = Vec::new();
    if begin_ack {
        acks.push((begin_hdr.clone(), 0));
    }
    acks.append(&mut pass.acks);
    if committed {
        st.stats.commits += u64::from(!pass.txn.list.is_empty());
        let end = pass.end.take().expect("committed batches have an end");
        commit(st, portid, (first_seq, first_echo), pass, task, loss);
        if u16::from_ne_bytes([end[6], end[7]]) & NLM_F_ACK != 0 {
            acks.push((end, 0));
        }
    } else {
        st.stats.aborts += 1;
        if let Some(e) = commit_err {
            reply(st, portid, loss, |out| {
                encode::ack(out, portid, &first_hdr, e)
            });
        }
    }
    for (hdr, code) in acks {
        reply(st, portid, loss, |out| encode::ack(out, portid, &hdr, code));
    }
}

/// Applies the messages to a copy of the committed ruleset.
fn process(
    st: &State,
    portid: u32,
    items: &[Item],
    malformed: bool,
    validate_each: bool,
    fail: Option<(FailAt, i32)>,
) -> Pass {
    let mut pass = Pass {
        rs: st.rs.clone(),
        txn: Txn {
            validate_each,
            ..Txn::default()
        },
        acks: Vec::new(),
        failed: malformed,
        end: None,
        table_handles: st.table_handles,
    };
    let mut fault = fail.filter(|(at, _)| matches!(at, FailAt::Message(_) | FailAt::FirstOf(_)));
    for (i, it) in items.iter().enumerate() {
        let m = &it.msg;
        let err = if m.flags & NLM_F_REQUEST == 0 {
            EINVAL
        } else if m.ty == NFNL_MSG_BATCH_BEGIN {
            // A second begin: the batch is malformed; nothing is reported.
            pass.acks.clear();
            pass.failed = true;
            break;
        } else if m.ty == NFNL_MSG_BATCH_END {
            pass.end = Some(it.hdr.to_vec());
            break;
        } else if m.ty < NLMSG_MIN_TYPE || m.ty >> 8 != NFNL_SUBSYS_NFTABLES {
            EINVAL
        } else if let Some((_, e)) = fault.filter(|(at, _)| hits(*at, i, m.ty & 0xff)) {
            fault = None;
            e
        } else {
            match message(&mut pass, portid, m) {
                Ok(()) => 0,
                Err(e) => e,
            }
        };
        if err != 0 || m.flags & NLM_F_ACK != 0 {
            pass.acks.push((it.hdr.to_vec(), err));
        }
        pass.failed |= err != 0;
    }
    pass
}

fn hits(at: FailAt, index: usize, ty: u16) -> bool {
    match at {
        FailAt::Begin | FailAt::Commit => false,
        FailAt::Message(n) => n == index,
        FailAt::FirstOf(t) => t == ty,
    }
}

/// One nf_tables message of the batch.
fn message(pass: &mut Pass, portid: u32, m: &Msg) -> Result<(), i32> {
    let nf = m.nf().map_err(|_| EINVAL)?;
    let family = Family::from_u8(nf.family).map_err(|_| EOPNOTSUPP)?;
    let ctx = Ctx {
        seq: m.seq,
        flags: m.flags,
        family,
        portid,
    };
    let mut p = Prep {
        rs: &mut pass.rs,
        txn: &mut pass.txn,
        table_handles: &mut pass.table_handles,
    };
    ops::dispatch(&mut p, ctx, m.ty & 0xff, nf.attrs)
}

fn validate_all(rs: &Ruleset) -> Result<(), i32> {
    rs.tables.iter().try_for_each(validate::table)
}

/// An anonymous set the batch created that no rule binds: the kernel
/// refuses to commit it (`EINVAL` on the begin message).
fn unbound_anonymous(pass: &Pass) -> bool {
    pass.txn.list.iter().any(|t| match t {
        Trans::NewSet { table, set, .. } => pass
            .rs
            .table_by_handle(*table)
            .map(|ti| &pass.rs.tables[ti])
            .and_then(|t| t.set_by_handle(*set).map(|si| (t, &t.sets[si])))
            .is_some_and(|(_, s)| s.is_anonymous() && !s.bound),
        _ => false,
    })
}

/// Makes the pass the committed state: the generation moves (if anything
/// changed), notifications go out, echoes to the origin.
fn commit(
    st: &mut State,
    portid: u32,
    first: (u32, bool),
    pass: Pass,
    task: &Task,
    loss: Option<Loss>,
) {
    if pass.txn.list.is_empty() {
        return;
    }
    st.genid = st.genid.wrapping_add(1);
    if st.genid == 0 {
        st.genid = 1;
    }
    let mut rs = pass.rs;
    let listeners = st.conns.values().any(|c| c.subscribed);
    let notes = notify::walk(&mut rs, &pass.txn, st.genid, listeners);
    rs.sweep();
    st.rs = rs;
    notify::deliver(st, portid, first, notes, task, loss);
}

/// Queues one reply for `portid`, unless the armed loss drops it.
fn reply(st: &mut State, portid: u32, loss: Option<Loss>, build: impl FnOnce(&mut Vec<u8>)) {
    if loss == Some(Loss::Everything) {
        st.overrun(portid);
        return;
    }
    let mut out = Vec::new();
    build(&mut out);
    st.queue(portid, out);
}

fn reply_ack(st: &mut State, portid: u32, hdr: &[u8], code: i32) {
    reply(st, portid, None, |out| encode::ack(out, portid, hdr, code));
}

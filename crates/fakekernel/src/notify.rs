//! The commit walk over a batch's transactions (what `nf_tables_commit`
//! does per transaction: apply what was deferred, build its notification)
//! and the delivery of the notifications (`nft_commit_notify`,
//! `nf_tables_gen_notify`).
//!
//! Facts (kernel 6.18):
//! - One notification per object and per element, of the request's
//!   sequence number (elements: 0) and port id, in transaction order; then
//!   one `NEWGEN` (family 0, the sequence number of the batch's first
//!   message after the begin one, echoed to the origin when that message
//!   asked for echoes).
//! - A deletion's notification names the object only: a table's name, use
//!   count and handle, a chain's or set's table, name and handle.
//! - Deleting a rule deletes the anonymous sets bound to it (a `DELSET`
//!   right after its `DELRULE`); replacing a rule is a `DELRULE` of the old
//!   and a `NEWRULE` of the new one.
//! - A rule notification carries `NFTA_RULE_POSITION` (the previous rule's
//!   handle) only when the rule is neither first nor last of its chain.
//! - Notifications are coalesced into datagrams below `NLMSG_GOODSIZE`,
//!   echoed ones (`NLM_F_ECHO`) apart from the others: those go to the
//!   origin, and to every subscriber but the origin; the rest, and
//!   `NEWGEN`, to every subscriber.

use std::collections::{HashMap, HashSet};

use nft::netlink::{NLM_F_APPEND, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE};
use nft::{msg, Family};

use crate::encode::{self, Hdr, TableInfo, Task};
use crate::model::{Rule, Ruleset, Set};
use crate::state::State;
use crate::txn::{Ctx, Trans, Txn};
use crate::Loss;

/// `NLMSG_GOODSIZE` on a 4 KiB-page kernel: the size notifications are
/// coalesced below.
pub const GOODSIZE: usize = 3776;

/// One notification message.
pub struct Note {
    /// Asked for by the request (`NLM_F_ECHO`): also sent to the origin.
    pub report: bool,
    pub bytes: Vec<u8>,
}

fn hdr(ctx: &Ctx, ty: u16, genid: u32) -> Hdr {
    // Element notifications carry sequence number 0.
    let elem = ty == msg::NEWSETELEM || ty == msg::DELSETELEM;
    Hdr {
        ty,
        flags: ctx.flags & (NLM_F_CREATE | NLM_F_EXCL),
        seq: if elem { 0 } else { ctx.seq },
        pid: ctx.portid,
        family: ctx.family,
        genid,
    }
}

/// Walks the transactions of a committing batch over its working ruleset
/// `rs` (renames applied, and deleted rules and anonymous sets gone, as
/// their transactions come) and returns the notifications, in order —
/// only those someone gets: all with `listeners`, else the echoed ones.
/// O(transactions + chains touched).
pub fn walk(rs: &mut Ruleset, txn: &Txn, genid: u32, listeners: bool) -> Vec<Note> {
    let mut w = Walk::default();
    let mut notes = Vec::new();
    for (i, t) in txn.list.iter().enumerate() {
        let ctx = t.ctx();
        let wanted = listeners || ctx.report();
        // Effects first: they change what later notifications show.
        match t {
            Trans::UpdChain {
                table,
                chain,
                rename: Some(new),
                ..
            } => rename(rs, *table, *chain, new),
            Trans::DelRule { table, rule, .. } => {
                w.removed.insert((*table, rule.handle));
            }
            _ => {}
        }
        if wanted {
            let mut out = Vec::new();
            note(&mut out, &mut w, rs, txn, i, genid);
            if !out.is_empty() {
                notes.push(Note {
                    report: ctx.report(),
                    bytes: out,
                });
            }
        }
        // A deleted rule's anonymous sets go with it.
        if let Trans::DelRule {
            table, tname, anon, ..
        } = t
        {
            for s in anon {
                if let Some(ti) = rs.table_by_handle(*table) {
                    let tb = &mut rs.tables[ti];
                    if let Some(si) = tb.set(&s.name) {
                        tb.sets.remove(si);
                    }
                }
                if wanted {
                    let mut b = Vec::new();
                    encode::set(&mut b, &hdr(ctx, msg::DELSET, genid), tname, s);
                    notes.push(Note {
                        report: ctx.report(),
                        bytes: b,
                    });
                }
            }
        }
    }
    notes
}

/// What the walk keeps between transactions.
#[derive(Default)]
struct Walk {
    /// Rules whose deletion has been walked: (table, rule handle).
    removed: HashSet<(u64, u64)>,
    /// Per (table, chain): rule handle → slot indexes (the slots do not
    /// move during the walk; a replacement shares its handle).
    index: HashMap<(u64, u64), HashMap<u64, Vec<usize>>>,
    /// Per table: chain handle → use count (final: counted at prepare).
    uses: HashMap<u64, HashMap<u64, u32>>,
}

/// The notification of transaction `i`, into `out` (empty when there is
/// none to send).
fn note(out: &mut Vec<u8>, w: &mut Walk, rs: &Ruleset, txn: &Txn, i: usize, genid: u32) {
    match &txn.list[i] {
        Trans::NewTable { ctx, table } | Trans::UpdTable { ctx, table } => {
            let h = hdr(ctx, msg::NEWTABLE, genid);
            match rs.table_by_handle(*table) {
                Some(ti) => encode::table(out, &h, &TableInfo::from(&rs.tables[ti])),
                None => {
                    if let Some(s) = later_table(txn, i, *table) {
                        encode::table(out, &h, &s);
                    }
                }
            }
        }
        Trans::DelTable { ctx, snap } => {
            let info = TableInfo {
                name: &snap.name,
                flags: snap.flags,
                use_: 0,
                handle: snap.handle,
                userdata: snap.userdata.as_deref(),
            };
            encode::table(out, &hdr(ctx, msg::DELTABLE, genid), &info);
        }
        Trans::NewChain { ctx, table, chain }
        | Trans::UpdChain {
            ctx, table, chain, ..
        } => {
            let h = hdr(ctx, msg::NEWCHAIN, genid);
            let Some(ti) = rs.table_by_handle(*table) else {
                return;
            };
            let tb = &rs.tables[ti];
            match tb.chain_by_handle(*chain) {
                Some(ci) => {
                    let uses = w.uses.entry(*table).or_insert_with(|| {
                        let by_name = tb.uses();
                        tb.chains
                            .iter()
                            .map(|c| (c.handle, by_name.get(c.name.as_str()).copied().unwrap_or(0)))
                            .collect()
                    });
                    let u = uses.get(chain).copied().unwrap_or(0);
                    encode::chain(out, &h, &tb.name, &tb.chains[ci], u);
                }
                None => {
                    if let Some(c) = later_chain(txn, i, *chain) {
                        encode::chain(out, &h, &tb.name, c, 0);
                    }
                }
            }
        }
        Trans::DelChain { ctx, tname, snap } => {
            encode::chain(out, &hdr(ctx, msg::DELCHAIN, genid), tname, snap, 0);
        }
        Trans::NewRule {
            ctx,
            table,
            chain,
            rule,
            obj,
            ..
        } => {
            let mut h = hdr(ctx, msg::NEWRULE, genid);
            h.flags |= rule_flags(ctx);
            let live = rs.table_by_handle(*table).and_then(|ti| {
                let tb = &rs.tables[ti];
                let c = &tb.chains[tb.chain_by_handle(*chain)?];
                let index = w.index.entry((*table, *chain)).or_insert_with(|| {
                    let mut m: HashMap<u64, Vec<usize>> = HashMap::new();
                    for (i, s) in c.rules.iter().enumerate() {
                        m.entry(s.rule.handle).or_default().push(i);
                    }
                    m
                });
                let si = index
                    .get(rule)?
                    .iter()
                    .copied()
                    .find(|&i| std::sync::Arc::ptr_eq(&c.rules[i].rule, obj))?;
                Some((tb, c, si))
            });
            match live {
                Some((tb, c, si)) => {
                    // Previous and next rules not yet removed by the walk.
                    let here = |j: &usize| !w.removed.contains(&(*table, c.rules[*j].rule.handle));
                    let prev = (0..si).rev().find(here);
                    let next = (si + 1..c.rules.len()).find(here);
                    let pos = match (prev, next) {
                        (Some(p), Some(_)) => c.rules[p].rule.handle,
                        _ => 0,
                    };
                    encode::rule(out, &h, &tb.name, &c.name, &c.rules[si].rule, pos);
                }
                // Deleted with its table or chain by this batch.
                None => {
                    if let Some((tname, cname, r)) = later_rule(txn, i, *table, *rule) {
                        encode::rule(out, &h, tname, cname, r, 0);
                    }
                }
            }
        }
        Trans::DelRule {
            ctx,
            tname,
            cname,
            rule,
            ..
        } => {
            let mut h = hdr(ctx, msg::DELRULE, genid);
            h.flags |= rule_flags(ctx);
            encode::rule(out, &h, tname, cname, rule, 0);
        }
        Trans::NewSet {
            ctx, table, set, ..
        } => {
            let h = hdr(ctx, msg::NEWSET, genid);
            if let Some(ti) = rs.table_by_handle(*table) {
                let tb = &rs.tables[ti];
                match tb.set_by_handle(*set) {
                    Some(si) => encode::set(out, &h, &tb.name, &tb.sets[si]),
                    None => {
                        if let Some(s) = later_set(txn, i, *set) {
                            encode::set(out, &h, &tb.name, s);
                        }
                    }
                }
            }
        }
        Trans::DelSet { ctx, tname, snap } => {
            encode::set(out, &hdr(ctx, msg::DELSET, genid), tname, snap);
        }
        Trans::NewElem {
            ctx,
            table,
            set,
            elem,
        } => {
            let h = hdr(ctx, msg::NEWSETELEM, genid);
            if let Some((tname, sname)) = set_names(rs, txn, i, *table, *set) {
                encode::elems(out, &h, &tname, &sname, [elem]);
            }
        }
        Trans::DelElem {
            ctx,
            tname,
            sname,
            elem,
        } => {
            let h = hdr(ctx, msg::DELSETELEM, genid);
            encode::elems(out, &h, tname, sname, [elem]);
        }
    }
}

/// Rule notifications say "append" for appends and replacements.
fn rule_flags(ctx: &Ctx) -> u16 {
    if ctx.flags & (NLM_F_APPEND | NLM_F_REPLACE) != 0 {
        NLM_F_APPEND
    } else {
        0
    }
}

/// Renames chain `chain` of table `table` and every reference to it.
fn rename(rs: &mut Ruleset, table: u64, chain: u64, new: &str) {
    let Some(ti) = rs.table_by_handle(table) else {
        return;
    };
    let tb = &mut rs.tables[ti];
    let Some(ci) = tb.chain_by_handle(chain) else {
        return;
    };
    let old = tb.chains[ci].name.clone();
    tb.chains.rename(ci, new, |c, n| c.name = n.to_string());
    tb.rename_refs(&old, new);
}

/// A table created and deleted by the same batch: its deletion's record.
fn later_table(txn: &Txn, from: usize, handle: u64) -> Option<TableInfo<'_>> {
    txn.list[from..].iter().find_map(|t| match t {
        Trans::DelTable { snap, .. } if snap.handle == handle => Some(TableInfo {
            name: &snap.name,
            flags: snap.flags,
            use_: 0,
            handle: snap.handle,
            userdata: snap.userdata.as_deref(),
        }),
        _ => None,
    })
}

fn later_rule(txn: &Txn, from: usize, table: u64, handle: u64) -> Option<(&str, &str, &Rule)> {
    txn.list[from..].iter().find_map(|t| match t {
        Trans::DelRule {
            table: tt,
            tname,
            cname,
            rule,
            ..
        } if *tt == table && rule.handle == handle => {
            Some((tname.as_str(), cname.as_str(), &**rule))
        }
        _ => None,
    })
}

fn later_chain(txn: &Txn, from: usize, handle: u64) -> Option<&crate::model::Chain> {
    txn.list[from..].iter().find_map(|t| match t {
        Trans::DelChain { snap, .. } if snap.handle == handle => Some(snap),
        _ => None,
    })
}

fn later_set(txn: &Txn, from: usize, handle: u64) -> Option<&Set> {
    txn.list[from..].iter().find_map(|t| match t {
        Trans::DelSet { snap, .. } if snap.handle == handle => Some(&**snap),
        Trans::DelRule { anon, .. } => anon.iter().find(|s| s.handle == handle).map(|s| &**s),
        _ => None,
    })
}

/// Table and set names of an element's set (which may be gone by now).
fn set_names(
    rs: &Ruleset,
    txn: &Txn,
    from: usize,
    table: u64,
    set: u64,
) -> Option<(String, String)> {
    let ti = rs.table_by_handle(table);
    let tname = ti.map(|ti| rs.tables[ti].name.clone()).or_else(|| {
        txn.list[from..].iter().find_map(|t| match t {
            Trans::DelTable { snap, .. } if snap.handle == table => Some(snap.name.clone()),
            _ => None,
        })
    })?;
    let sname = ti
        .and_then(|ti| {
            let tb = &rs.tables[ti];
            tb.set_by_handle(set).map(|si| tb.sets[si].name.clone())
        })
        .or_else(|| later_set(txn, from, set).map(|s| s.name.clone()))?;
    Some((tname, sname))
}

/// Sends a commit's notifications: coalesced datagrams to the subscribers
/// (and the echoed ones to the origin), then `NEWGEN`. `loss` drops the
/// origin's echoes (and marks its overrun); an armed event loss drops
/// what the subscribers would get.
pub fn deliver(
    st: &mut State,
    origin: u32,
    first: (u32, bool),
    notes: Vec<Note>,
    task: &Task,
    loss: Option<Loss>,
) {
    let (first_seq, gen_report) = first;
    let lose_events = std::mem::take(&mut st.faults.lose_events);
    let mut gen = Vec::new();
    let h = Hdr {
        ty: msg::NEWGEN,
        flags: 0,
        seq: first_seq,
        pid: origin,
        family: Family::Unspec,
        genid: st.genid,
    };
    encode::gen(&mut gen, &h, task);
    let mut datagrams = coalesce(notes);
    datagrams.push((gen_report, gen));
    let subscribers: Vec<u32> = st
        .conns
        .iter()
        .filter(|(_, c)| c.subscribed)
        .map(|(p, _)| *p)
        .collect();
    for (report, d) in datagrams {
        if report {
            if loss.is_some() {
                st.overrun(origin);
            } else {
                st.queue(origin, d.clone());
            }
        }
        for &p in &subscribers {
            if report && p == origin {
                continue;
            }
            if lose_events {
                st.overrun(p);
            } else {
                st.multicast(p, d.clone());
            }
        }
    }
}

/// Groups consecutive notifications of the same kind (echoed or not) into
/// datagrams below [`GOODSIZE`].
fn coalesce(notes: Vec<Note>) -> Vec<(bool, Vec<u8>)> {
    let mut out: Vec<(bool, Vec<u8>)> = Vec::new();
    for n in notes {
        match out.last_mut() {
            Some((r, d)) if *r == n.report && d.len() + n.bytes.len() < GOODSIZE => {
                d.extend_from_slice(&n.bytes)
            }
            _ => out.push((n.report, n.bytes)),
        }
    }
    out
}

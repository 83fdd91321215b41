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
/// `rs` (renames applied, deleted rules and anonymous sets removed as
/// their transactions come) and returns the notifications, in order.
pub fn walk(rs: &mut Ruleset, txn: &Txn, genid: u32) -> Vec<Note> {
    let mut notes = Vec::new();
    for (i, t) in txn.list.iter().enumerate() {
        let mut out = Vec::new();
        let ctx = match t {
            Trans::NewTable { ctx, table } | Trans::UpdTable { ctx, table } => {
                let h = hdr(ctx, msg::NEWTABLE, genid);
                match rs.table_by_handle(*table) {
                    Some(ti) => encode::table(&mut out, &h, &TableInfo::from(&rs.tables[ti])),
                    None => {
                        if let Some(s) = later_table(txn, i, *table) {
                            encode::table(&mut out, &h, &s);
                        }
                    }
                }
                ctx
            }
            Trans::DelTable { ctx, snap } => {
                let info = TableInfo {
                    name: &snap.name,
                    flags: snap.flags,
                    use_: 0,
                    handle: snap.handle,
                    userdata: snap.userdata.as_deref(),
                };
                encode::table(&mut out, &hdr(ctx, msg::DELTABLE, genid), &info);
                ctx
            }
            Trans::NewChain { ctx, table, chain }
            | Trans::UpdChain {
                ctx, table, chain, ..
            } => {
                if let Trans::UpdChain {
                    rename: Some(new), ..
                } = t
                {
                    rename(rs, *table, *chain, new);
                }
                let h = hdr(ctx, msg::NEWCHAIN, genid);
                if let Some(ti) = rs.table_by_handle(*table) {
                    let tb = &rs.tables[ti];
                    match tb.chain_by_handle(*chain) {
                        Some(ci) => {
                            let c = &tb.chains[ci];
                            encode::chain(&mut out, &h, &tb.name, c, tb.chain_use(&c.name));
                        }
                        None => {
                            if let Some(c) = later_chain(txn, i, *chain) {
                                encode::chain(&mut out, &h, &tb.name, c, 0);
                            }
                        }
                    }
                }
                ctx
            }
            Trans::DelChain { ctx, tname, snap } => {
                encode::chain(&mut out, &hdr(ctx, msg::DELCHAIN, genid), tname, snap, 0);
                ctx
            }
            Trans::NewRule {
                ctx,
                table,
                chain,
                rule,
                ..
            } => {
                let mut h = hdr(ctx, msg::NEWRULE, genid);
                h.flags |= rule_flags(ctx);
                let live = rs.table_by_handle(*table).and_then(|ti| {
                    let tb = &rs.tables[ti];
                    let c = &tb.chains[tb.chain_by_handle(*chain)?];
                    let si = c.rules.iter().position(|s| s.rule.handle == *rule)?;
                    Some((tb, c, si))
                });
                match live {
                    Some((tb, c, si)) => {
                        let pos = if si > 0 && si + 1 < c.rules.len() {
                            c.rules[si - 1].rule.handle
                        } else {
                            0
                        };
                        encode::rule(&mut out, &h, &tb.name, &c.name, &c.rules[si].rule, pos);
                    }
                    // Deleted with its table or chain by this batch.
                    None => {
                        if let Some((tname, cname, r)) = later_rule(txn, i, *table, *rule) {
                            encode::rule(&mut out, &h, tname, cname, r, 0);
                        }
                    }
                }
                ctx
            }
            Trans::DelRule {
                ctx,
                table,
                tname,
                chain,
                cname,
                rule,
                anon,
            } => {
                let mut h = hdr(ctx, msg::DELRULE, genid);
                h.flags |= rule_flags(ctx);
                encode::rule(&mut out, &h, tname, cname, rule, 0);
                notes.push(Note {
                    report: ctx.report(),
                    bytes: std::mem::take(&mut out),
                });
                // The anonymous sets it was bound to go (with their table
                // when that goes too).
                let mut unbound: Vec<&Set> = Vec::new();
                match rs.table_by_handle(*table) {
                    Some(ti) => {
                        let tb = &mut rs.tables[ti];
                        if let Some(ci) = tb.chain_by_handle(*chain) {
                            let rules = std::sync::Arc::make_mut(&mut tb.chains[ci].rules);
                            rules.retain(|s| !(s.gone && s.rule.handle == rule.handle));
                        }
                        for s in anon {
                            let Some(si) = tb.set(&s.name) else { continue };
                            if tb.set_bindings(&s.name) == 0 {
                                tb.sets.remove(si);
                                unbound.push(s);
                            }
                        }
                    }
                    None => unbound.extend(anon),
                }
                for s in unbound {
                    let mut b = Vec::new();
                    encode::set(&mut b, &hdr(ctx, msg::DELSET, genid), tname, s);
                    notes.push(Note {
                        report: ctx.report(),
                        bytes: b,
                    });
                }
                ctx
            }
            Trans::NewSet {
                ctx, table, set, ..
            } => {
                let h = hdr(ctx, msg::NEWSET, genid);
                if let Some(ti) = rs.table_by_handle(*table) {
                    let tb = &rs.tables[ti];
                    match tb.set_by_handle(*set) {
                        Some(si) => encode::set(&mut out, &h, &tb.name, &tb.sets[si]),
                        None => {
                            if let Some(s) = later_set(txn, i, *set) {
                                encode::set(&mut out, &h, &tb.name, s);
                            }
                        }
                    }
                }
                ctx
            }
            Trans::DelSet {
                ctx, tname, snap, ..
            } => {
                encode::set(&mut out, &hdr(ctx, msg::DELSET, genid), tname, snap);
                ctx
            }
            Trans::NewElem {
                ctx,
                table,
                set,
                elem,
            } => {
                let h = hdr(ctx, msg::NEWSETELEM, genid);
                if let Some((tname, sname)) = set_names(rs, txn, i, *table, *set) {
                    encode::elems(&mut out, &h, &tname, &sname, [elem]);
                }
                ctx
            }
            Trans::DelElem {
                ctx,
                tname,
                sname,
                elem,
                ..
            } => {
                let h = hdr(ctx, msg::DELSETELEM, genid);
                encode::elems(&mut out, &h, tname, sname, [elem]);
                ctx
            }
        };
        if !out.is_empty() {
            notes.push(Note {
                report: ctx.report(),
                bytes: out,
            });
        }
    }
    notes
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
    let old = std::mem::replace(&mut tb.chains[ci].name, new.to_string());
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
        Trans::DelSet { snap, .. } if snap.handle == handle => Some(snap),
        Trans::DelRule { anon, .. } => anon.iter().find(|s| s.handle == handle),
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
                st.queue(p, d.clone());
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

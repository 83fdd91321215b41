//! Undo log for multi-command transactions (`iptables-restore --noflush`).
//!
//! Between `begin` and `commit`/`rollback` each successful mutation appends
//! the data needed to invert it. Recording costs O(1) per operation, except
//! flush (which moves the removed rules into the log: O(rules removed)) and
//! zero (which logs the non-zero counters it clears: O(rules zeroed)). When no
//! transaction is open nothing is recorded.
//!
//! Rules are named by `RuleId` in the log, never by slot: undoing a delete
//! re-creates the rule in a possibly different slot, and earlier log entries
//! must still find it. Rollback replays the inverses newest first, so each
//! inverse runs on exactly the state its operation produced; it therefore
//! restores chain ids, rule ids, positions, counters, policies and
//! references, and finally the rule id allocator.

use super::hash::{FxMap, FxSet};
use super::ids::IdIndex;
use super::{Chain, Rule, Table};
use crate::seqtree::SeqTree;
use crate::{Counters, Policy, RuleBody, RuleId};

/// The open transaction of a `Table`: inverse operations recorded since
/// `begin()`, undone by `rollback()`, dropped by `commit()`.
#[derive(Clone, Debug)]
pub struct Undo<R> {
    pub(super) ops: Vec<Op<R>>,
    /// The table's id allocator at `begin`.
    next_id: u64,
}

impl<R> Undo<R> {
    /// Number of recorded operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// A position in an open transaction (see [`Table::savepoint`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Savepoint {
    ops: usize,
    next_id: u64,
}

/// One recorded operation, holding what its inverse needs.
#[derive(Clone, Debug)]
pub(super) enum Op<R> {
    /// A chain was created (always the last chain id).
    NewChain(u32),
    /// An empty, unreferenced user chain was deleted.
    DeleteChain {
        id: u32,
        name: Box<str>,
    },
    Rename {
        id: u32,
        old: Box<str>,
    },
    /// Previous policy and policy counters of a built-in chain.
    ChainState {
        id: u32,
        policy: Policy,
        counters: Counters,
    },
    /// A rule with this id was added.
    Insert(RuleId),
    /// A rule was removed from 0-based position `at`. The body is boxed
    /// so that every op stays a few words: a flush of many chains records
    /// one op per chain, and ops of a rule's size made growing the log
    /// copy megabytes (BENCHMARKS.md §8.7).
    Remove {
        chain: u32,
        at: usize,
        id: RuleId,
        body: Box<R>,
        counters: Counters,
    },
    /// A chain was flushed; its rules in order.
    Flush {
        chain: u32,
        rules: Vec<(RuleId, R, Counters)>,
    },
    /// Every chain was flushed: the rule slab and its indexes as they were
    /// (`slab`), and each chain's rule tree and jump bookkeeping. Undone
    /// by putting them back, which is exact because every op after it
    /// has been undone first: the table then holds no rule.
    FlushAll {
        chains: Vec<FlushedChain>,
        slab: Box<Slab<R>>,
    },
    /// Previous counters of rules.
    RuleCounters(Vec<(RuleId, Counters)>),
    /// The rule with id `from` was given id `to`.
    SetId {
        from: RuleId,
        to: RuleId,
    },
}

/// What [`Op::FlushAll`] keeps of one chain.
#[derive(Clone, Debug)]
pub(super) struct FlushedChain {
    pub(super) chain: u32,
    pub(super) rules: SeqTree,
    pub(super) referrers: FxSet<u32>,
    pub(super) jumps: FxMap<u32, u32>,
}

/// The rule slab and its indexes, as [`Op::FlushAll`] found them.
#[derive(Clone, Debug)]
pub(super) struct Slab<R> {
    pub(super) rules: Vec<Option<Rule<R>>>,
    pub(super) free: Vec<u32>,
    pub(super) ids: IdIndex,
    pub(super) spec: FxMap<u32, u32>,
}

impl<R: RuleBody> Table<R> {
    /// Open a transaction. If one is already open it stays open unchanged
    /// (transactions do not nest).
    pub fn begin(&mut self) {
        if self.undo.is_none() {
            self.undo = Some(Undo {
                ops: Vec::new(),
                next_id: self.next_id,
            });
        }
    }

    /// Keep every change since `begin` and stop recording. No-op without an
    /// open transaction.
    pub fn commit(&mut self) {
        self.undo = None;
    }

    /// [`Table::commit`] handing back the log, for a caller that frees it
    /// later (a log can hold every rule a flush removed).
    pub fn commit_log(&mut self) -> Option<Undo<R>> {
        self.undo.take()
    }

    /// Whether a transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.undo.is_some()
    }

    /// The open transaction's log, if any (e.g. to report its size).
    pub fn undo_log(&self) -> Option<&Undo<R>> {
        self.undo.as_ref()
    }

    /// A point inside the open transaction to undo back to without ending
    /// it (one command of many in a caller's transaction); `None` without
    /// an open transaction. O(1).
    pub fn savepoint(&self) -> Option<Savepoint> {
        self.undo.as_ref().map(|u| Savepoint {
            ops: u.ops.len(),
            next_id: self.next_id,
        })
    }

    /// Undo the changes made since `sp` (taken in this transaction); the
    /// transaction stays open. O(changes undone).
    pub fn rollback_to(&mut self, sp: Savepoint) {
        let Some(u) = self.undo.as_mut() else { return };
        let later = u.ops.split_off(sp.ops.min(u.ops.len()));
        for op in later.into_iter().rev() {
            self.invert(op);
        }
        self.next_id = sp.next_id;
    }

    /// Undo every change since `begin` and stop recording. No-op without an
    /// open transaction. O(total size of the log).
    pub fn rollback(&mut self) {
        let Some(undo) = self.undo.take() else { return };
        for op in undo.ops.into_iter().rev() {
            self.invert(op);
        }
        self.next_id = undo.next_id;
    }

    fn invert(&mut self, op: Op<R>) {
        match op {
            Op::NewChain(id) => {
                debug_assert_eq!(self.chains.len(), id as usize + 1);
                let c = self.chains.pop().flatten().expect("created chain");
                self.names.remove(&c.name);
            }
            Op::DeleteChain { id, name } => {
                self.names.insert(name.clone(), crate::ChainId(id));
                self.chains[id as usize] = Some(Chain::new(name, None));
            }
            Op::Rename { id, old } => {
                self.raw_rename(id, &old);
            }
            Op::ChainState {
                id,
                policy,
                counters,
            } => {
                self.ch_mut(id).builtin = Some((policy, counters));
            }
            Op::Insert(id) => {
                let slot = self.ids.get(id).expect("undo names a live rule");
                let chain = self.rec(slot).chain;
                let at = self.position(slot);
                self.raw_remove(chain, at);
            }
            Op::Remove {
                chain,
                at,
                id,
                body,
                counters,
            } => {
                let target = self.target_of(&body);
                self.raw_insert(chain, at, id, *body, counters, target);
            }
            Op::Flush { chain, rules } => {
                for (at, (id, body, counters)) in rules.into_iter().enumerate() {
                    let target = self.target_of(&body);
                    self.raw_insert(chain, at, id, body, counters, target);
                }
            }
            Op::FlushAll { chains, slab } => {
                debug_assert_eq!(self.ids.len(), 0, "rules added after the flush remain");
                let Slab {
                    rules,
                    free,
                    ids,
                    spec,
                } = *slab;
                self.rules = rules;
                self.free = free;
                self.ids = ids;
                self.spec = spec;
                for f in chains {
                    let ch = self.ch_mut(f.chain);
                    ch.rules = f.rules;
                    ch.referrers = f.referrers;
                    ch.jumps = f.jumps;
                }
            }
            Op::SetId { from, to } => {
                let slot = self.ids.get(to).expect("undo names a live rule");
                self.raw_set_id(slot, to, from);
            }
            Op::RuleCounters(old) => {
                for (id, counters) in old {
                    let slot = self.ids.get(id).expect("undo names a live rule");
                    self.rec_mut(slot).counters = counters;
                }
            }
        }
    }
}

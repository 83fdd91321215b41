//! One iptables table of one family: its chains and their ordered rules.
//!
//! Layout:
//! - rules live in a slab (`rules`, reused through `free`); a slot number is
//!   the rule's handle inside the table and never changes while the rule lives;
//! - each chain orders its rules' slots in a `SeqTree`; the tree reports which
//!   leaf holds each slot, kept in the rule record, so a rule's position is
//!   recovered from its slot in O(log n);
//! - `ids` maps a `RuleId` to its slot; `spec` maps a 32-bit hash of
//!   (chain id, body) to the head of a singly linked list (through
//!   `Rule::next`) of the slots with that hash;
//! - per chain, `referrers` holds the slots of the rules that jump to it (its
//!   reference count, and what `-E` must retarget) and `jumps` counts this
//!   chain's rules per jump target (the edges of the jump graph, for loop
//!   checks).
//!
//! Every public mutator validates first and mutates only on success, so a
//! failed call changes nothing. Between `begin` and `commit` every mutation
//! records its inverse (see `undo.rs`).
//!
//! Memory per rule beyond `size_of::<R>()`, with `R` having a niche so that
//! `Option<Rule<R>>` is no larger than `Rule<R>` (any body holding a `String`,
//! `Vec` or `Box` has one; otherwise add 8 bytes):
//! - record: counters 16 + id 8 + chain, leaf, next, key 4 each = 40;
//! - id index: 12-byte entry + 1 control byte, hashbrown load 7/16..7/8:
//!   14.9..29.7;
//! - spec index: 8-byte entry + 1 control byte per distinct (chain, body):
//!   10.3..20.6;
//! - chain tree: 4 bytes per slot, leaves 1/2..1 full (full when built by
//!   appends, as a model rebuilt from the kernel is): 4..8, plus < 1 for nodes;
//!
//! total 69..99 bytes; jump rules add a `referrers` entry (5..11 bytes).
//! Spare capacity of the slab `Vec` (up to 2x while growing) is not counted.
//! `model_overhead_bytes` measures it on a live table.

pub(crate) mod hash;
mod ids;
mod index;
mod staged;
#[cfg(test)]
mod tests;
mod undo;

use std::mem::size_of;

use crate::seqtree::{SeqTree, NIL};
use crate::{ChainId, Counters, Error, Family, Policy, RuleBody, RuleId, TableKind};
use hash::{spec_key, FxMap, FxSet};
use ids::IdIndex;
pub use staged::Staging;
use undo::Op;
pub use undo::{Savepoint, Undo};

/// One iptables table (e.g. ip filter).
#[derive(Clone, Debug)]
pub struct Table<R: RuleBody> {
    family: Family,
    kind: TableKind,
    /// Indexed by `ChainId`; deleted chains leave `None` so ids are not reused.
    chains: Vec<Option<Chain>>,
    names: FxMap<Box<str>, ChainId>,
    rules: Vec<Option<Rule<R>>>,
    free: Vec<u32>,
    ids: IdIndex,
    spec: FxMap<u32, u32>,
    /// Greater than every live rule id.
    next_id: u64,
    undo: Option<Undo<R>>,
}

#[derive(Clone, Debug)]
struct Rule<R> {
    body: R,
    counters: Counters,
    id: RuleId,
    chain: u32,
    /// The `SeqTree` leaf of the chain that holds this slot.
    leaf: u32,
    /// Next slot with the same spec key, or `NIL`.
    next: u32,
    /// `spec_key(chain, body)`.
    key: u32,
}

#[derive(Clone, Debug)]
struct Chain {
    name: Box<str>,
    rules: SeqTree,
    /// Policy and policy counters; `None` for user chains.
    builtin: Option<(Policy, Counters)>,
    /// Slots of rules (in any chain) whose jump target is this chain.
    referrers: FxSet<u32>,
    /// Target chain id -> number of this chain's rules jumping there.
    jumps: FxMap<u32, u32>,
}

impl Chain {
    fn new(name: Box<str>, builtin: Option<(Policy, Counters)>) -> Self {
        Chain {
            name,
            rules: SeqTree::new(),
            builtin,
            referrers: FxSet::default(),
            jumps: FxMap::default(),
        }
    }
}

/// Read-only view of a chain.
#[derive(Clone, Copy, Debug)]
pub struct ChainView<'a> {
    pub id: ChainId,
    pub name: &'a str,
    /// `Some` for built-in chains.
    pub policy: Option<Policy>,
    /// Policy counters of a built-in chain (zero for user chains).
    pub counters: Counters,
    /// Number of rules (in any chain of this table) that jump/goto this chain.
    pub references: u32,
    /// Number of rules in this chain.
    pub len: usize,
}

/// Read-only view of a rule.
#[derive(Clone, Copy, Debug)]
pub struct RuleView<'a, R> {
    pub id: RuleId,
    pub body: &'a R,
    pub counters: Counters,
}

fn view<R>(r: &Rule<R>) -> RuleView<'_, R> {
    RuleView {
        id: r.id,
        body: &r.body,
        counters: r.counters,
    }
}

impl<R: RuleBody> Table<R> {
    /// An empty table with its built-in chains (policy ACCEPT, zero counters).
    pub fn new(family: Family, kind: TableKind) -> Self {
        let mut t = Table {
            family,
            kind,
            chains: Vec::new(),
            names: FxMap::default(),
            rules: Vec::new(),
            free: Vec::new(),
            ids: IdIndex::default(),
            spec: FxMap::default(),
            next_id: 1,
            undo: None,
        };
        for &name in kind.builtin_chains() {
            let id = ChainId(t.chains.len() as u32);
            t.chains.push(Some(Chain::new(
                name.into(),
                Some((Policy::Accept, Counters::default())),
            )));
            t.names.insert(name.into(), id);
        }
        t
    }

    pub fn family(&self) -> Family {
        self.family
    }

    pub fn kind(&self) -> TableKind {
        self.kind
    }

    // ----- internal accessors -------------------------------------------

    fn cid(&self, name: &str) -> Result<u32, Error> {
        self.names.get(name).map(|c| c.0).ok_or(Error::NoSuchChain)
    }

    fn ch(&self, cid: u32) -> &Chain {
        self.chains[cid as usize].as_ref().expect("live chain")
    }

    fn ch_mut(&mut self, cid: u32) -> &mut Chain {
        self.chains[cid as usize].as_mut().expect("live chain")
    }

    fn rec(&self, slot: u32) -> &Rule<R> {
        self.rules[slot as usize].as_ref().expect("live rule")
    }

    fn rec_mut(&mut self, slot: u32) -> &mut Rule<R> {
        self.rules[slot as usize].as_mut().expect("live rule")
    }

    fn chain_view(&self, cid: u32) -> ChainView<'_> {
        let c = self.ch(cid);
        ChainView {
            id: ChainId(cid),
            name: &c.name,
            policy: c.builtin.map(|b| b.0),
            counters: c.builtin.map(|b| b.1).unwrap_or_default(),
            references: c.referrers.len() as u32,
            len: c.rules.len(),
        }
    }

    fn record(&mut self, op: impl FnOnce() -> Op<R>) {
        if let Some(u) = &mut self.undo {
            u.ops.push(op());
        }
    }

    fn recording(&self) -> bool {
        self.undo.is_some()
    }

    /// 0-based index from a 1-based `pos` in `1..=max`.
    fn index(pos: usize, max: usize) -> Result<usize, Error> {
        if pos == 0 || pos > max {
            Err(Error::IndexOutOfRange)
        } else {
            Ok(pos - 1)
        }
    }

    // ----- chains ---------------------------------------------------------

    /// O(1).
    pub fn chain(&self, name: &str) -> Option<ChainView<'_>> {
        self.cid(name).ok().map(|c| self.chain_view(c))
    }

    pub fn chain_by_id(&self, id: ChainId) -> Option<ChainView<'_>> {
        match self.chains.get(id.0 as usize) {
            Some(Some(_)) => Some(self.chain_view(id.0)),
            _ => None,
        }
    }

    /// Built-ins in `builtin_chains()` order, then user chains sorted by name
    /// (byte order). O(C log C); O(C) when the chains were made in name
    /// order but a few.
    pub fn chains(&self) -> Vec<ChainView<'_>> {
        let mut builtin = Vec::new();
        let mut user = Vec::new();
        for (i, c) in self.chains.iter().enumerate() {
            match c {
                Some(c) if c.builtin.is_some() => builtin.push(self.chain_view(i as u32)),
                Some(_) => user.push(self.chain_view(i as u32)),
                None => {}
            }
        }
        // Stable (driftsort): it merges the sorted runs the slab usually
        // holds (chains read in name order, then a few made since) in
        // O(C) instead of sorting from scratch.
        user.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        builtin.extend(user);
        builtin
    }

    pub fn is_builtin(&self, name: &str) -> bool {
        self.cid(name).is_ok_and(|c| self.ch(c).builtin.is_some())
    }

    /// `-N`. `ChainExists` if a chain (user or built-in) has that name.
    pub fn new_chain(&mut self, name: &str) -> Result<ChainId, Error> {
        if self.names.contains_key(name) {
            return Err(Error::ChainExists);
        }
        Ok(self.push_chain(name))
    }

    /// Chain `name`, created empty when absent (`-N` that does not mind an
    /// existing chain). One name lookup when it exists.
    pub fn ensure_chain(&mut self, name: &str) -> ChainId {
        match self.names.get(name) {
            Some(&id) => id,
            None => self.push_chain(name),
        }
    }

    /// A new user chain `name` (absent: the caller checked).
    fn push_chain(&mut self, name: &str) -> ChainId {
        let id = ChainId(u32::try_from(self.chains.len()).expect("chain ids exhausted"));
        self.chains.push(Some(Chain::new(name.into(), None)));
        self.names.insert(name.into(), id);
        self.record(|| Op::NewChain(id.0));
        id
    }

    /// Errors in iptables' order: `NoSuchChain`, `BuiltinChain`, `ChainInUse`,
    /// `ChainNotEmpty`.
    fn check_deletable(&self, cid: u32) -> Result<(), Error> {
        let c = self.ch(cid);
        if c.builtin.is_some() {
            Err(Error::BuiltinChain)
        } else if !c.referrers.is_empty() {
            Err(Error::ChainInUse)
        } else if c.rules.len() > 0 {
            Err(Error::ChainNotEmpty)
        } else {
            Ok(())
        }
    }

    fn raw_delete_chain(&mut self, cid: u32) {
        let c = self.chains[cid as usize].take().expect("live chain");
        self.names.remove(&c.name);
        self.record(|| Op::DeleteChain {
            id: cid,
            name: c.name,
        });
    }

    /// `-X name`. O(1).
    pub fn delete_chain(&mut self, name: &str) -> Result<(), Error> {
        let cid = self.cid(name)?;
        self.check_deletable(cid)?;
        self.raw_delete_chain(cid);
        Ok(())
    }

    /// `-X` without a name: every user chain, atomically. Chains are checked in
    /// name order as iptables deletes them, each for `ChainInUse` then
    /// `ChainNotEmpty`; the first failure is returned and nothing is deleted.
    /// O(C log C).
    pub fn delete_user_chains(&mut self) -> Result<(), Error> {
        let user: Vec<u32> = self
            .chains()
            .iter()
            .filter(|c| c.policy.is_none())
            .map(|c| c.id.0)
            .collect();
        for &cid in &user {
            self.check_deletable(cid)?;
        }
        for cid in user {
            self.raw_delete_chain(cid);
        }
        Ok(())
    }

    /// `-E old new`. Rules jumping to `old` are retargeted (and rehashed in the
    /// spec index); the chain keeps its id, rules and references.
    /// O(references).
    pub fn rename_chain(&mut self, old: &str, new: &str) -> Result<(), Error> {
        let cid = self.cid(old)?;
        if self.ch(cid).builtin.is_some() {
            return Err(Error::BuiltinChain);
        }
        if self.names.contains_key(new) {
            return Err(Error::ChainExists);
        }
        let old_name = self.raw_rename(cid, new);
        self.record(|| Op::Rename {
            id: cid,
            old: old_name,
        });
        Ok(())
    }

    /// Rename without checks; returns the previous name.
    fn raw_rename(&mut self, cid: u32, new: &str) -> Box<str> {
        let old = std::mem::replace(&mut self.ch_mut(cid).name, new.into());
        self.names.remove(&old);
        self.names.insert(new.into(), ChainId(cid));
        let referrers: Vec<u32> = self.ch(cid).referrers.iter().copied().collect();
        for slot in referrers {
            self.unlink_spec(slot);
            let r = self.rec_mut(slot);
            r.body.retarget(new);
            r.key = spec_key(r.chain, &r.body);
            self.link_spec(slot);
        }
        old
    }

    /// `-P`. `BuiltinChain` for a user chain. `counters`, if given, replace
    /// the policy counters.
    pub fn set_policy(
        &mut self,
        chain: &str,
        policy: Policy,
        counters: Option<Counters>,
    ) -> Result<(), Error> {
        let cid = self.cid(chain)?;
        let (old_p, old_c) = self.ch(cid).builtin.ok_or(Error::BuiltinChain)?;
        self.record(|| Op::ChainState {
            id: cid,
            policy: old_p,
            counters: old_c,
        });
        self.ch_mut(cid).builtin = Some((policy, counters.unwrap_or(old_c)));
        Ok(())
    }

    /// Policy counters of a built-in chain; `BuiltinChain` for a user chain
    /// (user chains have no counters).
    pub fn set_chain_counters(&mut self, chain: &str, c: Counters) -> Result<(), Error> {
        let cid = self.cid(chain)?;
        let (p, old_c) = self.ch(cid).builtin.ok_or(Error::BuiltinChain)?;
        self.record(|| Op::ChainState {
            id: cid,
            policy: p,
            counters: old_c,
        });
        self.ch_mut(cid).builtin = Some((p, c));
        Ok(())
    }

    // ----- rules ----------------------------------------------------------

    /// `-A`. O(log n).
    pub fn append(&mut self, chain: &str, body: R, counters: Counters) -> Result<RuleId, Error> {
        let cid = self.cid(chain)?;
        let target = self.check_jump(cid, &body)?;
        let id = self.alloc_id();
        let at = self.ch(cid).rules.len();
        self.raw_insert(cid, at, id, body, counters, target);
        self.record(|| Op::Insert(id));
        Ok(id)
    }

    /// Append with an id chosen by the caller (a model rebuilt from the
    /// kernel). The id allocator is kept above every id given. If `id` is 0
    /// or already used in this table, a fresh id is allocated instead; the id
    /// actually used is returned.
    pub fn append_with_id(
        &mut self,
        chain: &str,
        id: RuleId,
        body: R,
        counters: Counters,
    ) -> Result<RuleId, Error> {
        let cid = self.cid(chain)?;
        let target = self.check_jump(cid, &body)?;
        let id = self.take_id(id);
        let at = self.ch(cid).rules.len();
        self.raw_insert(cid, at, id, body, counters, target);
        self.record(|| Op::Insert(id));
        Ok(id)
    }

    /// `-I chain pos`, `pos` in `1..=len+1`. O(log n).
    pub fn insert(
        &mut self,
        chain: &str,
        pos: usize,
        body: R,
        counters: Counters,
    ) -> Result<RuleId, Error> {
        let cid = self.cid(chain)?;
        let at = Self::index(pos, self.ch(cid).rules.len() + 1)?;
        let target = self.check_jump(cid, &body)?;
        let id = self.alloc_id();
        self.raw_insert(cid, at, id, body, counters, target);
        self.record(|| Op::Insert(id));
        Ok(id)
    }

    /// `-R chain pos`, `pos` in `1..=len`. The new rule keeps nothing of the
    /// old one (new id, given counters). O(log n).
    pub fn replace(
        &mut self,
        chain: &str,
        pos: usize,
        body: R,
        counters: Counters,
    ) -> Result<RuleId, Error> {
        let cid = self.cid(chain)?;
        let at = Self::index(pos, self.ch(cid).rules.len())?;
        // The old rule's own edge (out of `cid`) cannot lie on a path from the
        // new target back to `cid`, so checking before removing it is exact.
        let target = self.check_jump(cid, &body)?;
        let id = self.alloc_id();
        let old = self.raw_replace(cid, at, id, body, counters, target);
        self.record(|| Op::Remove {
            chain: cid,
            at,
            id: old.id,
            body: Box::new(old.body),
            counters: old.counters,
        });
        self.record(|| Op::Insert(id));
        Ok(id)
    }

    /// Give the rule with id `from` the unused id `to` (position, body and
    /// counters unchanged): a rule the kernel keeps across a rewrite of its
    /// chain keeps the id the kernel knows it by. `NoSuchRule` if `from`
    /// is not live; `IndexOutOfRange` if `to` is 0 or already used (the
    /// table is unchanged then). O(1).
    pub fn set_rule_id(&mut self, from: RuleId, to: RuleId) -> Result<(), Error> {
        let slot = self.ids.get(from).ok_or(Error::NoSuchRule)?;
        if to.0 == 0 || self.ids.contains(to) {
            return Err(Error::IndexOutOfRange);
        }
        self.raw_set_id(slot, from, to);
        self.record(|| Op::SetId { from, to });
        Ok(())
    }

    fn raw_set_id(&mut self, slot: u32, from: RuleId, to: RuleId) {
        self.ids.remove(from);
        self.ids.insert(to, slot);
        self.rec_mut(slot).id = to;
        self.next_id = self.next_id.max(to.0.saturating_add(1));
    }

    fn remove_recorded(&mut self, cid: u32, at: usize) -> RuleId {
        let r = self.raw_remove(cid, at);
        let id = r.id;
        self.record(|| Op::Remove {
            chain: cid,
            at,
            id,
            body: Box::new(r.body),
            counters: r.counters,
        });
        id
    }

    /// `-D chain pos`. O(log n).
    pub fn delete_at(&mut self, chain: &str, pos: usize) -> Result<RuleId, Error> {
        let cid = self.cid(chain)?;
        let at = Self::index(pos, self.ch(cid).rules.len())?;
        Ok(self.remove_recorded(cid, at))
    }

    /// `-D chain spec`: deletes the first (lowest position) equal rule.
    /// O(k log n), k = rules with the same spec key (usually 1).
    pub fn delete_spec(&mut self, chain: &str, body: &R) -> Result<RuleId, Error> {
        let cid = self.cid(chain)?;
        let (at, _) = self.find_first(cid, body).ok_or(Error::NoSuchRule)?;
        Ok(self.remove_recorded(cid, at))
    }

    /// `-C`: whether an equal rule exists. Err only for `NoSuchChain`. O(k).
    pub fn check(&self, chain: &str, body: &R) -> Result<bool, Error> {
        let cid = self.cid(chain)?;
        let mut slot = self.spec.get(&spec_key(cid, body)).copied().unwrap_or(NIL);
        while slot != NIL {
            let r = self.rec(slot);
            if r.chain == cid && r.body == *body {
                return Ok(true);
            }
            slot = r.next;
        }
        Ok(false)
    }

    /// 1-based position and id of the first rule equal to `body`.
    pub fn find_spec(&self, chain: &str, body: &R) -> Result<Option<(usize, RuleId)>, Error> {
        let cid = self.cid(chain)?;
        Ok(self
            .find_first(cid, body)
            .map(|(at, slot)| (at + 1, self.rec(slot).id)))
    }

    /// The rule at 1-based `pos`. O(log n).
    pub fn rule_at(&self, chain: &str, pos: usize) -> Result<RuleView<'_, R>, Error> {
        let cid = self.cid(chain)?;
        let tree = &self.ch(cid).rules;
        let at = Self::index(pos, tree.len())?;
        Ok(view(self.rec(tree.get(at))))
    }

    /// The chain's rules in order; O(1) amortised per step.
    pub fn rules<'a>(
        &'a self,
        chain: &str,
    ) -> Result<impl Iterator<Item = RuleView<'a, R>> + 'a, Error> {
        let cid = self.cid(chain)?;
        let rules = &self.rules;
        Ok(self
            .ch(cid)
            .rules
            .iter()
            .map(move |s| view(rules[s as usize].as_ref().expect("live rule"))))
    }

    /// The rules of the chain `c` views (a view of this table), in order,
    /// without a lookup by name: a pass over every chain's rules (a save
    /// of 100k chains) pays no hash probe per chain. O(1) to start.
    pub fn rules_in<'a>(&'a self, c: &ChainView<'_>) -> impl Iterator<Item = RuleView<'a, R>> + 'a {
        let rules = &self.rules;
        self.chains
            .get(c.id.0 as usize)
            .and_then(Option::as_ref)
            .into_iter()
            .flat_map(|ch| ch.rules.iter())
            .map(move |s| view(rules[s as usize].as_ref().expect("live rule")))
    }

    /// The body of every rule of the table, in no particular order: for
    /// scans that only look at bodies (no chain sort, no lookups by name).
    /// O(rule slots).
    pub fn bodies(&self) -> impl Iterator<Item = &R> + '_ {
        self.rules.iter().flatten().map(|r| &r.body)
    }

    /// The id of every rule of the table, in no particular order. O(rule
    /// slots).
    pub fn rule_ids(&self) -> impl Iterator<Item = RuleId> + '_ {
        self.rules.iter().flatten().map(|r| r.id)
    }

    /// Chain, 1-based position and view of the rule with this id. O(log n).
    pub fn rule_by_id(&self, id: RuleId) -> Option<(ChainId, usize, RuleView<'_, R>)> {
        let slot = self.ids.get(id)?;
        let r = self.rec(slot);
        Some((ChainId(r.chain), self.position(slot) + 1, view(r)))
    }

    /// `-F chain`. O(rules in the chain).
    pub fn flush_chain(&mut self, chain: &str) -> Result<(), Error> {
        let cid = self.cid(chain)?;
        self.flush_recorded(cid);
        Ok(())
    }

    fn flush_recorded(&mut self, cid: u32) {
        let rules = self.raw_flush(cid);
        if self.recording() && !rules.is_empty() {
            self.record(|| Op::Flush { chain: cid, rules });
        }
    }

    /// `-F` without a chain: every chain of the table. O(rules in the table).
    /// Every rule goes, so the rule slab, its indexes and each chain's rule
    /// tree and jump bookkeeping are moved out whole (into the undo entry,
    /// or dropped): O(chains), no rule is touched. A flush of 50 000
    /// one-rule chains spent more in per-rule index updates and moves than
    /// the kernel spends deleting them (BENCHMARKS.md §8.7).
    pub fn flush_all(&mut self) {
        if self.ids.len() == 0 {
            return;
        }
        let mut chains = Vec::new();
        for (cid, ch) in self.chains.iter_mut().enumerate() {
            let Some(ch) = ch else { continue };
            if ch.rules.len() == 0 && ch.referrers.is_empty() && ch.jumps.is_empty() {
                continue;
            }
            chains.push(undo::FlushedChain {
                chain: cid as u32,
                rules: std::mem::take(&mut ch.rules),
                referrers: std::mem::take(&mut ch.referrers),
                jumps: std::mem::take(&mut ch.jumps),
            });
        }
        let slab = undo::Slab {
            rules: std::mem::take(&mut self.rules),
            free: std::mem::take(&mut self.free),
            ids: std::mem::take(&mut self.ids),
            spec: std::mem::take(&mut self.spec),
        };
        self.record(|| Op::FlushAll {
            chains,
            slab: Box::new(slab),
        });
    }

    /// `-Z`: all chains (`None, None`), one chain (`Some, None`) or one rule
    /// (`Some, Some(pos)`). Zeroing a whole built-in chain, or the table, also
    /// zeroes policy counters. A position without a chain is
    /// `IndexOutOfRange`. O(rules zeroed).
    pub fn zero(&mut self, chain: Option<&str>, pos: Option<usize>) -> Result<(), Error> {
        let cids: Vec<u32> = match (chain, pos) {
            (None, Some(_)) => return Err(Error::IndexOutOfRange),
            (Some(name), Some(pos)) => {
                let cid = self.cid(name)?;
                let at = Self::index(pos, self.ch(cid).rules.len())?;
                let slot = self.ch(cid).rules.get(at);
                return self.set_slot_counters(slot, Counters::default());
            }
            (Some(name), None) => vec![self.cid(name)?],
            (None, None) => (0..self.chains.len() as u32)
                .filter(|&c| self.chains[c as usize].is_some())
                .collect(),
        };
        let zero = Counters::default();
        let mut old = Vec::new();
        for cid in cids {
            if let Some((p, c)) = self.ch(cid).builtin {
                if c != zero {
                    self.record(|| Op::ChainState {
                        id: cid,
                        policy: p,
                        counters: c,
                    });
                    self.ch_mut(cid).builtin = Some((p, zero));
                }
            }
            let slots: Vec<u32> = self.ch(cid).rules.iter().collect();
            for slot in slots {
                let r = self.rec_mut(slot);
                if r.counters != zero {
                    old.push((r.id, r.counters));
                    r.counters = zero;
                }
            }
        }
        if !old.is_empty() {
            self.record(|| Op::RuleCounters(old));
        }
        Ok(())
    }

    fn set_slot_counters(&mut self, slot: u32, c: Counters) -> Result<(), Error> {
        let r = self.rec_mut(slot);
        let (id, old) = (r.id, std::mem::replace(&mut r.counters, c));
        self.record(|| Op::RuleCounters(vec![(id, old)]));
        Ok(())
    }

    /// Counters of the rule at 1-based `pos`. O(log n).
    pub fn set_rule_counters(&mut self, chain: &str, pos: usize, c: Counters) -> Result<(), Error> {
        let cid = self.cid(chain)?;
        let at = Self::index(pos, self.ch(cid).rules.len())?;
        let slot = self.ch(cid).rules.get(at);
        self.set_slot_counters(slot, c)
    }

    /// Rules in all chains. O(1).
    /// Hand out ids from at least `next` on (never lowers the allocator).
    /// A caller that holds only part of a table (the rest lives in the
    /// kernel) starts its ids far from any the table may already use.
    pub fn set_next_id(&mut self, next: u64) {
        self.next_id = self.next_id.max(next);
    }

    /// Make room for `additional` more rules without rehashing or moving
    /// (a restore of a known size calls this once). O(current size) at most.
    pub fn reserve(&mut self, additional: usize) {
        self.rules.reserve(additional);
        self.ids.reserve(additional);
        self.spec.reserve(additional);
    }

    /// Give back spare capacity of the rule slab and indexes (after a
    /// [`Table::reserve`] by an upper bound). O(rules).
    pub fn shrink_to_fit(&mut self) {
        self.rules.shrink_to_fit();
        self.ids.shrink_to_fit();
        self.spec.shrink_to_fit();
    }

    pub fn rule_count(&self) -> usize {
        self.ids.len()
    }

    /// Approximate heap and inline bytes the model spends beyond the rule
    /// bodies' own `size_of::<R>()` (and beyond anything the bodies allocate):
    /// rule records, indexes, trees, chains. Spare capacity of the rule slab is
    /// not counted. For memory accounting and tests; O(chains).
    pub fn model_overhead_bytes(&self) -> usize {
        let slab = self.rules.len() * (size_of::<Option<Rule<R>>>() - size_of::<R>())
            + self.free.capacity() * 4;
        let mut chains = self.chains.capacity() * size_of::<Option<Chain>>();
        for c in self.chains.iter().flatten() {
            chains += c.name.len()
                + c.rules.heap_bytes()
                + map_bytes(c.referrers.capacity(), 4)
                + map_bytes(c.jumps.capacity(), 8);
        }
        let names = map_bytes(self.names.capacity(), size_of::<(Box<str>, ChainId)>())
            + self.names.keys().map(|k| k.len()).sum::<usize>();
        slab + chains
            + names
            + self.ids.heap_bytes(map_bytes)
            + map_bytes(self.spec.capacity(), size_of::<(u32, u32)>())
    }
}

/// Bytes of a std (hashbrown) table with usable `capacity` and `entry`-sized
/// buckets: buckets hold 8/7 of the capacity (exactly `capacity + 1` when
/// small), each with one control byte, plus one 16-byte group of trailing
/// control bytes.
fn map_bytes(capacity: usize, entry: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 {
        capacity + 1
    } else {
        capacity / 7 * 8
    };
    buckets * (entry + 1) + 16
}

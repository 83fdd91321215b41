//! Chains a `--noflush` restore rewrites: `:CHAIN` of an existing user
//! chain flushes it and the lines that follow add its rules again (what
//! kube-proxy sends on every sync). Sending that as a flush and re-adds
//! costs the kernel the whole chain even when nothing changed, so the
//! flush is deferred: first in place (`in_place`: the model keeps the old
//! rules while the lines re-add them in order), then, from the first line
//! that does not, the model is flushed and refilled as usual, and when
//! the chain is settled (before any command that could observe the kernel
//! chain, or at the end of the restore, [`Planner::finish`]) the rules the
//! input gives are compared with the rules the kernel holds and only the
//! difference is sent, in the same batch.
//!
//! Contract — the visible result is that of the flush and re-add: the
//! chain holds exactly the input's rules in the input's order; every rule
//! of it counts from the input's `[p:b]` (with `--counters`) or zero. A
//! kept rule whose kernel counters are not what they must be is replaced
//! by itself (one NEWRULE replace; nf_tables has no in-transaction counter
//! reset: GETRULE_RESET is a get outside the batch, and cannot set a
//! value) — a kept run member's element is deleted and added again. A
//! kept rule keeps its kernel handle and logical rule id (the model takes
//! the kernel's id back, `Table::set_rule_id`). A refusal names the input
//! line of the rule refused (deletes carry the `:CHAIN` line), as before.
//!
//! A chain the restore creates is deferred the same way, with nothing
//! old: its rules are written when it settles, whole, compiled into runs
//! as a replaced table's chain is; new rules among kept ones are compiled
//! too when a stretch of them holds a run.
//!
//! Deferred only when the model holds every kernel rule of the chain
//! ([`super::KernelView::knows_rules`]) each with a kernel location; a
//! compiled run is kept only when all its members are kept, contiguous
//! and in order, else it is dropped and its rules written again. With
//! nothing to keep, the chain is flushed and written as before (runs
//! compiled from a whole model).
//!
//! Cost: O(old + new) when the rewrite is equal up to a few edits (common
//! prefix and suffix, then an O((N+M)·D) diff, see `super::diff`), plus
//! one message per rule added, deleted or reset.
//!
//! Lines are not parsed when they repeat what the kernel holds: the read
//! keeps each rule's canonical text (`KernelView::texts`; a whole model
//! prints its old rules' texts instead), and a line `-A CHAIN TEXT` of a
//! deferred chain whose TEXT is exactly an old rule's is that old rule
//! ([`Planner::old_rule_by_text`], through
//! `iptables::exec::Apply::known_rule`). A command that can change bodies
//! in place (a rename retargets jumps under the same ids) drops the read
//! texts (printed ones follow the bodies).

use super::diff;

mod in_place;
mod lazy;
use super::{Loc, Planner};
use in_place::InPlace;
use iptables::exec::execute_owned;
use iptables::parse::{Command, Parsed};
use iptables::{Error, Rule};
use nft::batch::Placement;
use nft::Tag;
use ruleset::hash::FxMap;
use ruleset::{Counters, Family, RuleId, Ruleset, Table, TableKind};
use std::collections::HashMap;

/// A chain whose flush is deferred.
#[derive(Debug)]
pub(crate) struct Deferred {
    /// The chain's rules as the kernel holds them, in order, before the
    /// flush (ids, bodies, counters as read).
    old: Vec<(RuleId, Rule, Counters)>,
    /// Input line of the flush.
    tag: Tag,
    /// Input line of each rule added since the flush.
    lines: FxMap<RuleId, Tag>,
    /// Index in `old` of each old rule, built on first use (see
    /// [`Planner::old_rule_by_text`]).
    by_id: Option<FxMap<RuleId, usize>>,
    /// Index in `old` by canonical text, printed on first use when the
    /// read kept no texts (a whole model: the daemon's).
    by_text: Option<FxMap<String, usize>>,
    /// Old rules whose body an input line took by its text (moved out of
    /// `old`, which then holds `Rule::default()` there), and the model id
    /// of the rule each became: that rule *is* the old one, so the rewrite
    /// matches the two without comparing bodies, and no body is cloned.
    taken: Vec<bool>,
    from_text: FxMap<RuleId, usize>,
    /// Set while the flush is not applied, even to the model (see
    /// `in_place`); `old` is then empty.
    in_place: Option<InPlace>,
}

impl Deferred {
    fn new(old: Vec<(RuleId, Rule, Counters)>, tag: Tag) -> Deferred {
        Deferred {
            taken: vec![false; old.len()],
            old,
            tag,
            lines: FxMap::default(),
            by_id: None,
            by_text: None,
            from_text: FxMap::default(),
            in_place: None,
        }
    }
}

/// A rule as the rewrite's diff compares it: by body, or, for a body an
/// input line took from old rule `i`, by that index (equal only to
/// itself: a parsed line equal to a taken old rule is then not matched
/// with it — a duplicate line costs one delete and add, never a wrong
/// result).
#[derive(PartialEq, Eq, Hash)]
enum Body<'a> {
    Rule(&'a Rule),
    Old(usize),
}

/// The deferred chains of one batch, in the order they were flushed.
#[derive(Debug, Default)]
pub(crate) struct Rewrites {
    chains: FxMap<(Family, TableKind, String), Deferred>,
    order: Vec<(Family, TableKind, String)>,
    /// The old rule whose body [`Planner::old_rule_by_text`] just gave
    /// out (index in its chain's `old`): the command applied next is the
    /// append of that body (see `iptables::exec::Apply::known_rule`).
    just_taken: Option<usize>,
    /// How many chains were deferred in place (`in_place`) in this batch,
    /// an upper bound of those still in place: 0 skips every check.
    in_place: usize,
}

/// Where an old rule is in the kernel.
#[derive(Clone, Copy)]
enum Old {
    Plain(Loc),
    Member(u32),
}

impl Planner<'_> {
    /// One command of a `--noflush` restore (input line `line` is the
    /// batch's tag): flushes of chains the model knows whole are deferred,
    /// appends to them go to the model only; any other write first settles
    /// every deferred chain of the table.
    pub(crate) fn restore_command(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
    ) -> Result<(), Error> {
        // Only the command right after a `known_rule` is its append.
        let taken = self.p.rewrites.just_taken.take();
        if self.p.is_fresh(self.family, kind) {
            return self.run(kind, t, p, &mut String::new());
        }
        self.repair_censuses(kind);
        if !matches!(
            p.command,
            Command::Append(_)
                | Command::Flush(_)
                | Command::NewChain(_)
                | Command::Policy(..)
                | Command::Check(_)
                | Command::List { .. }
                | Command::ListRules { .. }
        ) {
            // A rename rewrites jump bodies in place (same ids): the texts
            // read no longer name them safely; nor after any other edit.
            self.view.texts.remove(&kind);
        }
        let key = |c: &str| (self.family, kind, c.to_string());
        match &p.command {
            Command::Flush(Some(c)) if self.p.rewrites.chains.contains_key(&key(c)) => {
                let k = key(c);
                if let Some(d) = self.p.rewrites.chains.get_mut(&k) {
                    if let Some(ip) = &mut d.in_place {
                        ip.restart();
                        return Ok(());
                    }
                    d.lines.clear();
                }
                execute_owned(t, p, &mut String::new())?;
                return Ok(());
            }
            Command::Flush(Some(c)) if self.can_defer(kind, t, c) => {
                // In place: the model keeps the old rules (see `in_place`).
                let k = key(c);
                let ids: Vec<RuleId> = t
                    .rules(c)
                    .map_err(|e| Error::other(e.to_string()))?
                    .map(|r| r.id)
                    .collect();
                self.p.tails.remove(&k);
                let mut d = Deferred::new(Vec::new(), self.p.tag);
                d.in_place = Some(InPlace::new(ids));
                self.p.rewrites.in_place += 1;
                self.p.rewrites.order.push(k.clone());
                self.p.rewrites.chains.insert(k, d);
                return Ok(());
            }
            Command::Append(c) if self.p.rewrites.chains.contains_key(&key(c)) => {
                let k = key(c);
                let chain = c.clone();
                if self.keep_parsed(kind, t, &chain, &p) {
                    return Ok(());
                }
                self.flush_in_place(kind, t, &chain)?;
                let before = t.chain(&chain).map_or(0, |c| c.len);
                self.loop_retry(kind, t, p, |_, _, t, p| {
                    execute_owned(t, p, &mut String::new())
                })?;
                let after = t.chain(&chain).map_or(0, |c| c.len);
                let tag = self.p.tag;
                if let Some(d) = self.p.rewrites.chains.get_mut(&k) {
                    for pos in before + 1..=after {
                        if let Ok(r) = t.rule_at(&chain, pos) {
                            d.lines.insert(r.id, tag);
                            if let (Some(i), true) = (taken, after == before + 1) {
                                d.from_text.insert(r.id, i);
                            }
                        }
                    }
                }
                return Ok(());
            }
            Command::NewChain(c) if self.opts.compile.is_some() && !self.opts.plain_appends => {
                // A chain created here is written at its settling too (as a
                // rewrite of nothing): its rules are then known whole, so
                // they compile into runs as a replaced table's do
                // (kube-proxy's first sync declares every chain and writes
                // KUBE-SERVICES as one verdict map).
                let k = key(c);
                self.run(kind, t, p, &mut String::new())?;
                if !self.p.rewrites.chains.contains_key(&k) {
                    let d = Deferred::new(Vec::new(), self.p.tag);
                    self.p.rewrites.order.push(k.clone());
                    self.p.rewrites.chains.insert(k, d);
                }
                return Ok(());
            }
            Command::Check(c) if self.p.rewrites.in_place > 0 => self.flush_in_place(kind, t, c)?,
            Command::List {
                chain, zero: false, ..
            }
            | Command::ListRules {
                chain, zero: false, ..
            } if self.p.rewrites.in_place > 0 => match chain {
                Some(c) => self.flush_in_place(kind, t, c)?,
                None => self.flush_all_in_place(kind, t)?,
            },
            Command::Append(_)
            | Command::NewChain(_)
            | Command::Policy(..)
            | Command::Check(_)
            | Command::List { zero: false, .. }
            | Command::ListRules { zero: false, .. } => {}
            _ => self.settle_rewrites(kind, t)?,
        }
        self.loop_retry(kind, t, p, |s, kind, t, p| {
            s.run(kind, t, p, &mut String::new())
        })
    }

    /// Whether a command's rules jump or go to a chain (a jump can be
    /// refused as closing a loop).
    fn jumps(p: &Parsed) -> bool {
        use ruleset::RuleBody;
        p.rules.iter().any(|r| r.jump_target().is_some())
    }

    /// `apply(p)`; when refused while in-place chains of the table hold
    /// old rules that could close the loop a jump of `p` was refused for,
    /// again after their flushes are applied (the refusal then is the
    /// input's). A clone of `p` only for a jumping command while some chain
    /// is in place.
    fn loop_retry(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        apply: fn(&mut Self, TableKind, &mut Table<Rule>, Parsed) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if self.p.rewrites.in_place == 0 || !Self::jumps(&p) {
            return apply(self, kind, t, p);
        }
        let retry = p.clone();
        match apply(self, kind, t, p) {
            Err(_) if self.has_in_place(kind) => {
                self.flush_all_in_place(kind, t)?;
                apply(self, kind, t, retry)
            }
            r => r,
        }
    }

    /// The body of the rule that chain `chain` of table `kind` held before
    /// its deferred flush and whose canonical text is `text` — what the
    /// restore line `-A chain text` parses to, without parsing it (a
    /// kube-proxy sync rewrites thousands of unchanged rules). `None` when
    /// the chain is not being rewritten or held no such rule. O(1) after an
    /// O(old) index on the chain's first lookup.
    pub(crate) fn old_rule_by_text(
        &mut self,
        kind: TableKind,
        chain: &str,
        text: &str,
    ) -> Option<Rule> {
        if self.p.rewrites.chains.is_empty() {
            return None;
        }
        let read = self.view.rule_by_text(kind, chain, text);
        let (family, whole) = (self.family, self.opts.whole_model);
        if read.is_none() && !whole {
            return None;
        }
        let key = (family, kind, chain.to_string());
        let d = self.p.rewrites.chains.get_mut(&key)?;
        let old = &d.old;
        let at = match read {
            Some(id) => *d
                .by_id
                .get_or_insert_with(|| old.iter().enumerate().map(|(i, r)| (r.0, i)).collect())
                .get(&id)?,
            // A whole model kept no texts from its read: the old rules'
            // texts are printed once per rewritten chain (O(old), cheaper
            // than parsing the lines).
            None if whole => *d
                .by_text
                .get_or_insert_with(|| {
                    old.iter()
                        .enumerate()
                        .map(|(i, r)| {
                            (
                                super::emit::rule_text(family, &r.1)
                                    .0
                                    .trim_start()
                                    .to_string(),
                                i,
                            )
                        })
                        .collect()
                })
                .get(text)?,
            None => return None,
        };
        // Each old body is given out once (moved, not cloned): a second
        // line of the same text is parsed.
        if std::mem::replace(&mut d.taken[at], true) {
            return None;
        }
        let body = std::mem::take(&mut d.old[at].1);
        self.p.rewrites.just_taken = Some(at);
        Some(body)
    }

    /// Whether the flush of `chain` may be deferred: the model holds all
    /// of its kernel rules, each located (by handle, or as a run member).
    fn can_defer(&self, kind: TableKind, t: &Table<Rule>, chain: &str) -> bool {
        if !self.view.exists(kind)
            || t.is_builtin(chain)
            || !self.view.knows_rules(kind, chain, self.opts.whole_model)
        {
            return false;
        }
        let Ok(mut rules) = t.rules(chain) else {
            return false;
        };
        rules.all(|r| {
            self.view.run_of(kind, r.id).is_some()
                || matches!(self.view.loc(kind, r.id), Some(Loc::Handle(_)))
        })
    }

    /// Settle every deferred chain of table `kind` (model `t`).
    pub(crate) fn settle_rewrites(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
    ) -> Result<(), Error> {
        let family = self.family;
        let keys: Vec<_> = self
            .p
            .rewrites
            .order
            .iter()
            .filter(|(f, k, _)| *f == family && *k == kind)
            .cloned()
            .collect();
        self.p
            .rewrites
            .order
            .retain(|(f, k, _)| !(*f == family && *k == kind));
        let tag = self.p.tag;
        for key in keys {
            if let Some(d) = self.p.rewrites.chains.remove(&key) {
                self.rewrite(kind, t, &key.2, d)?;
            }
        }
        self.p.tag = tag;
        Ok(())
    }

    /// Settle every deferred chain of this family (end of the restore).
    pub(crate) fn settle_all_rewrites(&mut self, rs: &mut Ruleset<Rule>) -> Result<(), Error> {
        for kind in TableKind::ALL {
            self.settle_rewrites(kind, rs.table_mut(self.family, kind))?;
        }
        Ok(())
    }

    /// Send the difference between what the kernel holds of `chain` (`d`)
    /// and the model's rules of it.
    fn rewrite(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        chain: &str,
        mut d: Deferred,
    ) -> Result<(), Error> {
        if let Some(ip) = &d.in_place {
            let stale = self.opts.whole_model && !self.view.counters_are_fresh(kind, chain);
            let unchanged = !stale && {
                let model = t.rules(chain).map_err(|e| Error::other(e.to_string()))?;
                ip.unchanged(model.map(|r| r.counters))
            };
            if unchanged {
                return Ok(());
            }
            in_place::apply_flush(t, chain, &mut d)?;
        }
        let olds: Vec<Old> = d
            .old
            .iter()
            .map(|(id, _, _)| match self.view.run_of(kind, *id) {
                Some(ri) => Old::Member(ri),
                None => Old::Plain(self.view.loc(kind, *id).unwrap_or(Loc::Handle(0))),
            })
            .collect();
        // The daemon's model does not follow the kernel's counters unless
        // they were read for this plan.
        let stale_counters = self.opts.whole_model && !self.view.counters_are_fresh(kind, chain);
        let numgen = self.opts.compile.is_some_and(|o| o.numgen) && !self.opts.plain_appends;
        // Old rules read as stand-ins that no line took are compared by
        // body: parsed now (few, when the chain is mostly unchanged).
        for (i, (id, body, _)) in d.old.iter_mut().enumerate() {
            if !d.taken[i] {
                if let Some(text) = self.view.lazy_text(kind, *id) {
                    *body = self.parse_text(kind, chain, text)?;
                }
            }
        }
        // With numgen maps a group's length is read from the bodies: every
        // stand-in is parsed first.
        if numgen {
            let all = self.standins(kind, t, chain, &d)?;
            self.materialize(kind, t, chain, &d, all)?;
        }
        let (to_new, from_old, standins) = {
            let rules: Vec<(RuleId, &Rule, Counters)> = t
                .rules(chain)
                .map_err(|e| Error::other(e.to_string()))?
                .map(|r| (r.id, r.body, r.counters))
                .collect();
            // Bodies compared by reference (a line's body taken from an old
            // rule by its index): the common prefix and suffix (all of an
            // unchanged chain) cost one equality test per rule, no hashing.
            let ob: Vec<Body> = d
                .old
                .iter()
                .enumerate()
                .map(|(i, (_, r, _))| {
                    if d.taken[i] {
                        Body::Old(i)
                    } else {
                        Body::Rule(r)
                    }
                })
                .collect();
            let nb: Vec<Body> = rules
                .iter()
                .map(|(id, r, _)| match d.from_text.get(id) {
                    Some(&i) => Body::Old(i),
                    None => Body::Rule(r),
                })
                .collect();
            let mut to_new: Vec<Option<usize>> = vec![None; d.old.len()];
            for (i, j) in diff::common(&ob, &nb) {
                to_new[i] = Some(j);
            }
            self.unmatch_split_groups(&rules, &olds, &mut to_new);
            self.unmatch_broken_runs(&olds, &mut to_new);
            let mut from_old: Vec<Option<usize>> = vec![None; rules.len()];
            for (i, j) in to_new.iter().enumerate() {
                if let Some(j) = j {
                    from_old[*j] = Some(i);
                }
            }
            // Whether a stand-in's body is written (new, or its counters
            // reset) or read (the chain compiled whole).
            let standins = lazy::standins_of(self.view, kind, &rules, &d);
            let whole = to_new.iter().all(Option::is_none);
            let used = whole
                || standins.iter().any(|&(j, _, i)| match from_old[j] {
                    None => true,
                    Some(_) => stale_counters || d.old[i].2 != rules[j].2,
                });
            (to_new, from_old, if used { standins } else { Vec::new() })
        };
        self.materialize(kind, t, chain, &d, standins)?;
        let new: Vec<(RuleId, Rule, Counters)> = t
            .rules(chain)
            .map_err(|e| Error::other(e.to_string()))?
            .zip(&from_old)
            .map(|(r, i)| {
                // Bodies are cloned only where they are written: new rules,
                // kept ones whose counters are reset, and all with numgen
                // maps (a group's length is read from the bodies after it).
                // A kept rule that sends nothing gets an empty stand-in.
                let write = match i {
                    None => true,
                    Some(i) => numgen || stale_counters || d.old[*i].2 != r.counters,
                };
                let body = if write {
                    r.body.clone()
                } else {
                    Rule::default()
                };
                (r.id, body, r.counters)
            })
            .collect();
        if to_new.iter().all(Option::is_none) {
            return self.rewrite_whole(kind, t, chain, &d, &new);
        }
        // Deletes first (the `:CHAIN` line's): plain rules by handle, runs
        // not kept whole.
        self.p.tag = d.tag;
        let mut dropped: Vec<u32> = Vec::new();
        for (i, (id, _, _)) in d.old.iter().enumerate() {
            if to_new[i].is_some() {
                continue;
            }
            match olds[i] {
                Old::Plain(_) => self.del_rule(kind, chain, Some(*id)),
                Old::Member(ri) => {
                    self.forget_rule(kind, *id);
                    self.view.members.remove(&(kind, *id));
                    if !dropped.contains(&ri) {
                        dropped.push(ri);
                    }
                }
            }
        }
        for ri in dropped {
            self.drop_run(ri);
        }
        // Then the input's rules in order, each after the one before it;
        // a numgen group among the new ones as one run.
        let mut prev: Option<Loc> = None;
        let mut skip = 0;
        for (j, (id, body, c)) in new.iter().enumerate() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            self.p.tag = d.lines.get(id).copied().unwrap_or(d.tag);
            if from_old[j].is_none() {
                let at = match prev {
                    Some(l) => (Placement::Append, Some(l)),
                    None => (Placement::Insert, None),
                };
                if let Some(k) = self.new_numgen_at(kind, chain, &new, &from_old, j, at)? {
                    prev = self
                        .view
                        .runs
                        .last()
                        .and_then(|r| r.as_ref())
                        .map(|r| r.rule);
                    skip = k - 1;
                    continue;
                }
                if let Some(k) = self.new_runs_at(kind, chain, &new, &from_old, j, &d, &mut prev)? {
                    skip = k - 1;
                    continue;
                }
            }
            let Some(i) = from_old[j] else {
                let (placement, at) = match prev {
                    Some(l) => (Placement::Append, Some(l)),
                    None => (Placement::Insert, None),
                };
                self.new_rule(kind, chain, *id, body, *c, placement, at)?;
                prev = self.view.loc(kind, *id);
                continue;
            };
            let (kid, _, kc) = &d.old[i];
            t.set_rule_id(*id, *kid)
                .map_err(|e| Error::other(e.to_string()))?;
            let reset = stale_counters || kc != c;
            match olds[i] {
                Old::Plain(loc) => {
                    if reset {
                        self.new_rule(kind, chain, *kid, body, *c, Placement::Replace, Some(loc))?;
                    }
                    prev = self.view.loc(kind, *kid);
                }
                Old::Member(ri) => {
                    if reset {
                        self.zero_member(kind, *kid, body, *c);
                    }
                    prev = self.view.runs[ri as usize].as_ref().map(|r| r.rule);
                }
            }
        }
        Ok(())
    }

    /// When `new[j..]` starts a stretch of new rules (none kept from the
    /// kernel) long enough to hold a run: the stretch compiled as a
    /// replaced table's chain is (runs and plain rules), placed after
    /// `prev`, which ends at the stretch's last kernel object; its length.
    /// `None`, nothing done, when it holds no run (or runs are not
    /// compiled, or numgen maps are on: those take [`Self::new_numgen_at`]).
    /// So a KUBE-SERVICES chain that a sync changed becomes one verdict
    /// map again, instead of plain rules from then on.
    #[allow(clippy::too_many_arguments)]
    fn new_runs_at(
        &mut self,
        kind: TableKind,
        chain: &str,
        new: &[(RuleId, Rule, Counters)],
        from_old: &[Option<usize>],
        j: usize,
        d: &Deferred,
        prev: &mut Option<Loc>,
    ) -> Result<Option<usize>, Error> {
        let Some(o) = self.opts.compile else {
            return Ok(None);
        };
        if o.numgen || self.opts.plain_appends {
            return Ok(None);
        }
        let len = from_old[j..].iter().take_while(|x| x.is_none()).count();
        if len < o.min_len.max(2) {
            return Ok(None);
        }
        let refs: Vec<(RuleId, &Rule)> = new[j..j + len].iter().map(|(i, r, _)| (*i, r)).collect();
        let items = compile::runs::compile_chain(&refs, self.family, kind, chain, o)
            .map_err(|e| Error::param(e.to_string()))?;
        if !items
            .iter()
            .any(|i| matches!(i, compile::runs::Item::Run { .. }))
        {
            return Ok(None);
        }
        let members: HashMap<RuleId, (&Rule, Counters)> = new[j..j + len]
            .iter()
            .map(|(i, r, c)| (*i, (r, *c)))
            .collect();
        for item in items {
            let at = match *prev {
                Some(l) => (Placement::Append, Some(l)),
                None => (Placement::Insert, None),
            };
            match item {
                compile::runs::Item::Plain { id } => {
                    self.p.tag = d.lines.get(&id).copied().unwrap_or(d.tag);
                    let (r, c) = members[&id];
                    self.new_rule(kind, chain, id, r, c, at.0, at.1)?;
                    *prev = self.view.loc(kind, id);
                }
                compile::runs::Item::Run { lowered, set } => {
                    if let Some(first) = set.elems.first() {
                        self.p.tag = d.lines.get(&first.id).copied().unwrap_or(d.tag);
                    }
                    self.new_run_at(kind, chain, lowered, *set, &members, at)?;
                    *prev = self
                        .view
                        .runs
                        .last()
                        .and_then(|r| r.as_ref())
                        .map(|r| r.rule);
                }
            }
        }
        Ok(Some(len))
    }

    /// When `new[j..]` starts a numgen group (`compile::runs::numgen`) of
    /// rules none of which is kept: the group as one run placed at `at`
    /// (as `new_rule` places a rule); its length. `None`, nothing done,
    /// otherwise (or when runs are not compiled).
    fn new_numgen_at(
        &mut self,
        kind: TableKind,
        chain: &str,
        new: &[(RuleId, Rule, Counters)],
        from_old: &[Option<usize>],
        j: usize,
        at: (Placement, Option<Loc>),
    ) -> Result<Option<usize>, Error> {
        if !self.opts.compile.is_some_and(|o| o.numgen) || self.opts.plain_appends {
            return Ok(None);
        }
        if compile::runs::numgen::member_key(&new[j].1).is_none_or(|k| k == 0) {
            return Ok(None);
        }
        let refs: Vec<(RuleId, &Rule)> = new[j..].iter().map(|(i, r, _)| (*i, r)).collect();
        let Some(k) = compile::runs::numgen::group_len(&refs, 0) else {
            return Ok(None);
        };
        if from_old[j..j + k].iter().any(Option::is_some) {
            return Ok(None);
        }
        let items = compile::runs::compile_chain(
            &refs[..k],
            self.family,
            kind,
            chain,
            compile::runs::RunOpts {
                min_len: k,
                numgen: true,
            },
        )
        .map_err(|e| Error::param(e.to_string()))?;
        let Some(compile::runs::Item::Run { lowered, set }) = items.into_iter().next() else {
            return Ok(None);
        };
        let members: HashMap<RuleId, (&Rule, Counters)> = new[j..j + k]
            .iter()
            .map(|(i, r, c)| (*i, (r, *c)))
            .collect();
        self.new_run_at(kind, chain, lowered, *set, &members, at)?;
        Ok(Some(k))
    }

    /// A numgen group of the input (`compile::runs::numgen`) keeps old
    /// rules only when they are one old numgen run, whole: else none of
    /// its rules is kept, and the group is written as one run. O(new).
    fn unmatch_split_groups(
        &self,
        new: &[(RuleId, &Rule, Counters)],
        olds: &[Old],
        to_new: &mut [Option<usize>],
    ) {
        if !self.opts.compile.is_some_and(|o| o.numgen) || self.opts.plain_appends {
            return;
        }
        let mut from_old: Vec<Option<usize>> = vec![None; new.len()];
        for (i, j) in to_new.iter().enumerate() {
            if let Some(j) = j {
                from_old[*j] = Some(i);
            }
        }
        let refs: Vec<(RuleId, &Rule)> = new.iter().map(|(i, r, _)| (*i, *r)).collect();
        let mut j = 0;
        while j < new.len() {
            let Some(k) = compile::runs::numgen::group_len(&refs, j) else {
                j += 1;
                continue;
            };
            let run = |i: &Option<usize>| match i.map(|i| olds[i]) {
                Some(Old::Member(ri)) => Some(ri),
                _ => None,
            };
            let first = run(&from_old[j]);
            let whole = first.is_some_and(|ri| {
                from_old[j..j + k].iter().all(|i| run(i) == Some(ri))
                    && self.view.runs[ri as usize]
                        .as_ref()
                        .is_some_and(|r| r.key == compile::runs::KeyKind::Numgen && r.len == k)
            });
            if !whole {
                for i in from_old[j..j + k].iter().flatten() {
                    to_new[*i] = None;
                }
            }
            j += k;
        }
    }

    /// A run is kept only when every member is kept and the input's rules
    /// they match are consecutive: else none of its members is.
    fn unmatch_broken_runs(&self, olds: &[Old], to_new: &mut [Option<usize>]) {
        let mut runs: HashMap<u32, Vec<usize>> = HashMap::new();
        for (i, o) in olds.iter().enumerate() {
            if let Old::Member(ri) = o {
                runs.entry(*ri).or_default().push(i);
            }
        }
        for (ri, members) in runs {
            let len = self.view.runs[ri as usize].as_ref().map_or(0, |r| r.len);
            let js: Option<Vec<usize>> = members.iter().map(|&i| to_new[i]).collect();
            let whole =
                js.is_some_and(|js| js.len() == len && js.windows(2).all(|w| w[1] == w[0] + 1));
            if !whole {
                for &i in &members {
                    to_new[i] = None;
                }
            }
        }
    }

    /// Nothing kept: the flush and re-add, as a flush of the chain then
    /// its rules appended (joining or starting runs from a whole model).
    fn rewrite_whole(
        &mut self,
        kind: TableKind,
        t: &Table<Rule>,
        chain: &str,
        d: &Deferred,
        new: &[(RuleId, Rule, Counters)],
    ) -> Result<(), Error> {
        self.p.tag = d.tag;
        for (id, _, _) in &d.old {
            self.forget_rule(kind, *id);
        }
        // A chain without rules (one created in this batch) has nothing
        // to flush and no run (checking costs O(runs of the table)).
        if !d.old.is_empty() {
            self.flush_chain(kind, chain);
            self.drop_runs_in(kind, Some(chain));
            self.drop_unread_run_sets(kind, Some(chain));
        }
        if !self.opts.plain_appends && self.opts.compile.is_some() {
            // Known whole: compiled as a replaced table's chain is (one
            // verdict map for a KUBE-SERVICES, numgen groups as runs).
            return self.emit_chain(kind, t, chain, &d.lines);
        }
        for (id, r, c) in new {
            self.p.tag = d.lines.get(id).copied().unwrap_or(d.tag);
            self.new_rule(kind, chain, *id, r, *c, Placement::Append, None)?;
        }
        Ok(())
    }
}

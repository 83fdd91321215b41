//! Runs in the kernel: compiled runs of logical rules (see
//! `compile::runs`) kept as one kernel rule that looks the packet's key up
//! in a named set or verdict map, one element per logical rule.
//!
//! Each element carries its logical rule's id and text as userdata (the
//! same encoding as a kernel rule's) and its own counter, so the model is
//! rebuilt from the kernel alone (`crate::read`) and per-rule counters
//! survive. Inside a run, logical order is element id order (ids grow in
//! rule order when a restore compiles the run).
//!
//! What costs what: deleting a member is one element delete; inserting in
//! front of a run goes before its kernel rule; inserting inside a run or
//! replacing a member turns the run back into plain rules first
//! ("explode": what it moves, O(members)). An append joins the run the
//! chain ends with (one element add) when its rule fits the run's shape,
//! except for interval runs and, from the daemon's model, verdict-map runs
//! (those appends are plain rules); it starts a new run when it and the
//! chain's trailing plain rules reach the minimum run length. A restore
//! compiles every chain it writes in one pass at the end
//! ([`KernelApply::finish`]).

use crate::plan::{Created, KernelApply, Loc};
use compile::layout;
use compile::runs::{compile_chain, Item, KeyKind, RunSet};
use compile::userdata;
use compile::{rebase_lookups, Lowered};
use iptables::{Error, Rule};
use nft::batch::Placement;
use nft::{Data, Expr, SetElem, SetElems};
use ruleset::{Counters, RuleId, Ruleset, Table, TableKind};
use std::collections::HashMap;

/// Elements per NEWSETELEM message: keeps each message well inside the
/// netlink limits however long the run.
const ELEMS_PER_MSG: usize = 1000;

/// One run in the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunLoc {
    pub kind: TableKind,
    pub chain: String,
    pub set: String,
    pub key: KeyKind,
    pub map: bool,
    /// The run's kernel rule.
    pub rule: Loc,
    /// Members left (the run's rule and set go with the last one).
    pub len: usize,
    /// What every member is without its key (without its target, for a
    /// map), when known: appends from a whole model join the run by it.
    pub shape: Option<Rule>,
}

fn unsupported(e: impl std::fmt::Display) -> Error {
    Error::param(e.to_string())
}

/// The end marker of an interval member: an element flagged as the end of
/// the range before it.
fn end_marker(key: &[u8]) -> SetElem {
    let mut e = SetElem::key(key);
    e.flags = Some(nft::setelem::F_INTERVAL_END);
    e
}

fn counter(c: Counters) -> Expr {
    Expr::Counter {
        bytes: c.bytes,
        packets: c.packets,
    }
}

impl KernelApply {
    /// Take the runs a read found in table `kind` (after forgetting the
    /// table's old ones, if the caller re-reads it).
    pub fn remember_runs(&mut self, kind: TableKind, runs: &[crate::read::RunSnap]) {
        for r in self.runs.iter_mut() {
            if r.as_ref().is_some_and(|r| r.kind == kind) {
                *r = None;
            }
        }
        self.members.retain(|(k, _), _| *k != kind);
        for r in runs {
            let idx = self.runs.len() as u32;
            for id in &r.members {
                self.members.insert((kind, *id), idx);
            }
            self.runs.push(Some(RunLoc {
                kind,
                chain: r.chain.clone(),
                set: r.set.clone(),
                key: r.key,
                map: r.map,
                rule: Loc::Handle(r.handle),
                // A partial read does not know how many members the run
                // has: never its last one, so deleting members leaves the
                // run in place (an empty run matches nothing; a flush or
                // restore removes it).
                len: if r.partial {
                    usize::MAX / 2
                } else {
                    r.members.len()
                },
                shape: r.shape.clone(),
            }));
        }
    }

    /// The end of `chain` as the whole model `t` knows it (after the rules
    /// being appended were added to the model, which are left out): the run
    /// its last rule is a member of, or its last plain rules.
    pub(crate) fn tail_from_model(
        &self,
        kind: TableKind,
        t: &Table<Rule>,
        chain: &str,
    ) -> crate::read::Tail {
        let mut tail = crate::read::Tail {
            plain: Vec::new(),
            run: None,
        };
        let len = t.chain(chain).map_or(0, |c| c.len);
        let need = self.compile.unwrap_or_default().min_len.max(2) - 1;
        // Rules not yet in the kernel (this command's) have no location.
        let mut pos = len;
        while pos > 0 {
            let Ok(r) = t.rule_at(chain, pos) else { break };
            if self.run_of(kind, r.id).is_some() || self.locs.contains_key(&(kind, r.id)) {
                break;
            }
            pos -= 1;
        }
        if pos == 0 {
            return tail;
        }
        let Ok(last) = t.rule_at(chain, pos) else {
            return tail;
        };
        if let Some(ri) = self.run_of(kind, last.id) {
            if let Some(run) = self.runs.get(ri as usize).and_then(Option::as_ref) {
                tail.run = run.shape.clone().map(|shape| crate::read::TailRun {
                    index: Some(ri),
                    rule: run.rule,
                    set: run.set.clone(),
                    key: run.key,
                    map: run.map,
                    shape,
                });
            }
            return tail;
        }
        let from = pos.saturating_sub(need - 1).max(1);
        for p in from..=pos {
            let Ok(r) = t.rule_at(chain, p) else { continue };
            match self.locs.get(&(kind, r.id)) {
                Some(loc) if self.run_of(kind, r.id).is_none() => {
                    tail.plain.push((r.id, r.body.clone(), r.counters, *loc))
                }
                _ => tail.plain.clear(),
            }
        }
        tail
    }

    /// Append `r` (model id `id`) to `chain`, whose end was read into
    /// `self.tails`: one element add when it joins the run the chain ends
    /// with; a new run (the chain's trailing plain rules deleted and made
    /// elements, counters kept) when it and they reach the run length; else
    /// a plain rule.
    pub(crate) fn append_to_tail(
        &mut self,
        kind: TableKind,
        chain: &str,
        (id, r, c): (RuleId, Rule, Counters),
        twin: bool,
    ) -> Result<(), Error> {
        let family = self.family;
        let key = (kind, chain.to_string());
        let Some(mut tail) = self.tails.remove(&key) else {
            return self.new_rule(kind, chain, id, &r, c, Placement::Append, None);
        };
        let res = self.append_to(&mut tail, kind, chain, (id, r, c), twin, family);
        self.tails.insert(key, tail);
        res
    }

    fn append_to(
        &mut self,
        tail: &mut crate::read::Tail,
        kind: TableKind,
        chain: &str,
        (id, r, c): (RuleId, Rule, Counters),
        twin: bool,
        family: ruleset::Family,
    ) -> Result<(), Error> {
        let (fam, tname) = (layout::nft_family(family), layout::table_name(kind));
        if let Some(tr) = &tail.run {
            // With a whole model, a key already in the run is found before
            // the kernel refuses it: for a set run it is an identical rule
            // (`twin`: the model has one before this rule); a map run's keys
            // are not indexed, so appends to it from a model stay plain. A
            // range may overlap a member's without being equal to it, and
            // nothing here knows the members: appends to interval runs stay
            // plain rules too.
            let may_join = !tr.key.is_interval() && (!self.model_tails || (!tr.map && !twin));
            let joins = may_join
                .then(|| compile::runs::admits(tr.key, tr.map, &tr.shape, &r, family))
                .flatten();
            if let Some((key, verdict)) = joins {
                let set = tr.set.clone();
                let mut el = SetElem::key(&key);
                el.data = verdict.map(Data::Verdict);
                el.userdata = Some(self.rule_userdata(kind, id, &r));
                if c != Counters::default() {
                    el.exprs = vec![counter(c)];
                }
                // EXCL: a key already in the run makes the kernel refuse
                // the batch (see `joined_run`).
                self.batch
                    .create(&SetElems::new(fam, &tname, &set, vec![el]), self.tag);
                self.joined_run = true;
                if let Some(ri) = tr.index {
                    self.members.insert((kind, id), ri);
                    self.locs.remove(&(kind, id));
                    if let Some(run) = self.runs.get_mut(ri as usize).and_then(Option::as_mut) {
                        run.len += 1;
                    }
                }
                return Ok(());
            }
        }
        tail.run = None;
        let opts = self.compile.unwrap_or_default();
        let need = opts.min_len.max(2) - 1;
        // Members list in id order, so only rules whose ids grow in chain
        // order can become one (an inserted rule has a newer id than the
        // rules after it).
        let ordered = |p: &[(RuleId, Rule, Counters, Loc)]| {
            p.windows(2).all(|w| w[0].0 < w[1].0) && p.last().is_none_or(|l| l.0 < id)
        };
        if tail.plain.len() >= need && ordered(&tail.plain[tail.plain.len() - need..]) {
            let from = tail.plain.len() - need;
            let mut cand: Vec<(RuleId, &Rule)> = tail.plain[from..]
                .iter()
                .map(|(i, b, _, _)| (*i, b))
                .collect();
            cand.push((id, &r));
            let items = compile_chain(
                &cand,
                family,
                kind,
                chain,
                compile::runs::RunOpts { min_len: need + 1 },
            )
            .map_err(unsupported)?;
            if let [Item::Run { .. }] = items.as_slice() {
                let Some(Item::Run { lowered, set }) = items.into_iter().next() else {
                    unreachable!("matched above");
                };
                let old: Vec<_> = tail.plain.drain(from..).collect();
                for (_, _, _, loc) in &old {
                    let mut k = nft::Rule::key(fam, &tname, chain, None);
                    match loc {
                        Loc::Handle(h) => k.handle = Some(*h),
                        Loc::New(b) => k.id = Some(*b),
                    }
                    self.batch.delete(&k, self.tag);
                }
                let mut members: HashMap<RuleId, (&Rule, Counters)> =
                    old.iter().map(|(i, b, c, _)| (*i, (b, *c))).collect();
                members.insert(id, (&r, c));
                let (rs, key, map, shape) = (set.name.clone(), set.key, set.map, set.shape.clone());
                self.new_run(kind, chain, lowered, *set, &members)?;
                let rule = self.runs.last().and_then(|x| x.as_ref()).map(|x| x.rule);
                let index = Some(self.runs.len() as u32 - 1);
                tail.plain.clear();
                tail.run = rule.map(|rule| crate::read::TailRun {
                    index,
                    rule,
                    set: rs,
                    key,
                    map,
                    shape,
                });
                return Ok(());
            }
        }
        self.new_rule(kind, chain, id, &r, c, Placement::Append, None)?;
        if let Some(loc) = self.locs.get(&(kind, id)).copied() {
            tail.plain.push((id, r, c, loc));
        }
        Ok(())
    }

    /// Whether appends to `kind` wait for [`KernelApply::finish`]: runs are
    /// compiled, and this batch replaces the table (so its chains hold
    /// nothing the batch did not write).
    pub(crate) fn defers(&self, kind: TableKind) -> bool {
        self.compile.is_some() && self.fresh.contains(&kind)
    }

    pub(crate) fn defer(&mut self, kind: TableKind, chain: &str) {
        if !self.deferred.iter().any(|(k, c)| *k == kind && c == chain) {
            self.deferred.push((kind, chain.to_string()));
        }
    }

    /// Write the deferred appends of every table, runs compiled. Call once
    /// the restore has run, before committing.
    pub fn finish(&mut self, rs: &Ruleset<Rule>) -> Result<(), Error> {
        let opts = self.compile;
        for (kind, chain) in std::mem::take(&mut self.deferred) {
            let t = rs.table(self.family, kind);
            self.emit_chain(kind, t, &chain, opts.is_some())?;
        }
        Ok(())
    }

    /// Before a command other than an append touches table `kind`: write
    /// its deferred chains as plain rules, so the command finds every rule
    /// where the plain planner expects it.
    pub(crate) fn undefer(&mut self, kind: TableKind, t: &Table<Rule>) -> Result<(), Error> {
        if !self.deferred.iter().any(|(k, _)| *k == kind) {
            return Ok(());
        }
        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.deferred)
            .into_iter()
            .partition(|(k, _)| *k == kind);
        self.deferred = rest;
        for (_, chain) in mine {
            self.emit_chain(kind, t, &chain, false)?;
        }
        Ok(())
    }

    /// Append every rule of `chain` (the model's) to the kernel chain.
    fn emit_chain(
        &mut self,
        kind: TableKind,
        t: &Table<Rule>,
        chain: &str,
        compiled: bool,
    ) -> Result<(), Error> {
        let rules: Vec<(RuleId, Rule, Counters)> = match t.rules(chain) {
            Ok(it) => it.map(|r| (r.id, r.body.clone(), r.counters)).collect(),
            Err(_) => return Ok(()),
        };
        let items: Vec<Item> = match self.compile.filter(|_| compiled) {
            Some(o) => {
                let refs: Vec<(RuleId, &Rule)> = rules.iter().map(|(i, r, _)| (*i, r)).collect();
                compile_chain(&refs, self.family, kind, chain, o).map_err(unsupported)?
            }
            None => rules
                .iter()
                .map(|(id, _, _)| Item::Plain { id: *id })
                .collect(),
        };
        let by_id: HashMap<RuleId, (&Rule, Counters)> =
            rules.iter().map(|(i, r, c)| (*i, (r, *c))).collect();
        for item in items {
            match item {
                Item::Plain { id } => {
                    let (r, c) = by_id[&id];
                    self.new_rule(kind, chain, id, r, c, Placement::Append, None)?;
                }
                Item::Run { lowered, set } => self.new_run(kind, chain, lowered, *set, &by_id)?,
            }
        }
        Ok(())
    }

    /// Create a run: its set (or verdict map) with one element per member,
    /// then its rule at the end of `chain`.
    fn new_run(
        &mut self,
        kind: TableKind,
        chain: &str,
        lowered: Lowered,
        set: RunSet,
        members: &HashMap<RuleId, (&Rule, Counters)>,
    ) -> Result<(), Error> {
        use nft::set::{flags, DATA_TYPE_VERDICT};
        let (fam, tname) = (layout::nft_family(self.family), layout::table_name(kind));
        let sid = self.alloc_set_id();
        let mut s = nft::Set::new(fam, &tname, &set.name);
        s.flags = Some(
            if set.map { flags::MAP } else { 0 } | if set.interval { flags::INTERVAL } else { 0 },
        );
        s.key_type = Some(set.key_type);
        s.key_len = Some(set.key_len);
        if set.map {
            s.data_type = Some(DATA_TYPE_VERDICT);
        }
        s.exprs = vec![counter(Counters::default())];
        s.id = Some(sid);
        self.batch.add(&s, self.tag);
        let mut elems = Vec::with_capacity(set.elems.len().min(ELEMS_PER_MSG));
        for e in &set.elems {
            let (r, c) = members[&e.id];
            let mut el = SetElem::key(&e.key);
            el.data = e.verdict.clone().map(Data::Verdict);
            el.userdata = Some(self.rule_userdata(kind, e.id, r));
            if c != Counters::default() {
                el.exprs = vec![counter(c)];
            }
            elems.push(el);
            if let Some(end) = &e.end {
                elems.push(end_marker(end));
            }
            if elems.len() >= ELEMS_PER_MSG {
                self.add_elems(fam, &tname, &set.name, sid, std::mem::take(&mut elems));
            }
        }
        if !elems.is_empty() {
            self.add_elems(fam, &tname, &set.name, sid, elems);
        }
        let mut exprs = lowered.exprs;
        for e in exprs.iter_mut() {
            if let Expr::Lookup { set: n, set_id, .. } = e {
                if *n == set.name {
                    *set_id = Some(sid);
                }
            }
        }
        let first_anon = self.next_set_id;
        rebase_lookups(&mut exprs, first_anon);
        for (i, a) in lowered.sets.iter().enumerate() {
            let (s, es) = a.to_nft(fam, &tname, first_anon + i as u32);
            self.batch.add(&s, self.tag);
            self.batch.add(&es, self.tag);
        }
        for _ in &lowered.sets {
            self.alloc_set_id();
        }
        let mut shape = String::new();
        iptables::print::save::save_rule_body(
            &mut shape,
            self.family,
            &set.shape,
            Counters::default(),
            iptables::print::save::CounterStyle::None,
        );
        let mut r = nft::Rule::new(fam, &tname, chain, exprs);
        r.userdata = Some(userdata::encode_run(set.key, set.map, &set.name, &shape));
        let bid = self.alloc_rule_id();
        r.id = Some(bid);
        let seq = self
            .batch
            .add_rule(&r, Placement::Append, self.echo, self.tag);
        let idx = self.runs.len() as u32;
        if self.echo {
            self.created.push((seq, Created::Run(idx)));
        }
        for e in &set.elems {
            self.members.insert((kind, e.id), idx);
            self.locs.remove(&(kind, e.id));
        }
        self.runs.push(Some(RunLoc {
            kind,
            chain: chain.to_string(),
            set: set.name,
            key: set.key,
            map: set.map,
            rule: Loc::New(bid),
            len: set.elems.len(),
            shape: Some(set.shape),
        }));
        Ok(())
    }

    fn add_elems(
        &mut self,
        fam: nft::Family,
        tname: &str,
        set: &str,
        sid: u32,
        elems: Vec<SetElem>,
    ) {
        let mut es = SetElems::new(fam, tname, set, elems);
        es.set_id = Some(sid);
        self.batch.add(&es, self.tag);
    }

    /// The run rule `id` is a member of, if any.
    pub(crate) fn run_of(&self, kind: TableKind, id: RuleId) -> Option<u32> {
        self.members.get(&(kind, id)).copied()
    }

    /// The element of member `body` in run `ri`: set, key, and the end
    /// marker of an interval run's member.
    fn elem_key(&self, ri: u32, body: &Rule) -> Option<(String, Vec<u8>, Option<Vec<u8>>)> {
        let run = self.runs.get(ri as usize)?.as_ref()?;
        let (key, _) = run.key.split(body, self.family)?;
        Some((run.set.clone(), key, run.key.end_marker(body, self.family)))
    }

    /// Delete logical rule `id` (body `body`) if it is a run member: one
    /// element delete; the run's rule and set go with its last member.
    /// False if it is not a member.
    pub(crate) fn del_member(&mut self, kind: TableKind, id: RuleId, body: &Rule) -> bool {
        let Some(ri) = self.run_of(kind, id) else {
            return false;
        };
        let (fam, tname) = (layout::nft_family(self.family), layout::table_name(kind));
        if let Some((set, key, end)) = self.elem_key(ri, body) {
            let mut els = vec![SetElem::key(&key)];
            els.extend(end.as_deref().map(end_marker));
            let es = SetElems::new(fam, &tname, &set, els);
            self.batch.delete(&es, self.tag);
        }
        self.members.remove(&(kind, id));
        self.side_effects.insert(kind);
        if self.echo {
            self.forgotten.push((kind, id));
        }
        let empty = match self.runs.get_mut(ri as usize).and_then(Option::as_mut) {
            Some(run) => {
                run.len = run.len.saturating_sub(1);
                run.len == 0
            }
            None => false,
        };
        if empty {
            self.drop_run(ri);
        }
        true
    }

    /// Delete run `ri`'s rule and set.
    fn drop_run(&mut self, ri: u32) {
        let Some(run) = self.runs.get_mut(ri as usize).and_then(Option::take) else {
            return;
        };
        let (fam, tname) = (
            layout::nft_family(self.family),
            layout::table_name(run.kind),
        );
        let mut r = nft::Rule::key(fam, &tname, &run.chain, None);
        match run.rule {
            Loc::Handle(h) => r.handle = Some(h),
            Loc::New(b) => r.id = Some(b),
        }
        self.batch.delete(&r, self.tag);
        self.batch
            .delete(&nft::Set::new(fam, &tname, &run.set), self.tag);
        self.side_effects.insert(run.kind);
    }

    /// After `chains` of `kind` were flushed: their runs' sets go too.
    pub(crate) fn drop_runs_in(&mut self, kind: TableKind, chains: &[String]) {
        let (fam, tname) = (layout::nft_family(self.family), layout::table_name(kind));
        let mut gone = Vec::new();
        for (i, slot) in self.runs.iter_mut().enumerate() {
            if slot
                .as_ref()
                .is_some_and(|r| r.kind == kind && chains.contains(&r.chain))
            {
                let run = slot.take().expect("checked");
                self.batch
                    .delete(&nft::Set::new(fam, &tname, &run.set), self.tag);
                self.dropped_sets.push((kind, run.set));
                gone.push(i as u32);
            }
        }
        if !gone.is_empty() {
            self.members
                .retain(|(k, _), ri| !(*k == kind && gone.contains(ri)));
            self.side_effects.insert(kind);
        }
    }

    /// Delete the run sets `names` of table `kind` that a flush queued in
    /// this batch leaves unused (see [`crate::read::run_sets_used_by`]),
    /// except those already dropped; after the flush, so the kernel drops
    /// their last reference first.
    pub(crate) fn drop_unread_run_sets(&mut self, kind: TableKind, names: Vec<String>) {
        let (fam, tname) = (layout::nft_family(self.family), layout::table_name(kind));
        for n in names {
            if self.dropped_sets.iter().any(|(k, s)| *k == kind && *s == n) {
                continue;
            }
            self.batch.delete(&nft::Set::new(fam, &tname, &n), self.tag);
            self.side_effects.insert(kind);
            self.dropped_sets.push((kind, n));
        }
    }

    /// Where to insert in front of member `id` of run `ri` without
    /// touching the run: its kernel rule, when `id` is the run's first
    /// member in `chain` (model order).
    pub(crate) fn front_of_run(
        &self,
        t: &Table<Rule>,
        chain: &str,
        pos: usize,
        ri: u32,
    ) -> Option<Loc> {
        let prev_same = pos > 1
            && t.rule_at(chain, pos - 1)
                .ok()
                .is_some_and(|p| self.run_of(t.kind(), p.id) == Some(ri));
        if prev_same {
            return None;
        }
        self.runs.get(ri as usize)?.as_ref().map(|r| r.rule)
    }

    /// Turn run `ri` back into plain rules in its place: every logical rule
    /// of `chain` that is a member (or is `extra`, a rule that just took a
    /// member's place), in model order, inserted before the run's rule;
    /// then the run's rule and set are deleted. Counters carry over.
    pub(crate) fn explode(
        &mut self,
        kind: TableKind,
        t: &Table<Rule>,
        ri: u32,
        extra: Option<RuleId>,
    ) -> Result<(), Error> {
        let Some(run) = self.runs.get(ri as usize).and_then(Option::clone) else {
            return Ok(());
        };
        let rules: Vec<(RuleId, Rule, Counters)> = t
            .rules(&run.chain)
            .map_err(|e| Error::other(e.to_string()))?
            .filter(|r| self.run_of(kind, r.id) == Some(ri) || Some(r.id) == extra)
            .map(|r| (r.id, r.body.clone(), r.counters))
            .collect();
        for (id, body, c) in &rules {
            self.members.remove(&(kind, *id));
            self.new_rule(
                kind,
                &run.chain,
                *id,
                body,
                *c,
                Placement::Insert,
                Some(run.rule),
            )?;
        }
        self.members.retain(|(k, _), i| !(*k == kind && *i == ri));
        self.drop_run(ri);
        Ok(())
    }

    /// Zero member `id`'s counter: its element is deleted and added again
    /// with a fresh counter (same key, verdict and userdata).
    pub(crate) fn zero_member(&mut self, kind: TableKind, id: RuleId, body: &Rule) {
        let Some(ri) = self.run_of(kind, id) else {
            return;
        };
        // The start element only: an interval member's end marker stays.
        let Some((set, key, _)) = self.elem_key(ri, body) else {
            return;
        };
        let map = self.runs[ri as usize].as_ref().is_some_and(|r| r.map);
        let (fam, tname) = (layout::nft_family(self.family), layout::table_name(kind));
        self.batch.delete(
            &SetElems::new(fam, &tname, &set, vec![SetElem::key(&key)]),
            self.tag,
        );
        let mut el = SetElem::key(&key);
        if map {
            el.data = compile::runs::verdict_of(&body.target).map(Data::Verdict);
        }
        // The text is unchanged: the catalog keeps any overflow as it is.
        let mut text = String::new();
        iptables::print::save::save_rule_body(
            &mut text,
            self.family,
            body,
            Counters::default(),
            iptables::print::save::CounterStyle::None,
        );
        let comment = body.matches.iter().find_map(|m| match m {
            iptables::ext::Match::Comment(c) => Some(c.text.as_str()),
            _ => None,
        });
        el.userdata = Some(userdata::encode(id, &text, comment).bytes);
        el.exprs = vec![counter(Counters::default())];
        self.batch
            .add(&SetElems::new(fam, &tname, &set, vec![el]), self.tag);
    }
}

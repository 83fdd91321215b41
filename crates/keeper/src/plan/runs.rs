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
//! (`Planner::finish`, in `fresh`).

use super::emit::rule_text;
use super::{Created, Loc, Planner, RunLoc};
use compile::layout;
use compile::runs::{compile_chain, numgen, Item, KeyKind, RunSet};
use compile::userdata::{self, catalog::Census};
use compile::{rebase_lookups, Lowered};
use iptables::{Error, Rule};
use nft::batch::Placement;
use nft::{Expr, SetElem, SetElems};
use ruleset::{Counters, RuleId, Table, TableKind};
use std::collections::HashMap;
use std::hash::BuildHasher;

/// Elements per NEWSETELEM message: keeps each message well inside the
/// netlink limits however long the run.
const ELEMS_PER_MSG: usize = 1000;

fn unsupported(e: impl std::fmt::Display) -> Error {
    Error::param(e.to_string())
}

/// The end marker of an interval member: an element flagged as the end of
/// the range before it.
/// A member's elements in its run: the set, the keys (one, or a multiport
/// member's ports), an interval member's end marker.
type MemberElems = (String, Vec<Vec<u8>>, Option<Vec<u8>>);

/// The elements of one member with keys `keys` (one, or a multiport
/// member's ports): each with the verdict `data` and userdata `ud`; the
/// `i`th with a counter of `counter(i)` when that is `Some`.
fn member_elems(
    keys: &[Vec<u8>],
    data: Option<nft::Data>,
    ud: &[u8],
    counter_of: impl Fn(usize) -> Option<Counters>,
) -> Vec<SetElem> {
    keys.iter()
        .enumerate()
        .map(|(i, k)| {
            let mut el = SetElem::key(k);
            el.data = data.clone();
            el.userdata = Some(ud.to_vec());
            if let Some(c) = counter_of(i) {
                el.exprs = vec![counter(c)];
            }
            el
        })
        .collect()
}

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

impl Planner<'_> {
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
        let need = self.opts.compile.unwrap_or_default().min_len.max(2) - 1;
        // Rules not yet in the kernel (this command's) have no location.
        let mut pos = len;
        while pos > 0 {
            let Ok(r) = t.rule_at(chain, pos) else { break };
            if self.view.run_of(kind, r.id).is_some() || self.view.locs.contains_key(&(kind, r.id))
            {
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
        if let Some(ri) = self.view.run_of(kind, last.id) {
            if let Some(run) = self.view.runs.get(ri as usize).and_then(Option::as_ref) {
                tail.run = run.shape.clone().map(|shape| crate::read::TailRun {
                    index: Some(ri),
                    rule: run.rule,
                    set: run.set.clone(),
                    key: run.key,
                    map: run.map,
                    shape,
                    // Kept in the run's entry (`index`) while planning.
                    census: None,
                });
            }
            return tail;
        }
        let from = pos.saturating_sub(need - 1).max(1);
        for p in from..=pos {
            let Ok(r) = t.rule_at(chain, p) else { continue };
            match self.view.locs.get(&(kind, r.id)) {
                Some(loc) if self.view.run_of(kind, r.id).is_none() => {
                    tail.plain.push((r.id, r.body.clone(), r.counters, *loc))
                }
                _ => tail.plain.clear(),
            }
        }
        tail
    }

    /// Append `r` (model id `id`) to `chain`, whose end was read into
    /// `self.p.tails`: one element add when it joins the run the chain ends
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
        let key = (family, kind, chain.to_string());
        let Some(mut tail) = self.p.tails.remove(&key) else {
            return self.new_rule(kind, chain, id, &r, c, Placement::Append, None);
        };
        let res = self.append_to(&mut tail, kind, chain, (id, r, c), twin, family);
        self.p.tails.insert(key, tail);
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
            // A run is at most `compile::runs::MAX_LEN` long (its length:
            // the model's count, else the census read with the tail; a run
            // without a census is joined as before).
            let len = match tr.index.and_then(|ri| self.view.runs.get(ri as usize)) {
                Some(Some(run)) => Some(run.len),
                _ => tr.census.map(|c| c.count as usize),
            };
            let full = len.is_some_and(|n| n >= compile::runs::MAX_LEN);
            // A numgen group is complete: a rule after it is no member.
            let may_join = !full
                && !tr.key.is_interval()
                && tr.key != KeyKind::Numgen
                && (!self.opts.whole_model || (!tr.map && !twin));
            let joins = may_join
                .then(|| compile::runs::admits(tr.key, tr.map, &tr.shape, &r, family))
                .flatten();
            if let Some((key, verdict)) = joins {
                let set = tr.set.clone();
                let index = tr.index;
                // A multiport member is an element per port, its counter
                // in the first.
                let keys = match tr.key {
                    KeyKind::Dports => tr.key.keys(&r, family).unwrap_or_default(),
                    _ => vec![key],
                };
                let data = self.verdict_data(kind, verdict);
                let ud = self.rule_userdata(kind, id, &r);
                let els = member_elems(&keys, data, &ud, |i| {
                    (i == 0 && c != Counters::default()).then_some(c)
                });
                // EXCL: a key already in the run makes the kernel refuse
                // the batch (EEXIST), as does a full set (ENFILE, see
                // `compile::runs::capacity`); the write is then planned
                // again with plain appends (`Pending::joined`).
                self.p
                    .batch
                    .create(&SetElems::new(fam, &tname, &set, els), self.p.tag);
                self.p.joined.insert(self.p.tag);
                // The census lives in the run's entry when the planner
                // knows the run (`index`), else in the tail read.
                let old = match index.and_then(|ri| self.view.runs.get(ri as usize)) {
                    Some(Some(run)) => run.census,
                    _ => tail.run.as_ref().and_then(|t| t.census),
                };
                let new = old.map(|mut c| {
                    c.add(id);
                    c
                });
                self.write_census(kind, &set, old, new);
                if let Some(t) = tail.run.as_mut() {
                    t.census = new;
                }
                if let Some(ri) = index {
                    // Run bookkeeping a refused batch must not leave behind
                    // (a join is refused when the set is full).
                    self.p.side_effects.insert((family, kind));
                    self.view.members.insert((kind, id), ri);
                    self.view.locs.remove(&(kind, id));
                    if let Some(run) = self.view.runs.get_mut(ri as usize).and_then(Option::as_mut)
                    {
                        run.len += 1;
                        run.census = new;
                    }
                }
                return Ok(());
            }
        }
        tail.run = None;
        let opts = self.opts.compile.unwrap_or_default();
        let need = opts.min_len.max(2) - 1;
        // Members list in id order, so only rules whose ids grow in chain
        // order can become one (an inserted rule has a newer id than the
        // rules after it).
        let ordered = |p: &[(RuleId, Rule, Counters, Loc)]| {
            p.windows(2).all(|w| w[0].0 < w[1].0) && p.last().is_none_or(|l| l.0 < id)
        };
        if self.numgen_from_tail(tail, kind, chain, (id, &r, c))? {
            return Ok(());
        }
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
                compile::runs::RunOpts {
                    min_len: need + 1,
                    numgen: false,
                },
            )
            .map_err(unsupported)?;
            if let [Item::Run { .. }] = items.as_slice() {
                let Some(Item::Run { lowered, set }) = items.into_iter().next() else {
                    unreachable!("matched above");
                };
                let old: Vec<_> = tail.plain.drain(from..).collect();
                for (_, _, _, loc) in &old {
                    let mut k = self.rule_key(kind, chain);
                    match loc {
                        Loc::Handle(h) => k.handle = Some(*h),
                        Loc::New(b) => k.id = Some(*b),
                    }
                    self.p.batch.delete(&k, self.p.tag);
                }
                let mut members: HashMap<RuleId, (&Rule, Counters)> =
                    old.iter().map(|(i, b, c, _)| (*i, (b, *c))).collect();
                members.insert(id, (&r, c));
                let (rs, key, map, shape) = (set.name.clone(), set.key, set.map, set.shape.clone());
                self.new_run(kind, chain, lowered, *set, &members)?;
                let rule = self
                    .view
                    .runs
                    .last()
                    .and_then(|x| x.as_ref())
                    .map(|x| x.rule);
                let index = Some(self.view.runs.len() as u32 - 1);
                tail.plain.clear();
                tail.run = rule.map(|rule| crate::read::TailRun {
                    index,
                    rule,
                    set: rs,
                    key,
                    map,
                    shape,
                    census: None,
                });
                return Ok(());
            }
        }
        self.new_rule(kind, chain, id, &r, c, Placement::Append, None)?;
        if let Some(loc) = self.view.locs.get(&(kind, id)).copied() {
            tail.plain.push((id, r, c, loc));
        }
        Ok(())
    }

    /// When `r` completes a numgen group (see `compile::runs::numgen`)
    /// with the chain's trailing plain rules: those rules deleted and the
    /// group made one run, counters kept. False (nothing done) otherwise.
    fn numgen_from_tail(
        &mut self,
        tail: &mut crate::read::Tail,
        kind: TableKind,
        chain: &str,
        (id, r, c): (RuleId, &Rule, Counters),
    ) -> Result<bool, Error> {
        let on = self.opts.compile.is_some_and(|o| o.numgen);
        if !on || numgen::member_key(r) != Some(0) || tail.plain.is_empty() {
            return Ok(false);
        }
        let mut cand: Vec<(RuleId, &Rule)> =
            tail.plain.iter().map(|(i, b, _, _)| (*i, b)).collect();
        cand.push((id, r));
        let Some(k) = numgen::group_ending(&cand) else {
            return Ok(false);
        };
        let from = cand.len() - k;
        let items = compile_chain(
            &cand[from..],
            self.family,
            kind,
            chain,
            compile::runs::RunOpts {
                min_len: k,
                numgen: true,
            },
        )
        .map_err(unsupported)?;
        let Some(Item::Run { lowered, set }) = items.into_iter().next() else {
            return Ok(false);
        };
        let old: Vec<_> = tail.plain.drain(from..).collect();
        for (_, _, _, loc) in &old {
            let mut key = self.rule_key(kind, chain);
            match loc {
                Loc::Handle(h) => key.handle = Some(*h),
                Loc::New(b) => key.id = Some(*b),
            }
            self.p.batch.delete(&key, self.p.tag);
        }
        let mut members: HashMap<RuleId, (&Rule, Counters)> =
            old.iter().map(|(i, b, c, _)| (*i, (b, *c))).collect();
        members.insert(id, (r, c));
        let (name, shape) = (set.name.clone(), set.shape.clone());
        self.new_run(kind, chain, lowered, *set, &members)?;
        let rule = self
            .view
            .runs
            .last()
            .and_then(|x| x.as_ref())
            .map(|x| x.rule);
        tail.plain.clear();
        tail.run = rule.map(|rule| crate::read::TailRun {
            index: Some(self.view.runs.len() as u32 - 1),
            rule,
            set: name,
            key: KeyKind::Numgen,
            map: true,
            shape,
            census: None,
        });
        Ok(true)
    }

    /// Create a run: its set (or verdict map) with one element per member,
    /// then its rule at the end of `chain`.
    pub(crate) fn new_run<S: BuildHasher>(
        &mut self,
        kind: TableKind,
        chain: &str,
        lowered: Lowered,
        set: RunSet,
        members: &HashMap<RuleId, (&Rule, Counters), S>,
    ) -> Result<(), Error> {
        self.new_run_at(
            kind,
            chain,
            lowered,
            set,
            members,
            (Placement::Append, None),
        )
    }

    /// [`Self::new_run`] with its rule placed as `new_rule` places one
    /// (`at`: after or before that kernel rule; `None`: the chain's end or
    /// start).
    pub(crate) fn new_run_at<S: BuildHasher>(
        &mut self,
        kind: TableKind,
        chain: &str,
        lowered: Lowered,
        set: RunSet,
        members: &HashMap<RuleId, (&Rule, Counters), S>,
        (placement, at): (Placement, Option<Loc>),
    ) -> Result<(), Error> {
        use nft::set::{flags, DATA_TYPE_VERDICT};
        let (fam, tname) = (layout::nft_family(self.family), layout::table_name(kind));
        let sid = self.p.alloc_set_id();
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
        if !set.interval {
            s.size = compile::runs::capacity(set.elems.len());
        }
        s.id = Some(sid);
        self.p.batch.add(&s, self.p.tag);
        let mut elems = Vec::with_capacity(set.elems.len().min(ELEMS_PER_MSG));
        let mut prev = None;
        for e in &set.elems {
            let (r, c) = members[&e.id];
            let mut el = SetElem::key(&e.key);
            el.data = self.verdict_data(kind, e.verdict.clone());
            el.userdata = Some(self.rule_userdata(kind, e.id, r));
            // A member of several elements (a multiport list) keeps its
            // counter in its first: reads sum them.
            if c != Counters::default() && prev != Some(e.id) {
                el.exprs = vec![counter(c)];
            }
            prev = Some(e.id);
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
        // Members in element order (a member's elements are contiguous).
        let mut ids: Vec<RuleId> = set.elems.iter().map(|e| e.id).collect();
        ids.dedup();
        let census = Census::of(ids.iter().copied());
        self.write_census(kind, &set.name, None, Some(census));
        let mut exprs = lowered.exprs;
        for e in exprs.iter_mut() {
            if let Expr::Lookup { set: n, set_id, .. } = e {
                if *n == set.name {
                    *set_id = Some(sid);
                }
            }
        }
        let first_anon = self.p.next_set_id;
        rebase_lookups(&mut exprs, first_anon);
        for (i, a) in lowered.sets.iter().enumerate() {
            let (s, es) = a.to_nft(fam, &tname, first_anon + i as u32);
            self.p.batch.add(&s, self.p.tag);
            self.p.batch.add(&es, self.p.tag);
        }
        for _ in &lowered.sets {
            self.p.alloc_set_id();
        }
        let mut shape = String::new();
        iptables::print::save::save_rule_body(
            &mut shape,
            self.family,
            &set.shape,
            Counters::default(),
            iptables::print::save::CounterStyle::None,
        );
        let mut r = self.rule_msg(kind, chain, exprs);
        r.userdata = Some(userdata::encode_run(set.key, set.map, &set.name, &shape));
        let bid = self.p.alloc_rule_id();
        r.id = Some(bid);
        match at {
            Some(Loc::Handle(h)) => r.position = Some(h),
            Some(Loc::New(b)) => r.position_id = Some(b),
            None => {}
        }
        let seq = self
            .p
            .batch
            .add_rule(&r, placement, self.opts.echo, self.p.tag);
        let idx = self.view.runs.len() as u32;
        if self.opts.echo {
            self.p.created.push((seq, self.family, Created::Run(idx)));
        }
        for id in &ids {
            self.view.members.insert((kind, *id), idx);
            self.view.locs.remove(&(kind, *id));
        }
        // Undoing the command in the model does not undo the new run.
        self.p.side_effects.insert((self.family, kind));
        self.view.runs.push(Some(RunLoc {
            kind,
            chain: chain.to_string(),
            set: set.name,
            key: set.key,
            map: set.map,
            rule: Loc::New(bid),
            len: ids.len(),
            shape: Some(set.shape),
            census: Some(census),
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
        self.p.batch.add(&es, self.p.tag);
    }

    /// The elements of member `body` in run `ri`: set, keys (one, or a
    /// multiport member's ports), and the end marker of an interval run's
    /// member.
    fn elem_keys(&self, ri: u32, body: &Rule) -> Option<MemberElems> {
        let run = self.view.runs.get(ri as usize)?.as_ref()?;
        let keys = match run.key {
            KeyKind::Dports => run.key.keys(body, self.family)?,
            k => vec![k.split(body, self.family)?.0],
        };
        Some((run.set.clone(), keys, run.key.end_marker(body, self.family)))
    }

    /// [`Self::del_member`], except that a numgen run (whose draw is over
    /// all its members) becomes plain rules without `id` (already gone
    /// from the model `t`).
    pub(crate) fn del_member_in(
        &mut self,
        kind: TableKind,
        t: &Table<Rule>,
        id: RuleId,
        body: &Rule,
    ) -> Result<bool, Error> {
        let Some(ri) = self.view.run_of(kind, id) else {
            return Ok(false);
        };
        let numgen = self.view.runs[ri as usize]
            .as_ref()
            .is_some_and(|r| r.key == KeyKind::Numgen);
        if !numgen {
            return Ok(self.del_member(kind, id, body));
        }
        self.view.members.remove(&(kind, id));
        self.forget_rule(kind, id);
        self.explode(kind, t, ri, None)?;
        Ok(true)
    }

    /// Delete logical rule `id` (body `body`) if it is a run member: one
    /// element delete; the run's rule and set go with its last member.
    /// False if it is not a member.
    pub(crate) fn del_member(&mut self, kind: TableKind, id: RuleId, body: &Rule) -> bool {
        let Some(ri) = self.view.run_of(kind, id) else {
            return false;
        };
        let (fam, tname) = (layout::nft_family(self.family), layout::table_name(kind));
        if let Some((set, keys, end)) = self.elem_keys(ri, body) {
            let mut els: Vec<SetElem> = keys.iter().map(|k| SetElem::key(k)).collect();
            els.extend(end.as_deref().map(end_marker));
            let es = SetElems::new(fam, &tname, &set, els);
            self.p.batch.delete(&es, self.p.tag);
        }
        self.view.members.remove(&(kind, id));
        self.p.side_effects.insert((self.family, kind));
        if self.opts.echo {
            self.p.forgotten.push((self.family, kind, id));
        }
        let (empty, census) = match self.view.runs.get_mut(ri as usize).and_then(Option::as_mut) {
            Some(run) => {
                run.len = run.len.saturating_sub(1);
                (run.len == 0, run.census)
            }
            None => (false, None),
        };
        if empty {
            // The census goes with the run.
            self.drop_run(ri);
        } else if let Some(set) = self.view.runs[ri as usize].as_ref().map(|r| r.set.clone()) {
            let new = census.map(|mut c| {
                c.remove(id);
                c
            });
            self.write_census(kind, &set, census, new);
            if let Some(run) = self.view.runs[ri as usize].as_mut() {
                run.census = new;
            }
        }
        true
    }

    /// Delete run `ri`'s rule and set.
    pub(crate) fn drop_run(&mut self, ri: u32) {
        let Some(run) = self.view.runs.get_mut(ri as usize).and_then(Option::take) else {
            return;
        };
        let (fam, tname) = (
            layout::nft_family(self.family),
            layout::table_name(run.kind),
        );
        let mut r = self.rule_key(run.kind, &run.chain);
        match run.rule {
            Loc::Handle(h) => r.handle = Some(h),
            Loc::New(b) => r.id = Some(b),
        }
        self.p.batch.delete(&r, self.p.tag);
        self.p
            .batch
            .delete(&nft::Set::new(fam, &tname, &run.set), self.p.tag);
        self.write_census(run.kind, &run.set, run.census, None);
        self.p.side_effects.insert((self.family, run.kind));
    }

    /// Rewrite the catalog census of table `kind`'s runs read with other
    /// members than it counts (see [`crate::plan::view::KernelView::stale_census`]), before
    /// the first change of the write: membership changes then count from
    /// what the kernel holds, and `verify` checks the run against it.
    pub(crate) fn repair_censuses(&mut self, kind: TableKind) {
        if !self.view.stale_census.iter().any(|(k, ..)| *k == kind) {
            return;
        }
        let mut stale = std::mem::take(&mut self.view.stale_census);
        stale.retain(|&(k, ri, read)| {
            if k != kind {
                return true;
            }
            let Some(run) = self.view.runs.get(ri as usize).and_then(Option::as_ref) else {
                return false;
            };
            let (set, old) = (run.set.clone(), run.census);
            self.write_census(kind, &set, old, Some(read));
            if let Some(run) = self.view.runs[ri as usize].as_mut() {
                run.census = Some(read);
            }
            self.p.side_effects.insert((self.family, kind));
            false
        });
        self.view.stale_census = stale;
    }

    /// Replace run `set`'s census in the catalog: `old` is what the kernel
    /// has (`None`: no element), `new` what it should have (`None`: no
    /// element). Recorded, and written at the end of the batch (at most
    /// one element delete and one add per run, see [`super::Pending::batch`]).
    fn write_census(
        &mut self,
        kind: TableKind,
        set: &str,
        old: Option<Census>,
        new: Option<Census>,
    ) {
        let Some(run) = compile::runs::run_id(set) else {
            return;
        };
        if old == new {
            return;
        }
        self.p.censuses.push(super::pending::CensusWrite {
            family: self.family,
            kind,
            run: Some(run),
            old,
            new,
            tag: self.p.tag,
        });
    }

    /// After `chain` (`None`: every chain) of `kind` was flushed: its runs'
    /// sets go too. O(runs + members of the dropped runs' table).
    pub(crate) fn drop_runs_in(&mut self, kind: TableKind, chain: Option<&str>) {
        let (fam, tname) = (layout::nft_family(self.family), layout::table_name(kind));
        let mut gone = Vec::new();
        for (i, slot) in self.view.runs.iter_mut().enumerate() {
            if slot
                .as_ref()
                .is_some_and(|r| r.kind == kind && chain.is_none_or(|c| r.chain == c))
            {
                let run = slot.take().expect("checked");
                self.p
                    .batch
                    .delete(&nft::Set::new(fam, &tname, &run.set), self.p.tag);
                gone.push((i as u32, run));
            }
        }
        if !gone.is_empty() {
            let idx: std::collections::HashSet<u32> = gone.iter().map(|(i, _)| *i).collect();
            self.view
                .members
                .retain(|(k, _), ri| !(*k == kind && idx.contains(ri)));
            for (_, run) in gone {
                self.write_census(kind, &run.set, run.census, None);
                self.p.dropped_sets.push((self.family, kind, run.set));
            }
            self.p.side_effects.insert((self.family, kind));
        }
    }

    /// After a flush of `chain` (`None`: every chain) of `kind`: delete the
    /// run sets a partial read found used by it without reading its rules
    /// (see [`crate::read::unread_run_sets`]), except those already
    /// dropped; after the flush, so the kernel drops their last reference
    /// first.
    pub(crate) fn drop_unread_run_sets(&mut self, kind: TableKind, chain: Option<&str>) {
        let Some(names) = self
            .view
            .unread_run_sets
            .remove(&(kind, chain.map(str::to_string)))
        else {
            return;
        };
        let (fam, tname) = (layout::nft_family(self.family), layout::table_name(kind));
        for n in names {
            let key = (self.family, kind, n);
            if self.p.dropped_sets.contains(&key) {
                continue;
            }
            self.p
                .batch
                .delete(&nft::Set::new(fam, &tname, &key.2), self.p.tag);
            self.p.side_effects.insert((self.family, kind));
            self.p.dropped_sets.push(key);
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
                .is_some_and(|p| self.view.run_of(t.kind(), p.id) == Some(ri));
        if prev_same {
            return None;
        }
        self.view.runs.get(ri as usize)?.as_ref().map(|r| r.rule)
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
        let Some(run) = self.view.runs.get(ri as usize).and_then(Option::clone) else {
            return Ok(());
        };
        let rules: Vec<(RuleId, Rule, Counters)> = t
            .rules(&run.chain)
            .map_err(|e| Error::other(e.to_string()))?
            .filter(|r| self.view.run_of(kind, r.id) == Some(ri) || Some(r.id) == extra)
            .map(|r| (r.id, r.body.clone(), r.counters))
            .collect();
        for (id, body, c) in &rules {
            self.view.members.remove(&(kind, *id));
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
        self.view
            .members
            .retain(|(k, _), i| !(*k == kind && *i == ri));
        self.drop_run(ri);
        Ok(())
    }

    /// Set member `id`'s counter to `c` (zero for `-Z`): its element is
    /// deleted and added again with a fresh counter (same key, verdict and
    /// userdata).
    pub(crate) fn zero_member(&mut self, kind: TableKind, id: RuleId, body: &Rule, c: Counters) {
        let Some(ri) = self.view.run_of(kind, id) else {
            return;
        };
        // The start elements only: an interval member's end marker stays.
        // A multiport member's counter is `c` in its first element, zero
        // in the others.
        let Some((set, keys, _)) = self.elem_keys(ri, body) else {
            return;
        };
        let map = self.view.runs[ri as usize].as_ref().is_some_and(|r| r.map);
        let (fam, tname) = (layout::nft_family(self.family), layout::table_name(kind));
        self.p.batch.delete(
            &SetElems::new(
                fam,
                &tname,
                &set,
                keys.iter().map(|k| SetElem::key(k)).collect(),
            ),
            self.p.tag,
        );
        let data = if map {
            self.verdict_data(kind, compile::runs::verdict_of(&body.target))
        } else {
            None
        };
        // The text is unchanged: the catalog keeps any overflow as it is.
        let (text, comment) = rule_text(self.family, body);
        let ud = userdata::encode(id, &text, comment).bytes;
        let els = member_elems(&keys, data, &ud, |i| {
            Some(if i == 0 { c } else { Counters::default() })
        });
        self.p
            .batch
            .add(&SetElems::new(fam, &tname, &set, els), self.p.tag);
    }
}

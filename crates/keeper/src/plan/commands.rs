//! One function per iptables command: apply it to the model, then mirror
//! what it changed into the batch.

use super::emit::ids;
use super::{Loc, Planner};
use compile::layout;
use iptables::exec::execute_owned;
use iptables::parse::Parsed;
use iptables::{Error, Rule};
use nft::batch::Placement;
use nft::Chain;
use ruleset::{Counters, RuleId, Table, TableKind};

impl Planner<'_> {
    /// `-A`: plain rules, or (runs compiled, the chain's end known) run
    /// elements and new runs (see [`super::runs`]).
    pub(crate) fn append(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        chain: &str,
        out: &mut String,
    ) -> Result<(), Error> {
        let key = (self.family, kind, chain.to_string());
        let runs = !self.opts.plain_appends
            && self.opts.compile.is_some()
            && (self.p.tails.contains_key(&key) || self.opts.whole_model);
        if runs && !self.p.tails.contains_key(&key) {
            let tail = self.tail_from_model(kind, t, chain);
            self.p.tails.insert(key.clone(), tail);
        }
        let before = t.chain(chain).map(|c| c.len).unwrap_or(0);
        execute_owned(t, p, out)?;
        let after = t.chain(chain).map(|c| c.len).unwrap_or(0);
        // By position, O(log n) each: walking the chain to skip the old
        // rules made a restore of one long chain O(n²).
        let added: Vec<(RuleId, Rule, Counters)> = (before + 1..=after)
            .filter_map(|pos| t.rule_at(chain, pos).ok())
            .map(|r| (r.id, r.body.clone(), r.counters))
            .collect();
        for (id, r, c) in added {
            if !runs {
                self.new_rule(kind, chain, id, &r, c, Placement::Append, None)?;
                // The chain now ends with this plain rule: a later write of
                // the batch must not join the run before it (a write
                // replayed plain because that run's set is full).
                if let Some(tail) = self.p.tails.get_mut(&key) {
                    tail.run = None;
                    match self.view.locs.get(&(kind, id)) {
                        Some(loc) => tail.plain.push((id, r, c, *loc)),
                        None => tail.plain.clear(),
                    }
                }
                continue;
            }
            // An identical rule before it: the run may hold its key.
            let twin = self.opts.whole_model
                && t.find_spec(chain, &r)
                    .ok()
                    .flatten()
                    .is_some_and(|(_, first)| first != id);
            self.append_to_tail(kind, chain, (id, r, c), twin)?;
        }
        Ok(())
    }

    /// `-I CHAIN N`: the new rules go, in model order, before the rule that
    /// was at N; in front of a run's first member before the run's rule; in
    /// front of another member the run becomes plain rules first.
    pub(crate) fn insert(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        chain: &str,
        n: usize,
        out: &mut String,
    ) -> Result<(), Error> {
        let k = p.rules.len();
        let anchor = t.rule_at(chain, n).ok().map(|r| r.id);
        let mut in_front = None;
        if let Some(ri) = anchor.and_then(|a| self.view.run_of(kind, a)) {
            match self.front_of_run(t, chain, n, ri) {
                Some(l) => in_front = Some(l),
                None => self.explode(kind, t, ri, None)?,
            }
        }
        execute_owned(t, p, out)?;
        let anchor_loc = in_front.or_else(|| anchor.and_then(|a| self.view.loc(kind, a)));
        // With no rule at N: at the kernel chain's head when N is 1 (its
        // rules may not have been read), else at its end.
        let mut prev: Option<Loc> = None;
        for pos in n..n + k {
            let (id, body, c) = t
                .rule_at(chain, pos)
                .map(|r| (r.id, r.body.clone(), r.counters))
                .map_err(|e| Error::other(e.to_string()))?;
            let (placement, at) = match (anchor_loc, prev) {
                (Some(a), _) => (Placement::Insert, Some(a)),
                (None, Some(p)) => (Placement::Append, Some(p)),
                (None, None) if n == 1 => (Placement::Insert, None),
                (None, None) => (Placement::Append, None),
            };
            self.new_rule(kind, chain, id, &body, c, placement, at)?;
            prev = self.view.loc(kind, id);
        }
        Ok(())
    }

    /// `-R CHAIN N`: the kernel rule replaced by handle; a run member's
    /// replacement is a plain rule in its place (the run becomes plain
    /// rules around it).
    pub(crate) fn replace(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        chain: &str,
        n: usize,
        out: &mut String,
    ) -> Result<(), Error> {
        let old = t.rule_at(chain, n).ok().map(|r| r.id);
        let old_run = old.and_then(|o| self.view.run_of(kind, o));
        execute_owned(t, p, out)?;
        let (id, body, c) = t
            .rule_at(chain, n)
            .map(|r| (r.id, r.body.clone(), r.counters))
            .map_err(|e| Error::other(e.to_string()))?;
        let at = old.and_then(|o| self.view.loc(kind, o));
        if let Some(o) = old {
            self.view.members.remove(&(kind, o));
            if o != id {
                self.forget_rule(kind, o);
            } else {
                self.drop_overflow(kind, o);
            }
        }
        if let Some(ri) = old_run {
            return self.explode(kind, t, ri, Some(id));
        }
        self.new_rule(kind, chain, id, &body, c, Placement::Replace, at)
    }

    /// `-D CHAIN RULE...`: each rule by spec; a run member is one element
    /// delete.
    pub(crate) fn delete(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        chain: &str,
        out: &mut String,
    ) -> Result<(), Error> {
        for r in p.rules.clone() {
            let id = t.find_spec(chain, &r).ok().flatten().map(|x| x.1);
            let one = Parsed {
                rules: vec![r],
                ..p.clone()
            };
            execute_owned(t, one.clone(), out)?;
            let member = match id {
                Some(i) => self.del_member_in(kind, t, i, &one.rules[0])?,
                None => false,
            };
            if !member {
                self.del_rule(kind, chain, id);
            }
        }
        Ok(())
    }

    /// `-D CHAIN N`.
    pub(crate) fn delete_num(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        chain: &str,
        n: usize,
        out: &mut String,
    ) -> Result<(), Error> {
        let at = t.rule_at(chain, n).ok();
        let id = at.as_ref().map(|r| r.id);
        let member = at
            .filter(|r| self.view.run_of(kind, r.id).is_some())
            .map(|r| (r.id, r.body.clone()));
        execute_owned(t, p, out)?;
        match member {
            Some((i, body)) => {
                self.del_member_in(kind, t, i, &body)?;
            }
            None => self.del_rule(kind, chain, id),
        }
        Ok(())
    }

    /// `-F [CHAIN]`: one rule delete naming the chain (or, for every chain,
    /// none: one message for the whole table, where one per chain cost
    /// O(chains) messages to build, send and parse); the flushed chains'
    /// run sets go too.
    pub(crate) fn flush(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        chain: Option<String>,
        out: &mut String,
    ) -> Result<(), Error> {
        // The flushed rules' overflow texts and kernel locations go; without
        // either there is nothing to forget. A flush of every chain without
        // overflow texts forgets the table's locations at once
        // ([`Pending::forget_table_rules`]: O(1) here, one pass at settle);
        // with them, it takes the ids from the rule slab (no chain sort,
        // no names).
        let no_overflow = self.view.overflow.is_empty();
        let whole = chain.is_none() && no_overflow && self.opts.echo;
        let gone: Vec<RuleId> = if (no_overflow && !self.opts.echo) || whole {
            Vec::new()
        } else {
            match chain.as_deref() {
                Some(c) => ids(t, c),
                None => t.rule_ids().collect(),
            }
        };
        // Known empty (no rule of the model, none foreign, no unread run
        // set), or a registered chain (no kernel chain to flush): the
        // kernel would commit nothing and keep its generation, which a
        // committer counting on the next one must not meet.
        let empty = match chain.as_deref() {
            Some(c) if self.is_virtual(kind, c) => true,
            Some(c) => {
                self.view.knows_rules(kind, c, self.opts.whole_model)
                    && t.chain(c).is_some_and(|v| v.len == 0)
                    && !self
                        .view
                        .unread_run_sets
                        .contains_key(&(kind, chain.clone()))
            }
            None => {
                t.rule_count() == 0
                    && t.chains()
                        .iter()
                        .all(|v| self.view.knows_rules(kind, v.name, self.opts.whole_model))
                    && !self.view.unread_run_sets.contains_key(&(kind, None))
            }
        };
        execute_owned(t, p, out)?;
        // A flushed chain's read end is gone with its rules: an append
        // after the flush must not join a run whose set the flush deletes.
        let family = self.family;
        match chain.as_deref() {
            Some(c) => {
                self.p.tails.remove(&(family, kind, c.to_string()));
            }
            None => self
                .p
                .tails
                .retain(|(f, k, _), _| (*f, *k) != (family, kind)),
        }
        if empty {
            return Ok(());
        }
        if whole {
            let family = self.family;
            self.p.forget_table_rules(family, kind);
        }
        for id in gone {
            self.forget_rule(kind, id);
        }
        self.flush_chain(kind, chain.as_deref().unwrap_or(""));
        self.drop_runs_in(kind, chain.as_deref());
        self.drop_unread_run_sets(kind, chain.as_deref());
        Ok(())
    }

    /// `-N CHAIN`: a registry entry (see `super::registry`), not a kernel
    /// chain, until a rule goes into it or names it.
    pub(crate) fn new_chain(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        c: String,
        out: &mut String,
    ) -> Result<(), Error> {
        execute_owned(t, p, out)?;
        self.name_free(kind, &c)?;
        if self.set_virtual(kind, &c, true) {
            return Ok(());
        }
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        let ch = Chain::new(fam, &tname, &c);
        // Not echoed even for a long-lived model: only a rename needs a
        // chain's handle, and it is fetched then (`crate::txn::fetch_rename_handles`);
        // echoing 50k chains of a restore cost the daemon a fifth of it.
        let tag = self.p.tag;
        self.p.batch.create(&ch, tag);
        Ok(())
    }

    /// `-X [CHAIN]`: non-recursive deletes. The kernel refuses (EBUSY) a
    /// chain that still has rules or references, which a partial read
    /// cannot see (the engine then reads more to word the error).
    pub(crate) fn delete_chain(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        c: Option<String>,
        out: &mut String,
    ) -> Result<(), Error> {
        let names: Vec<String> = match &c {
            Some(c) => vec![c.clone()],
            None => t
                .chains()
                .iter()
                .filter(|c| c.policy.is_none())
                .map(|c| c.name.to_string())
                .collect(),
        };
        execute_owned(t, p, out)?;
        let tag = self.p.tag;
        for n in names {
            // A chain created under this name later in the batch starts
            // with no end read.
            self.p.tails.remove(&(self.family, kind, n.clone()));
            if self.is_virtual(kind, &n) {
                self.set_virtual(kind, &n, false);
                continue;
            }
            let c = self.chain_key(kind, &n);
            self.p.batch.delete_nonrec(&c, tag);
            self.p.names.deleted(self.family, kind, &n);
        }
        Ok(())
    }

    /// `-E OLD NEW`: a registered chain's entry is deleted and NEW's added
    /// (at the batch's end, see `super::registry`). A kernel chain is
    /// renamed by handle: the kernel's jumps follow the chain object;
    /// referring rules keep the old name in their userdata text, and
    /// reading takes the target from the verdict (crate::read), so a
    /// rename is O(1) and reads no referring rule.
    /// The kernel renames at commit: until then the rest of the batch
    /// names the chain as before (see `super::names`).
    pub(crate) fn rename(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        old: &str,
        new: &str,
        out: &mut String,
    ) -> Result<(), Error> {
        let handle = self
            .view
            .chain_handles
            .get(&(kind, old.to_string()))
            .copied();
        execute_owned(t, p, out)?;
        if self.is_virtual(kind, old) {
            self.name_free(kind, new)?;
            if self.set_virtual(kind, new, true) {
                self.set_virtual(kind, old, false);
                self.p.tails.remove(&(self.family, kind, old.to_string()));
                return Ok(());
            }
            // NEW is too long to register: a kernel chain.
            self.set_virtual(kind, old, false);
            let (fam, tname) = (self.fam(), layout::table_name(kind));
            let tag = self.p.tag;
            self.p.batch.create(&Chain::new(fam, &tname, new), tag);
            return Ok(());
        }
        let Some(h) = handle else {
            return Err(Error::other(
                "renaming a chain created in the same batch is not supported yet",
            ));
        };
        self.name_free(kind, new)?;
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        let mut c = Chain::new(fam, &tname, new);
        c.handle = Some(h);
        let tag = self.p.tag;
        self.p.batch.add(&c, tag);
        self.p.side_effects.insert((self.family, kind));
        let tag = self.p.tag;
        self.p.names.rename(self.family, kind, old, new, tag);
        self.view.rename_chain(kind, old, new);
        // Keyed by name: a chain created as OLD later in the batch must
        // not find this one's end.
        self.p.tails.remove(&(self.family, kind, old.to_string()));
        Ok(())
    }

    /// A chain may take name `name` in this batch: no chain the batch
    /// renamed still has it in the kernel (which would refuse, EEXIST).
    /// When another write of the group renamed it, this write waits for
    /// the next batch ([`Pending::deferred`]), where the name is free.
    fn name_free(&mut self, kind: TableKind, name: &str) -> Result<(), Error> {
        let Some(now) = self.p.names.taken(self.family, kind, name) else {
            return Ok(());
        };
        let by = self.p.names.renamed_by(self.family, kind, now);
        if by.is_some_and(|t| t != self.p.tag) {
            self.p.deferred = true;
        }
        Err(Error::op(format!(
            "Chain name {name} cannot be reused in the transaction that renamed \
             chain {name} to {now} (the kernel renames at commit)."
        )))
    }

    /// `-P CHAIN POLICY`: the base chain's policy and its counters (`-c`'s,
    /// or a restore's `:CHAIN POLICY [p:b]` under `--counters`; else zero).
    pub(crate) fn policy(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        chain: &str,
        out: &mut String,
    ) -> Result<(), Error> {
        let (policy, counters) = match &p.command {
            iptables::parse::Command::Policy(_, policy, counters) => (*policy, *counters),
            _ => return Err(Error::other("not a policy command")),
        };
        execute_owned(t, p, out)?;
        let mut c = self.chain_key(kind, chain);
        c.policy = Some(super::emit::nft_policy(policy));
        c.counters = Some((counters.bytes, counters.packets));
        let tag = self.p.tag;
        self.p.batch.add(&c, tag);
        Ok(())
    }
}

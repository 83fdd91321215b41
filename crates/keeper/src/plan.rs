//! Mirroring commands into one nftables batch.
//!
//! Each command is first applied to the model with iptables' semantics and
//! messages (`iptables::exec`); what it changed is then expressed as the
//! smallest set of kernel messages: a rule append/insert/replace/delete by
//! handle (or by batch-local id for rules created earlier in the same
//! batch), a chain flush, a chain add/delete/rename, a policy update. No
//! chain is re-read or re-written to change one rule.

use crate::runs::RunLoc;
use compile::runs::RunOpts;
use compile::userdata::{self, catalog};
use compile::{layout, lower_rule, rebase_lookups};
use iptables::exec::{execute_owned, Apply};
use iptables::ext::Match;
use iptables::parse::{Command, Parsed};
use iptables::print::save::{save_rule_body, CounterStyle};
use iptables::{Error, Rule};
use nft::batch::Placement;
use nft::{Batch, Chain, Tag};
use ruleset::{Counters, Family, Policy, RuleId, Table, TableKind};
use std::collections::{HashMap, HashSet};

/// Where a rule is in the kernel: by handle, or created in this batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    Handle(u64),
    New(u32),
}

/// The kernel side of a run of commands: the batch being built and what it
/// needs to address existing objects.
pub struct KernelApply {
    pub family: Family,
    pub batch: Batch,
    /// Tables that exist in the kernel or are created by this batch.
    pub present: HashSet<TableKind>,
    pub locs: HashMap<(TableKind, RuleId), Loc>,
    pub chain_handles: HashMap<(TableKind, String), u64>,
    /// Catalog chunks of rules whose text overflows their userdata.
    pub overflow: HashMap<(TableKind, RuleId), u32>,
    /// Tag of the messages being added (the command or restore line).
    pub tag: Tag,
    /// Ask the kernel to echo created rules and chains so their handles can
    /// be learnt after the commit (a long-lived model needs them; direct
    /// mode throws the model away and leaves this off).
    pub echo: bool,
    /// With `echo`: what each echoing message creates, by sequence number
    /// (ascending). See [`KernelApply::learn`].
    pub created: Vec<(u32, Created)>,
    /// With `echo`: rules deleted or flushed by this batch; their locations
    /// are dropped once it commits ([`KernelApply::learn`]), kept if it is
    /// abandoned. (Direct mode drops its maps with the process.)
    pub forgotten: Vec<(TableKind, RuleId)>,
    /// Tables whose chain handles or catalog bookkeeping this batch changed
    /// (renames, dropped overflow text): undoing the batch's commands in
    /// the model does not undo these, so an abandoned batch means those
    /// tables must be re-read.
    pub side_effects: HashSet<TableKind>,
    /// Compile runs of similar rules into sets and verdict maps when a
    /// restore replaces a table (see [`crate::runs`]); `None`: every
    /// logical rule is its own kernel rule.
    pub compile: Option<RunOpts>,
    /// Runs in the kernel, by index (`None` once gone).
    pub runs: Vec<Option<RunLoc>>,
    /// The run each compiled logical rule is an element of.
    pub members: HashMap<(TableKind, RuleId), u32>,
    /// Tables this batch replaces (restore without --noflush).
    pub(crate) fresh: HashSet<TableKind>,
    /// Chains whose appends wait for [`KernelApply::finish`], in order.
    pub(crate) deferred: Vec<(TableKind, String)>,
    /// Flushes in this batch of tables it does not replace (`None`: every
    /// chain): a session deletes the run sets of those chains it did not
    /// read (see [`crate::read::run_sets_used_by`]).
    pub(crate) flushed: Vec<(TableKind, Option<String>)>,
    /// Run sets this batch deletes, so none is deleted twice.
    pub(crate) dropped_sets: Vec<(TableKind, String)>,
    /// Ends of chains read for appends ([`crate::read::tail`]): appends to
    /// them join or start runs.
    pub tails: HashMap<(TableKind, String), crate::read::Tail>,
    /// The model holds whole tables (the daemon): appends find the chain's
    /// end in it instead of reading the kernel ([`KernelApply::compile`]
    /// must be on too).
    pub model_tails: bool,
    /// This batch adds a rule to an existing run: the kernel refuses it
    /// (EEXIST) when the rule's key is already in the run, and the caller
    /// then appends it as a plain rule instead.
    pub joined_run: bool,
    next_rule_id: u32,
    pub(crate) next_set_id: u32,
}

/// An object a batch creates whose kernel handle is learnt from its echo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Created {
    Rule(TableKind, RuleId),
    Chain(TableKind, String),
    /// The kernel rule of run `runs[i]`.
    Run(u32),
}

/// A point to roll a [`KernelApply`] back to (see [`KernelApply::mark`]).
#[derive(Clone, Copy, Debug)]
pub struct ApplyMark {
    batch: nft::batch::Mark,
    created: usize,
    forgotten: usize,
    /// Which of the (at most five) tables were present: a truncated
    /// command may have created one.
    present: [bool; 5],
}

fn kind_index(k: TableKind) -> usize {
    SAVE_KINDS.iter().position(|x| *x == k).unwrap_or(0)
}

const SAVE_KINDS: [TableKind; 5] = [
    TableKind::Filter,
    TableKind::Nat,
    TableKind::Mangle,
    TableKind::Raw,
    TableKind::Security,
];

fn unsupported(e: impl std::fmt::Display) -> Error {
    Error::param(e.to_string())
}

impl KernelApply {
    pub fn new(family: Family, batch: Batch) -> Self {
        KernelApply {
            family,
            batch,
            present: HashSet::new(),
            locs: HashMap::new(),
            chain_handles: HashMap::new(),
            overflow: HashMap::new(),
            tag: 0,
            echo: false,
            created: Vec::new(),
            forgotten: Vec::new(),
            side_effects: HashSet::new(),
            compile: None,
            runs: Vec::new(),
            members: HashMap::new(),
            fresh: HashSet::new(),
            deferred: Vec::new(),
            flushed: Vec::new(),
            dropped_sets: Vec::new(),
            tails: HashMap::new(),
            model_tails: false,
            joined_run: false,
            next_rule_id: 1,
            next_set_id: first_set_id(),
        }
    }

    /// Start the next batch (a long-lived apply keeps its locations).
    pub fn rebatch(&mut self, batch: Batch) {
        self.batch = batch;
        self.created.clear();
        self.forgotten.clear();
        self.side_effects.clear();
        // Per batch: which tables it replaces, what waits for `finish`,
        // the chain ends read for it.
        self.fresh.clear();
        self.deferred.clear();
        self.flushed.clear();
        self.dropped_sets.clear();
        self.tails.clear();
        self.joined_run = false;
    }

    /// Where the batch is now: a command that fails half-way is cut back to
    /// here with [`KernelApply::truncate`] (its model changes are rolled
    /// back by the caller).
    pub fn mark(&self) -> ApplyMark {
        let mut present = [false; 5];
        for k in &self.present {
            present[kind_index(*k)] = true;
        }
        ApplyMark {
            batch: self.batch.mark(),
            created: self.created.len(),
            forgotten: self.forgotten.len(),
            present,
        }
    }

    /// Drop what was added since `m`. Catalog bookkeeping of a rule whose
    /// replacement failed may be lost (its catalog elements then stay until
    /// the table is restored); locations are unaffected.
    pub fn truncate(&mut self, m: ApplyMark) {
        self.batch.truncate(m.batch);
        self.created.truncate(m.created);
        self.forgotten.truncate(m.forgotten);
        self.present.retain(|k| m.present[kind_index(*k)]);
    }

    /// After a committed batch: record the handles the kernel echoed for
    /// the objects it created and forget deleted rules. Returns how many
    /// created objects got no handle (echoes lost to a receive overrun):
    /// the caller must re-read those tables. O(echoes · log created).
    pub fn learn(&mut self, echoes: &[nft::Echo]) -> usize {
        let mut learnt = 0;
        for e in echoes {
            let Some(h) = e.handle else { continue };
            let Ok(i) = self.created.binary_search_by_key(&e.seq, |(s, _)| *s) else {
                continue;
            };
            learnt += 1;
            match &self.created[i].1 {
                Created::Rule(k, id) => {
                    self.locs.insert((*k, *id), Loc::Handle(h));
                }
                Created::Chain(k, name) => {
                    self.chain_handles.insert((*k, name.clone()), h);
                }
                Created::Run(i) => {
                    if let Some(Some(r)) = self.runs.get_mut(*i as usize) {
                        r.rule = Loc::Handle(h);
                    }
                }
            }
        }
        for key in std::mem::take(&mut self.forgotten) {
            self.locs.remove(&key);
        }
        let missing = self.created.len() - learnt;
        self.created.clear();
        missing
    }

    pub(crate) fn alloc_set_id(&mut self) -> u32 {
        self.next_set_id += 1;
        self.next_set_id - 1
    }

    pub(crate) fn alloc_rule_id(&mut self) -> u32 {
        self.next_rule_id += 1;
        self.next_rule_id - 1
    }

    fn fam(&self) -> nft::Family {
        layout::nft_family(self.family)
    }

    /// Create our table and its base chains (policy ACCEPT) if it isn't there.
    pub fn ensure_table(&mut self, kind: TableKind) {
        if self.present.insert(kind) {
            self.add_table(kind);
        }
    }

    fn add_table(&mut self, kind: TableKind) {
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        self.batch.add(&nft::Table::new(fam, &tname), self.tag);
        for bc in layout::base_chains(kind) {
            let c = Chain::base(
                fam,
                &tname,
                bc.name,
                bc.chain_type,
                bc.hook,
                bc.priority,
                nft::chain::POLICY_ACCEPT,
            );
            self.batch.add(&c, self.tag);
        }
        let mut set = nft::Set::new(fam, &tname, catalog::SET);
        set.key_type = Some(catalog::KEY_TYPE);
        set.key_len = Some(catalog::KEY_LEN);
        set.id = Some(self.next_set_id);
        self.next_set_id += 1;
        self.batch.add(&set, self.tag);
    }

    /// Catalog elements of rule `id` (chunk numbers `0..n`).
    fn catalog_elems(&self, kind: TableKind, id: RuleId, n: u32) -> nft::SetElems {
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        let elems = (0..n)
            .map(|i| nft::SetElem::key(&catalog::key(id, i)))
            .collect();
        nft::SetElems::new(fam, &tname, catalog::SET, elems)
    }

    /// Forget a rule's overflow text (its catalog elements).
    pub(crate) fn drop_overflow(&mut self, kind: TableKind, id: RuleId) {
        if let Some(n) = self.overflow.remove(&(kind, id)) {
            self.side_effects.insert(kind);
            let es = self.catalog_elems(kind, id, n);
            self.batch.delete(&es, self.tag);
        }
    }

    fn loc(&self, kind: TableKind, id: RuleId) -> Option<Loc> {
        self.locs.get(&(kind, id)).copied()
    }

    /// NEWRULE for the model rule `id` (body `rule`) in `chain`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new_rule(
        &mut self,
        kind: TableKind,
        chain: &str,
        id: RuleId,
        rule: &Rule,
        counters: Counters,
        placement: Placement,
        at: Option<Loc>,
    ) -> Result<(), Error> {
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        let lowered = lower_rule(rule, self.family, kind, chain).map_err(unsupported)?;
        let mut exprs = lowered.exprs;
        // The rule's counters (-c, restore --counters) start its counter.
        for e in exprs.iter_mut() {
            if let nft::Expr::Counter { bytes, packets } = e {
                *bytes = counters.bytes;
                *packets = counters.packets;
            }
        }
        rebase_lookups(&mut exprs, self.next_set_id);
        for (i, set) in lowered.sets.iter().enumerate() {
            let (s, es) = set.to_nft(fam, &tname, self.next_set_id + i as u32);
            self.batch.add(&s, self.tag);
            self.batch.add(&es, self.tag);
        }
        self.next_set_id += lowered.sets.len() as u32;
        let ud = self.rule_userdata(kind, id, rule);
        let mut r = nft::Rule::new(fam, &tname, chain, exprs);
        r.userdata = Some(ud);
        let bid = self.next_rule_id;
        self.next_rule_id += 1;
        r.id = Some(bid);
        match (placement, at) {
            (Placement::Replace, Some(Loc::Handle(h))) => r.handle = Some(h),
            (Placement::Replace, _) => {
                return Err(Error::other(
                    "replacing a rule created earlier in the same batch is not supported yet",
                ))
            }
            (_, Some(Loc::Handle(h))) => r.position = Some(h),
            (_, Some(Loc::New(b))) => r.position_id = Some(b),
            (_, None) => {}
        }
        let seq = self.batch.add_rule(&r, placement, self.echo, self.tag);
        if self.echo {
            self.created.push((seq, Created::Rule(kind, id)));
        }
        self.locs.insert((kind, id), Loc::New(bid));
        Ok(())
    }

    /// The userdata that lets logical rule `id` be rebuilt from the kernel
    /// (id and canonical text; text beyond the kernel's limit goes to the
    /// catalog set in the same batch). Used for kernel rules and for run
    /// elements alike.
    pub(crate) fn rule_userdata(&mut self, kind: TableKind, id: RuleId, rule: &Rule) -> Vec<u8> {
        let mut text = String::new();
        save_rule_body(
            &mut text,
            self.family,
            rule,
            Counters::default(),
            CounterStyle::None,
        );
        let comment = rule.matches.iter().find_map(|m| match m {
            Match::Comment(c) => Some(c.text.as_str()),
            _ => None,
        });
        let ud = userdata::encode(id, &text, comment);
        if !ud.overflow.is_empty() {
            let parts = catalog::chunks(&ud.overflow);
            let mut es = self.catalog_elems(kind, id, parts.len() as u32);
            for (e, p) in es.elems.iter_mut().zip(&parts) {
                e.userdata = Some(catalog::value(p));
            }
            self.batch.add(&es, self.tag);
            self.overflow.insert((kind, id), parts.len() as u32);
        }
        ud.bytes
    }

    fn del_rule(&mut self, kind: TableKind, chain: &str, id: Option<RuleId>) {
        let loc = id.and_then(|i| self.loc(kind, i));
        if let Some(i) = id {
            self.drop_overflow(kind, i);
            if self.echo {
                self.forgotten.push((kind, i));
            }
        }
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        let mut r = nft::Rule::key(fam, &tname, chain, None);
        match loc {
            Some(Loc::Handle(h)) => r.handle = Some(h),
            Some(Loc::New(b)) => r.id = Some(b),
            None => return,
        }
        self.batch.delete(&r, self.tag);
    }

    /// Deletes every rule of `chain`, or of every chain of the table when
    /// `chain` is empty (the kernel's rule delete without a chain).
    fn flush_chain(&mut self, kind: TableKind, chain: &str) {
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        self.batch
            .delete(&nft::Rule::key(fam, &tname, chain, None), self.tag);
    }

    /// Rules of `chain` with ids, in order.
    fn ids(t: &Table<Rule>, chain: &str) -> Vec<RuleId> {
        t.rules(chain)
            .map(|it| it.map(|r| r.id).collect())
            .unwrap_or_default()
    }

    /// Apply one command to the model table `t` and mirror it into the batch.
    /// Listing output (for -L/-S) goes to `out`.
    pub fn run(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        out: &mut String,
    ) -> Result<(), Error> {
        let writes = !matches!(
            p.command,
            Command::Check(_)
                | Command::List { zero: false, .. }
                | Command::ListRules { zero: false, .. }
                | Command::Help
                | Command::Version
        );
        if !writes {
            return iptables::exec::execute(t, &p, out);
        }
        self.ensure_table(kind);
        if !matches!(
            p.command,
            Command::Append(_) | Command::NewChain(_) | Command::Policy(..)
        ) {
            self.undefer(kind, t)?;
        }
        match p.command.clone() {
            Command::Append(chain) if self.defers(kind) => {
                execute_owned(t, p, out)?;
                self.defer(kind, &chain);
            }
            Command::Append(chain) => {
                // Runs: the chain's end as read for this command, or (a
                // whole model) as the model has it.
                let key = (kind, chain.clone());
                let runs =
                    self.tails.contains_key(&key) || (self.model_tails && self.compile.is_some());
                if runs && !self.tails.contains_key(&key) {
                    let tail = self.tail_from_model(kind, t, &chain);
                    self.tails.insert(key, tail);
                }
                let before = t.chain(&chain).map(|c| c.len).unwrap_or(0);
                execute_owned(t, p, out)?;
                let after = t.chain(&chain).map(|c| c.len).unwrap_or(0);
                // By position, O(log n) each: walking the chain to skip the
                // old rules made a restore of one long chain O(n²).
                let added: Vec<(RuleId, Rule, Counters)> = (before + 1..=after)
                    .filter_map(|pos| t.rule_at(&chain, pos).ok())
                    .map(|r| (r.id, r.body.clone(), r.counters))
                    .collect();
                for (id, r, c) in added {
                    if !runs {
                        self.new_rule(kind, &chain, id, &r, c, Placement::Append, None)?;
                        continue;
                    }
                    // An identical rule before it: the run may hold its key.
                    let twin = self.model_tails
                        && t.find_spec(&chain, &r)
                            .ok()
                            .flatten()
                            .is_some_and(|(_, first)| first != id);
                    self.append_to_tail(kind, &chain, (id, r, c), twin)?;
                }
            }
            Command::Insert(chain, n) => {
                let k = p.rules.len();
                let anchor = t.rule_at(&chain, n).ok().map(|r| r.id);
                // In front of a run member: before the run's rule when it
                // is the run's first member, else the run becomes plain
                // rules first (crate::runs).
                let mut in_front = None;
                if let Some(ri) = anchor.and_then(|a| self.run_of(kind, a)) {
                    match self.front_of_run(t, &chain, n, ri) {
                        Some(l) => in_front = Some(l),
                        None => self.explode(kind, t, ri, None)?,
                    }
                }
                execute_owned(t, p, out)?;
                let anchor_loc = in_front.or_else(|| anchor.and_then(|a| self.loc(kind, a)));
                // New rules go, in model order, before the rule that was at
                // n; with no such rule: at the kernel chain's head when n is
                // 1 (its rules may not have been read), else at its end.
                let mut prev: Option<Loc> = None;
                for pos in n..n + k {
                    let (id, body, c) = t
                        .rule_at(&chain, pos)
                        .map(|r| (r.id, r.body.clone(), r.counters))
                        .map_err(|e| Error::other(e.to_string()))?;
                    let (placement, at) = match (anchor_loc, prev) {
                        (Some(a), _) => (Placement::Insert, Some(a)),
                        (None, Some(p)) => (Placement::Append, Some(p)),
                        (None, None) if n == 1 => (Placement::Insert, None),
                        (None, None) => (Placement::Append, None),
                    };
                    self.new_rule(kind, &chain, id, &body, c, placement, at)?;
                    prev = self.loc(kind, id);
                }
            }
            Command::Replace(chain, n) => {
                let old = t.rule_at(&chain, n).ok().map(|r| r.id);
                let old_run = old.and_then(|o| self.run_of(kind, o));
                execute_owned(t, p, out)?;
                let (id, body, c) = t
                    .rule_at(&chain, n)
                    .map(|r| (r.id, r.body.clone(), r.counters))
                    .map_err(|e| Error::other(e.to_string()))?;
                if let (Some(o), Some(ri)) = (old, old_run) {
                    // A member's replacement is a plain rule in its place:
                    // the run becomes plain rules around it.
                    self.drop_overflow(kind, o);
                    self.members.remove(&(kind, o));
                    if o != id && self.echo {
                        self.forgotten.push((kind, o));
                    }
                    return self.explode(kind, t, ri, Some(id));
                }
                let at = old.and_then(|o| self.loc(kind, o));
                if let Some(o) = old {
                    self.drop_overflow(kind, o);
                    if o != id && self.echo {
                        self.forgotten.push((kind, o));
                    }
                }
                self.new_rule(kind, &chain, id, &body, c, Placement::Replace, at)?;
            }
            Command::Delete(chain) => {
                for r in p.rules.clone() {
                    let id = t.find_spec(&chain, &r).ok().flatten().map(|x| x.1);
                    let one = Parsed {
                        rules: vec![r],
                        ..p.clone()
                    };
                    execute_owned(t, one.clone(), out)?;
                    let member = id.is_some_and(|i| self.del_member(kind, i, &one.rules[0]));
                    if !member {
                        self.del_rule(kind, &chain, id);
                    }
                }
            }
            Command::DeleteNum(chain, n) => {
                let at = t.rule_at(&chain, n).ok();
                let id = at.as_ref().map(|r| r.id);
                let member = at
                    .filter(|r| self.run_of(kind, r.id).is_some())
                    .map(|r| (r.id, r.body.clone()));
                execute_owned(t, p, out)?;
                match member {
                    Some((i, body)) => {
                        self.del_member(kind, i, &body);
                    }
                    None => self.del_rule(kind, &chain, id),
                }
            }
            Command::Flush(chain) => {
                let chains: Vec<String> = match &chain {
                    Some(c) => vec![c.clone()],
                    None => t.chains().iter().map(|c| c.name.to_string()).collect(),
                };
                let gone: Vec<RuleId> = chains.iter().flat_map(|c| Self::ids(t, c)).collect();
                execute_owned(t, p, out)?;
                for id in gone {
                    self.drop_overflow(kind, id);
                    if self.echo {
                        self.forgotten.push((kind, id));
                    }
                }
                // Without a chain: one message for the whole table (a rule
                // delete naming no chain), where one message per chain cost
                // O(chains) messages to build, send and parse.
                self.flush_chain(kind, chain.as_deref().unwrap_or(""));
                self.drop_runs_in(kind, &chains);
                if !self.fresh.contains(&kind) {
                    self.flushed.push((kind, chain));
                }
            }
            Command::Zero { chain, num } => {
                let chains: Vec<String> = match &chain {
                    Some(c) => vec![c.clone()],
                    None => t.chains().iter().map(|c| c.name.to_string()).collect(),
                };
                execute_owned(t, p, out)?;
                self.zero(kind, t, &chains, num)?;
            }
            Command::NewChain(c) => {
                execute_owned(t, p, out)?;
                let (fam, tname) = (self.fam(), layout::table_name(kind));
                let ch = Chain::new(fam, &tname, &c);
                if self.echo {
                    let seq = self.batch.create_echo(&ch, self.tag);
                    self.created.push((seq, Created::Chain(kind, c)));
                } else {
                    self.batch.create(&ch, self.tag);
                }
            }
            Command::DeleteChain(c) => {
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
                let (fam, tname) = (self.fam(), layout::table_name(kind));
                // Non-recursive: the kernel refuses (EBUSY) a chain that
                // still has rules or references, which a partial read
                // cannot see (the session re-reads to word the error).
                for n in names {
                    self.batch
                        .delete_nonrec(&Chain::new(fam, &tname, &n), self.tag);
                }
            }
            Command::Rename(old, new) => {
                let handle = self.chain_handles.get(&(kind, old.clone())).copied();
                execute_owned(t, p, out)?;
                let Some(h) = handle else {
                    return Err(Error::other(
                        "renaming a chain created in the same batch is not supported yet",
                    ));
                };
                let (fam, tname) = (self.fam(), layout::table_name(kind));
                let mut c = Chain::new(fam, &tname, &new);
                c.handle = Some(h);
                self.batch.add(&c, self.tag);
                self.side_effects.insert(kind);
                self.chain_handles.remove(&(kind, old.clone()));
                self.chain_handles.insert((kind, new.clone()), h);
                for r in self.runs.iter_mut().flatten() {
                    if r.kind == kind && r.chain == old {
                        r.chain = new.clone();
                    }
                }
                // The kernel's jumps follow the chain object; referring
                // rules keep the old name in their userdata text, and
                // reading takes the target from the verdict (crate::read),
                // so a rename is O(1) and needs no referring rule read.
            }
            Command::Policy(chain, policy, counters) => {
                execute_owned(t, p, out)?;
                let (fam, tname) = (self.fam(), layout::table_name(kind));
                let mut c = Chain::new(fam, &tname, &chain);
                c.policy = Some(match policy {
                    Policy::Accept => nft::chain::POLICY_ACCEPT,
                    Policy::Drop => nft::chain::POLICY_DROP,
                });
                if let Some(k) = counters {
                    c.counters = Some((k.bytes, k.packets));
                }
                self.batch.add(&c, self.tag);
            }
            Command::List { .. } | Command::ListRules { .. } => {
                // -L/-S with -Z: list, then zero.
                let (chain, num) = match &p.command {
                    Command::List { chain, num, .. } | Command::ListRules { chain, num, .. } => {
                        (chain.clone(), *num)
                    }
                    _ => (None, None),
                };
                let chains: Vec<String> = match &chain {
                    Some(c) => vec![c.clone()],
                    None => t.chains().iter().map(|c| c.name.to_string()).collect(),
                };
                execute_owned(t, p, out)?;
                self.zero(kind, t, &chains, num)?;
            }
            Command::Check(_) | Command::Help | Command::Version => {}
        }
        Ok(())
    }

    /// Zero counters in the kernel: rules are replaced by themselves with a
    /// fresh counter (nftables has no per-rule counter reset that keeps the
    /// handle otherwise); base-chain policy counters are set to zero.
    fn zero(
        &mut self,
        kind: TableKind,
        t: &Table<Rule>,
        chains: &[String],
        num: Option<usize>,
    ) -> Result<(), Error> {
        for c in chains {
            let ids = Self::ids(t, c);
            let picked: Vec<RuleId> = match num {
                Some(n) => ids.get(n.wrapping_sub(1)).copied().into_iter().collect(),
                None => ids,
            };
            for id in picked {
                if self.run_of(kind, id).is_some() {
                    if let Some((_, _, r)) = t.rule_by_id(id) {
                        let body = r.body.clone();
                        self.zero_member(kind, id, &body);
                    }
                    continue;
                }
                let Some(at @ Loc::Handle(_)) = self.loc(kind, id) else {
                    continue;
                };
                let body = t.rule_by_id(id).map(|(_, _, r)| r.body.clone());
                if let Some(body) = body {
                    self.new_rule(
                        kind,
                        c,
                        id,
                        &body,
                        Counters::default(),
                        Placement::Replace,
                        Some(at),
                    )?;
                }
            }
            if num.is_none() && t.is_builtin(c) {
                let (fam, tname) = (self.fam(), layout::table_name(kind));
                let mut ch = Chain::new(fam, &tname, c);
                ch.counters = Some((0, 0));
                self.batch.add(&ch, self.tag);
            }
        }
        Ok(())
    }
}

impl Apply for KernelApply {
    fn fresh_table(&mut self, kind: TableKind) -> Result<(), Error> {
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        if self.present.contains(&kind) {
            self.batch.delete(&nft::Table::new(fam, &tname), self.tag);
        }
        self.present.insert(kind);
        self.fresh.insert(kind);
        self.deferred.retain(|(k, _)| *k != kind);
        for r in self.runs.iter_mut() {
            if r.as_ref().is_some_and(|r| r.kind == kind) {
                *r = None;
            }
        }
        self.members.retain(|(k, _), _| *k != kind);
        self.locs.retain(|(k, _), _| *k != kind);
        self.chain_handles.retain(|(k, _), _| *k != kind);
        self.overflow.retain(|(k, _), _| *k != kind);
        self.add_table(kind);
        Ok(())
    }

    fn apply(&mut self, kind: TableKind, t: &mut Table<Rule>, p: Parsed) -> Result<(), Error> {
        self.run(kind, t, p, &mut String::new())
    }
}

/// First batch-local set id (ids also name anonymous sets, `__nfk_set<id>`):
/// a different base per process, so a batch never creates an anonymous set
/// under the name of one still bound to a rule it replaces.
fn first_set_id() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let r = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    ((r as u32) & 0x3fff_ffff) | 1
}

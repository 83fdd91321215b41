//! What one family's tables look like in the kernel, as far as the model
//! knows them: which tables exist, where each logical rule and chain is
//! (kernel handles), which rules keep overflow text in the catalog, and
//! the compiled runs with their members. Long-lived in the daemon (kept in
//! step by learning the handles the kernel echoes), rebuilt from each read
//! in direct mode.

use crate::read::{RunSnap, Snapshot};
use compile::runs::KeyKind;
use compile::userdata::catalog::Census;
use iptables::Rule;
use ruleset::hash::FxMap;
use ruleset::{RuleId, TableKind};
use std::collections::{HashMap, HashSet};

/// Where a rule is in the kernel: by handle, or created in the batch being
/// built (its batch-local rule id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    Handle(u64),
    New(u32),
}

/// One compiled run in the kernel (see [`crate::plan::runs`]).
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
    /// The run's census as the kernel has it (in the catalog), kept in
    /// step by every membership change; `None`: the run has none.
    pub census: Option<Census>,
}

/// The kernel side of one family's model.
#[derive(Debug, Default)]
pub struct KernelView {
    /// Tables that exist in the kernel (or are created by the batch being
    /// built).
    pub(crate) present: HashSet<TableKind>,
    pub(crate) locs: FxMap<(TableKind, RuleId), Loc>,
    pub(crate) chain_handles: HashMap<(TableKind, String), u64>,
    /// Catalog chunks of rules whose text overflows their userdata.
    pub(crate) overflow: FxMap<(TableKind, RuleId), u32>,
    /// Runs in the kernel, by index (`None` once gone).
    pub(crate) runs: Vec<Option<RunLoc>>,
    /// The run each compiled logical rule is an element of.
    pub(crate) members: FxMap<(TableKind, RuleId), u32>,
    /// Run sets of chains whose rules were not read but which a command
    /// flushes (`None`: every chain of the table): deleted with the flush.
    /// Filled by a partial read (direct mode); empty for a whole model.
    pub(crate) unread_run_sets: HashMap<(TableKind, Option<String>), Vec<String>>,
    /// Per table, which chains' rules the model holds exactly as the
    /// kernel does (read, and no foreign rule among them); see
    /// [`KernelView::knows_rules`].
    pub(crate) known: HashMap<TableKind, Known>,
    /// Rules read by (table, chain, canonical text) (a partial read's
    /// [`crate::read::Snapshot::texts`]): a restore line of that text in a
    /// rewritten chain is the old rule, unparsed.
    pub(crate) texts: HashMap<TableKind, ChainTexts>,
    /// Rules read as stand-ins, by id: their canonical texts (a partial
    /// read's [`crate::read::Snapshot::lazy`]).
    pub(crate) lazy: HashMap<TableKind, ruleset::hash::FxMap<RuleId, String>>,
    /// Chains whose counters the model took from the kernel for the plan
    /// being made (see [`crate::read::refresh_counters`]); emptied by
    /// [`KernelView::forget_counters_read`].
    pub(crate) fresh_counters: HashSet<(TableKind, String)>,
    /// Runs read whole whose members differ from their census in the
    /// catalog (elements removed or added behind nfkeeper's back): by
    /// table, the run's index and the census of the members read. The next
    /// write to the table rewrites the census (see
    /// [`crate::plan::Planner::repair_censuses`]).
    pub(crate) stale_census: Vec<(TableKind, u32, Census)>,
    /// Per table, the user chains that are registry entries, not kernel
    /// chains (see `crate::plan::registry`).
    /// Fx-hashed: looked up for every rule planned.
    pub(crate) virtual_chains: HashMap<TableKind, ruleset::hash::FxSet<String>>,
    /// Tables whose registry set is known to exist.
    pub(crate) registry: HashSet<TableKind>,
    /// Tables whose registry set refused an element as beyond its capacity
    /// (see `crate::plan::registry`): chains registered from now on are
    /// kernel chains. Learnt from the refusal, so kept across the re-reads
    /// of one write ([`KernelView::forget`], `State::clear`); dropped when
    /// a batch of ours deletes the table.
    pub(crate) registry_full: HashSet<TableKind>,
}

/// Rules by chain, then canonical text (see [`crate::read::Snapshot::texts`]).
///
/// Fx-hashed: a kube-proxy sync looks up thousands of ~130-byte texts.
pub type ChainTexts = ruleset::hash::FxMap<String, ruleset::hash::FxMap<String, RuleId>>;

/// Which chains of one table a read saw whole.
#[derive(Debug, Default)]
pub(crate) struct Known {
    /// Every chain's rules were read.
    pub(crate) all: bool,
    /// The chains whose rules were read (when not `all`).
    pub(crate) chains: HashSet<String>,
    /// Chains holding rules the model lacks.
    pub(crate) foreign: HashSet<String>,
}

impl KernelView {
    /// Whether our table `kind` exists in the kernel.
    pub fn exists(&self, kind: TableKind) -> bool {
        self.present.contains(&kind)
    }

    /// Forget everything known of table `kind`. O(objects of the family)
    /// for the location maps.
    pub fn forget(&mut self, kind: TableKind) {
        self.present.remove(&kind);
        self.locs.retain(|(k, _), _| *k != kind);
        self.chain_handles.retain(|(k, _), _| *k != kind);
        self.overflow.retain(|(k, _), _| *k != kind);
        self.unread_run_sets.retain(|(k, _), _| *k != kind);
        self.known.remove(&kind);
        self.texts.remove(&kind);
        self.lazy.remove(&kind);
        self.fresh_counters.retain(|(k, _)| *k != kind);
        self.virtual_chains.remove(&kind);
        self.registry.remove(&kind);
        self.forget_runs(kind);
    }

    /// The model's counters of `chain` are the kernel's, read for this plan.
    pub fn counters_read(&mut self, kind: TableKind, chain: &str) {
        self.fresh_counters.insert((kind, chain.to_string()));
    }

    /// Whether [`KernelView::counters_read`] was said of `chain`.
    pub(crate) fn counters_are_fresh(&self, kind: TableKind, chain: &str) -> bool {
        !self.fresh_counters.is_empty() && self.fresh_counters.contains(&(kind, chain.to_string()))
    }

    /// Counters read for an earlier plan are stale now.
    pub fn forget_counters_read(&mut self) {
        self.fresh_counters.clear();
    }

    /// Whether chain `name` of table `kind` is a registry entry in the
    /// kernel (as of the last commit or read; a batch being planned may
    /// have changed it: `Planner::is_virtual`). O(1).
    pub(crate) fn is_registered(&self, kind: TableKind, name: &str) -> bool {
        self.virtual_chains
            .get(&kind)
            .is_some_and(|s| s.contains(name))
    }

    /// Take a read's registered chains (see [`KernelView::virtual_chains`]).
    pub fn install_registered(&mut self, kind: TableKind, names: ruleset::hash::FxSet<String>) {
        if !names.is_empty() {
            self.virtual_chains.insert(kind, names);
        }
    }

    /// Take a read's rule texts (see [`KernelView::texts`]).
    pub fn install_texts(&mut self, kind: TableKind, texts: ChainTexts) {
        if !texts.is_empty() {
            self.texts.insert(kind, texts);
        }
    }

    /// Take a read's stand-ins' texts (see [`KernelView::lazy`]).
    pub fn install_lazy(&mut self, kind: TableKind, lazy: ruleset::hash::FxMap<RuleId, String>) {
        if lazy.is_empty() {
            self.lazy.remove(&kind);
        } else {
            self.lazy.insert(kind, lazy);
        }
    }

    /// The canonical text of rule `id` of table `kind` when the model
    /// holds a stand-in for it.
    pub(crate) fn lazy_text(&self, kind: TableKind, id: RuleId) -> Option<&str> {
        self.lazy.get(&kind)?.get(&id).map(String::as_str)
    }

    /// The rule read in `chain` of table `kind` whose canonical text is
    /// `text`, if any (O(1)).
    pub(crate) fn rule_by_text(&self, kind: TableKind, chain: &str, text: &str) -> Option<RuleId> {
        self.texts.get(&kind)?.get(chain)?.get(text).copied()
    }

    /// Whether the model's rules of `chain` are all of the kernel chain's
    /// (it was read whole, or `whole_model`: the caller keeps whole tables)
    /// and none of them is foreign.
    pub(crate) fn knows_rules(&self, kind: TableKind, chain: &str, whole_model: bool) -> bool {
        match self.known.get(&kind) {
            Some(k) => {
                (whole_model || k.all || k.chains.contains(chain)) && !k.foreign.contains(chain)
            }
            None => whole_model,
        }
    }

    /// Chain `old` of table `kind` is now `new`: what is known of it by
    /// name follows it (its handle, runs, run sets not read, whether its
    /// rules were read). Its own inverse, as a cut write needs.
    pub(crate) fn rename_chain(&mut self, kind: TableKind, old: &str, new: &str) {
        let (o, n) = ((kind, old.to_string()), (kind, new.to_string()));
        match self.chain_handles.remove(&o) {
            Some(h) => self.chain_handles.insert(n, h),
            None => self.chain_handles.remove(&n),
        };
        for r in self.runs.iter_mut().flatten() {
            if r.kind == kind && r.chain == old {
                r.chain = new.to_string();
            }
        }
        let (o, n) = ((kind, Some(old.to_string())), (kind, Some(new.to_string())));
        match self.unread_run_sets.remove(&o) {
            Some(sets) => self.unread_run_sets.insert(n, sets),
            None => self.unread_run_sets.remove(&n),
        };
        if let Some(k) = self.known.get_mut(&kind) {
            for set in [&mut k.chains, &mut k.foreign] {
                if set.remove(old) {
                    set.insert(new.to_string());
                } else {
                    set.remove(new);
                }
            }
        }
    }

    fn forget_runs(&mut self, kind: TableKind) {
        for r in self.runs.iter_mut() {
            if r.as_ref().is_some_and(|r| r.kind == kind) {
                *r = None;
            }
        }
        self.members.retain(|(k, _), _| *k != kind);
        self.stale_census.retain(|(k, ..)| *k != kind);
    }

    /// Replace what is known of table `kind` by a fresh read of it.
    pub fn install(&mut self, kind: TableKind, s: &Snapshot) {
        self.forget(kind);
        if s.exists {
            self.present.insert(kind);
        }
        self.locs.extend(
            s.handles
                .iter()
                .map(|(id, h)| ((kind, *id), Loc::Handle(*h))),
        );
        self.chain_handles
            .extend(s.chain_handles.iter().map(|(n, h)| ((kind, n.clone()), *h)));
        self.overflow
            .extend(s.overflow.iter().map(|(id, n)| ((kind, *id), *n)));
        self.remember_runs(kind, &s.runs);
        if s.registry {
            self.registry.insert(kind);
        }
        self.known.insert(
            kind,
            Known {
                all: s.rules_read.is_none(),
                chains: s.rules_read.iter().flatten().cloned().collect(),
                foreign: s.foreign_in.clone(),
            },
        );
    }

    /// Take the runs a read found in table `kind`.
    fn remember_runs(&mut self, kind: TableKind, runs: &[RunSnap]) {
        for r in runs {
            let idx = self.runs.len() as u32;
            for id in &r.members {
                self.members.insert((kind, *id), idx);
            }
            if !r.partial {
                let read = Census::of(r.members.iter().copied());
                if r.census.is_some_and(|c| c != read) {
                    self.stale_census.push((kind, idx, read));
                }
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
                census: r.census,
            }));
        }
    }

    pub(crate) fn loc(&self, kind: TableKind, id: RuleId) -> Option<Loc> {
        self.locs.get(&(kind, id)).copied()
    }

    /// The run rule `id` is a member of, if any.
    pub(crate) fn run_of(&self, kind: TableKind, id: RuleId) -> Option<u32> {
        self.members.get(&(kind, id)).copied()
    }

    /// Record the handles the kernel echoed for what a committed batch
    /// created, and forget the rules it deleted (see
    /// [`crate::plan::Pending::settle`]).
    pub(crate) fn learn_rule(&mut self, kind: TableKind, id: RuleId, handle: u64) {
        self.locs.insert((kind, id), Loc::Handle(handle));
    }

    pub(crate) fn learn_chain(&mut self, kind: TableKind, name: String, handle: u64) {
        self.chain_handles.insert((kind, name), handle);
    }

    pub(crate) fn learn_run(&mut self, ri: u32, handle: u64) {
        if let Some(Some(r)) = self.runs.get_mut(ri as usize) {
            r.rule = Loc::Handle(handle);
        }
    }

    /// Rules in the model that are located: for sizing reports.
    pub fn located(&self) -> usize {
        self.locs.len() + self.members.len()
    }
}

//! The engine's picture of nfkeeper's tables: the logical model of both
//! families, where its objects are in the kernel, the foreign objects the
//! last read found, and the generation it corresponds to. The daemon keeps
//! one for its lifetime; direct mode fills one per attempt with what the
//! command needs.

use crate::plan::KernelView;
use crate::read::{Snapshot, Tail};
use iptables::Rule;
use ruleset::{Family, Ruleset, Table, TableKind};
use std::collections::HashMap;

/// Tables in iptables-save order (the order listings and saves use).
pub const SAVE_ORDER: [TableKind; 5] = [
    TableKind::Mangle,
    TableKind::Security,
    TableKind::Raw,
    TableKind::Filter,
    TableKind::Nat,
];

pub struct State {
    /// Every table of both families; those the kernel lacks (or that were
    /// not read) are empty.
    pub model: Ruleset<Rule>,
    /// Per family (index: `Family::index`): where the model's objects are.
    views: [KernelView; 2],
    /// Objects in our tables that nfkeeper did not write, described for a
    /// warning, as the last read of each table found them.
    pub foreign: HashMap<(Family, TableKind), Vec<String>>,
    /// The kernel generation the model corresponds to (what a commit must
    /// still find).
    pub genid: u32,
    /// Ends of chains read for appends (direct mode; see
    /// [`crate::read::tail`]), handed to the next batch.
    pub tails: HashMap<(Family, TableKind, String), Tail>,
    /// The ipsets (see [`crate::ipset`]).
    pub ipset: crate::ipset::Sets,
    /// Undo logs of model transactions that committed, not yet freed: a
    /// caller with a reply to send frees them after it ([`State::garbage`]);
    /// freeing a flush's 50k rule bodies took 12% of the daemon's flush.
    pub(crate) garbage: Vec<ruleset::Undo<Rule>>,
}

impl Default for State {
    fn default() -> Self {
        State {
            model: Ruleset::new(),
            views: [KernelView::default(), KernelView::default()],
            foreign: HashMap::new(),
            genid: 0,
            tails: HashMap::new(),
            ipset: crate::ipset::Sets::default(),
            garbage: Vec::new(),
        }
    }
}

impl State {
    pub fn view(&self, f: Family) -> &KernelView {
        &self.views[f.index()]
    }

    pub fn view_mut(&mut self, f: Family) -> &mut KernelView {
        &mut self.views[f.index()]
    }

    /// The model table and the view of its family, borrowed together.
    pub fn parts(&mut self, f: Family, k: TableKind) -> (&mut Table<Rule>, &mut KernelView) {
        (self.model.table_mut(f, k), &mut self.views[f.index()])
    }

    /// The model table, the view of its family and the ipsets, borrowed
    /// together.
    pub fn parts_ipsets(
        &mut self,
        f: Family,
        k: TableKind,
    ) -> (&mut Table<Rule>, &mut KernelView, &mut crate::ipset::Sets) {
        (
            self.model.table_mut(f, k),
            &mut self.views[f.index()],
            &mut self.ipset,
        )
    }

    /// The model, the view of family `f` and the ipsets, borrowed
    /// together.
    pub fn model_view_ipsets(
        &mut self,
        f: Family,
    ) -> (&mut Ruleset<Rule>, &mut KernelView, &mut crate::ipset::Sets) {
        (&mut self.model, &mut self.views[f.index()], &mut self.ipset)
    }

    /// The model and the view of family `f`, borrowed together.
    pub fn model_and_view(&mut self, f: Family) -> (&mut Ruleset<Rule>, &mut KernelView) {
        (&mut self.model, &mut self.views[f.index()])
    }

    pub fn exists(&self, f: Family, k: TableKind) -> bool {
        self.view(f).exists(k)
    }

    /// Replace what is known of table `k` of family `f` by a read of it.
    pub fn install(&mut self, f: Family, k: TableKind, mut s: Snapshot) {
        self.views[f.index()].install(k, &s);
        self.views[f.index()].install_registered(k, std::mem::take(&mut s.virtual_chains));
        self.views[f.index()].install_texts(k, std::mem::take(&mut s.texts));
        self.views[f.index()].install_lazy(k, std::mem::take(&mut s.lazy));
        self.foreign.insert((f, k), s.foreign);
        self.model.replace_table(s.table);
    }

    /// Forget everything (direct mode, before reading for another attempt)
    /// but which registries are full (learnt from a refusal, not a read).
    pub fn clear(&mut self) {
        let full = self
            .views
            .each_mut()
            .map(|v| std::mem::take(&mut v.registry_full));
        *self = State::default();
        for (v, f) in self.views.iter_mut().zip(full) {
            v.registry_full = f;
        }
    }

    /// The kernel refused to add to table `k`'s registry as beyond its
    /// capacity (see [`crate::plan::KernelView::registry_full`]).
    pub(crate) fn mark_registry_full(&mut self, f: Family, k: TableKind) {
        self.views[f.index()].registry_full.insert(k);
    }

    /// What committed model transactions left to free (see the field):
    /// the caller drops it when dropping costs nobody a wait.
    pub fn garbage(&mut self) -> impl Send + use<> {
        std::mem::take(&mut self.garbage)
    }

    /// Rules in the model, in tables the kernel has.
    pub fn rule_count(&self) -> usize {
        self.existing().map(Table::rule_count).sum()
    }

    /// Chains in the model, in tables the kernel has.
    pub fn chain_count(&self) -> usize {
        self.existing().map(|t| t.chains().len()).sum()
    }

    fn existing(&self) -> impl Iterator<Item = &Table<Rule>> {
        Family::ALL.into_iter().flat_map(move |f| {
            TableKind::ALL
                .into_iter()
                .filter(move |k| self.exists(f, *k))
                .map(move |k| self.model.table(f, k))
        })
    }

    /// The warnings of foreign objects in table `k` of family `f`.
    pub fn foreign_warnings(&self, f: Family, k: TableKind) -> Vec<String> {
        self.foreign
            .get(&(f, k))
            .into_iter()
            .flatten()
            .map(|what| foreign_warning(k, what))
            .collect()
    }
}

/// The warning for one foreign object of table `kind`.
pub fn foreign_warning(kind: TableKind, what: &str) -> String {
    format!(
        "Warning: table {}: {what} was not written by nfkeeper; left as is",
        compile::layout::table_name(kind)
    )
}

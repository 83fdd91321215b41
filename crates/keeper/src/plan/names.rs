//! Chain names as the kernel knows them while a batch is under way.
//!
//! Contract: nf_tables applies a chain rename (`NEWCHAIN` naming the chain
//! by handle, with a new name) only when the batch commits. Until then the
//! kernel finds the chain under the name it had before the batch — every
//! lookup by name walks the table's name hash (`nft_chain_lookup`), which
//! only the commit rehashes: a rule's `NFTA_RULE_CHAIN`, the chain of a
//! jump or goto (`NFTA_VERDICT_CHAIN`, in a rule's immediate or in a
//! verdict-map element), a chain delete, a rule flush, the new name of a
//! later rename (taken if some chain still has it). The model renames at
//! once. So every message the planner builds names an existing chain by
//! [`KernelNames::get`] of its model name — through the builders below
//! ([`Planner::rule_msg`], [`Planner::rule_key`], [`Planner::verdict_data`],
//! [`Planner::chain_key`]), never by the model name directly. Ids do not
//! help: `NFTA_RULE_CHAIN_ID`/`NFTA_VERDICT_CHAIN_ID` find only chains the
//! batch creates.
//!
//! It follows that a name a renamed chain still has in the kernel cannot
//! go to another chain in the same batch, nor back to that chain (the
//! kernel finds the renamed chain under it: EEXIST); [`KernelNames::taken`]
//! lets the planner refuse such a command before anything is sent.
//!
//! Per batch; a write cut out of a group ([`super::Pending::truncate`])
//! takes its renames back, here and in the kernel view.

use super::view::KernelView;
use super::Planner;
use compile::layout;
use nft::{Data, Expr, Tag, Verdict};
use ruleset::{Family, TableKind};
use std::collections::HashMap;

type Key = (Family, TableKind, String);

/// The chains a batch renamed, both ways.
#[derive(Debug, Default)]
pub(crate) struct KernelNames {
    /// Model name → the name the kernel has for the chain until commit.
    kernel: HashMap<Key, String>,
    /// The converse: kernel name → model name.
    model: HashMap<Key, String>,
    /// What changed, in order, to take back to a mark.
    log: Vec<Change>,
}

/// One change of [`KernelNames`]: model chain `key` had kernel name
/// `prev` before (`None`: its own); `moved`: a rename (table, old, new)
/// the kernel view took too, by the write tagged `tag`.
#[derive(Debug)]
struct Change {
    key: Key,
    prev: Option<String>,
    moved: Option<(TableKind, String, String)>,
    tag: Tag,
}

impl KernelNames {
    /// The kernel's name, in this batch, of the chain the model calls
    /// `chain` (of table `kind` of `family`).
    pub(crate) fn get<'a>(&'a self, family: Family, kind: TableKind, chain: &'a str) -> &'a str {
        self.renamed(family, kind, chain).unwrap_or(chain)
    }

    /// The kernel's name of model chain `chain` when it differs (a chain
    /// this batch renamed). O(1); nothing allocated without renames.
    pub(crate) fn renamed(&self, family: Family, kind: TableKind, chain: &str) -> Option<&str> {
        if self.kernel.is_empty() {
            return None;
        }
        self.kernel
            .get(&(family, kind, chain.to_string()))
            .map(String::as_str)
    }

    /// The model name of the chain this batch renamed that still has
    /// `name` in the kernel, if any.
    pub(crate) fn taken(&self, family: Family, kind: TableKind, name: &str) -> Option<&str> {
        if self.model.is_empty() {
            return None;
        }
        self.model
            .get(&(family, kind, name.to_string()))
            .map(String::as_str)
    }

    /// Set (`None`: drop) the kernel name of model chain `key`; returns
    /// the one it had.
    fn set(&mut self, key: Key, kernel: Option<String>) -> Option<String> {
        let prev = self.kernel.remove(&key);
        if let Some(p) = &prev {
            self.model.remove(&(key.0, key.1, p.clone()));
        }
        if let Some(k) = kernel {
            self.model.insert((key.0, key.1, k.clone()), key.2.clone());
            self.kernel.insert(key, k);
        }
        prev
    }

    fn record(
        &mut self,
        key: Key,
        kernel: Option<String>,
        moved: Option<(TableKind, String, String)>,
        tag: Tag,
    ) {
        let prev = self.set(key.clone(), kernel);
        self.log.push(Change {
            key,
            prev,
            moved,
            tag,
        });
    }

    /// Model chain `old` is now `new`, by the write tagged `tag`; the
    /// kernel keeps the name it had. (`new` is not
    /// [`KernelNames::taken`]: the planner checked.)
    pub(crate) fn rename(
        &mut self,
        family: Family,
        kind: TableKind,
        old: &str,
        new: &str,
        tag: Tag,
    ) {
        let kname = self.get(family, kind, old).to_string();
        let moved = Some((kind, old.to_string(), new.to_string()));
        self.record((family, kind, old.to_string()), None, None, tag);
        let k = (kname != new).then_some(kname);
        self.record((family, kind, new.to_string()), k, moved, tag);
    }

    /// The tag of the write whose rename last moved model chain `chain`
    /// (O(changes); renames are few).
    pub(crate) fn renamed_by(&self, family: Family, kind: TableKind, chain: &str) -> Option<Tag> {
        self.log
            .iter()
            .rev()
            .find(|c| c.moved.is_some() && c.key.0 == family && c.key.1 == kind && c.key.2 == chain)
            .map(|c| c.tag)
    }

    /// Model chain `chain` is deleted: its kernel name is free again (the
    /// kernel no longer finds a deleted chain by name).
    pub(crate) fn deleted(&mut self, family: Family, kind: TableKind, chain: &str) {
        if self.renamed(family, kind, chain).is_some() {
            self.record((family, kind, chain.to_string()), None, None, 0);
        }
    }

    /// Table `kind` of `family` is deleted: every name in it is free.
    pub(crate) fn forget_table(&mut self, family: Family, kind: TableKind) {
        let keys: Vec<Key> = self
            .kernel
            .keys()
            .filter(|k| k.0 == family && k.1 == kind)
            .cloned()
            .collect();
        for k in keys {
            self.record(k, None, None, 0);
        }
    }

    pub(crate) fn mark(&self) -> usize {
        self.log.len()
    }

    /// Take back what changed since mark `m`, the renames of chains in
    /// `view` too (the view of the family written since `m`).
    pub(crate) fn truncate(&mut self, m: usize, view: &mut KernelView) {
        while self.log.len() > m {
            let Some(c) = self.log.pop() else { break };
            self.set(c.key, c.prev);
            if let Some((kind, old, new)) = c.moved {
                view.rename_chain(kind, &new, &old);
            }
        }
    }
}

impl Planner<'_> {
    /// See [`KernelNames::get`].
    pub(crate) fn kernel_chain<'a>(&'a self, kind: TableKind, chain: &'a str) -> &'a str {
        self.p.names.get(self.family, kind, chain)
    }

    /// A rule of model chain `chain` with expressions `exprs` (their jumps
    /// and gotos named as the kernel knows the chains in this batch). The
    /// chain and the chains it jumps to are made kernel chains first if
    /// they are registry entries (see `super::registry`).
    pub(crate) fn rule_msg(
        &mut self,
        kind: TableKind,
        chain: &str,
        mut exprs: Vec<Expr>,
    ) -> nft::Rule {
        self.make_kernel_chain(kind, chain);
        self.make_kernel_targets(kind, &exprs);
        for e in exprs.iter_mut() {
            if let Expr::Immediate {
                data: Data::Verdict(v),
                ..
            } = e
            {
                self.kernel_verdict(kind, v);
            }
        }
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        nft::Rule::new(fam, &tname, self.kernel_chain(kind, chain), exprs)
    }

    /// A rule of model chain `chain` named by key only (deletes; the empty
    /// name, every chain of the table).
    pub(crate) fn rule_key(&self, kind: TableKind, chain: &str) -> nft::Rule {
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        nft::Rule::key(fam, &tname, self.kernel_chain(kind, chain), None)
    }

    /// The data of a verdict-map element of verdict `v`, its jump or
    /// goto target named as the kernel knows it in this batch (and made a
    /// kernel chain first if it is a registry entry).
    pub(crate) fn verdict_data(&mut self, kind: TableKind, v: Option<Verdict>) -> Option<Data> {
        let mut v = v?;
        if let Verdict::Jump(c) | Verdict::Goto(c) = &v {
            self.make_kernel_chain(kind, c);
        }
        self.kernel_verdict(kind, &mut v);
        Some(Data::Verdict(v))
    }

    /// Name the jump or goto target of `v` as the kernel knows it.
    fn kernel_verdict(&self, kind: TableKind, v: &mut Verdict) {
        if let Verdict::Jump(c) | Verdict::Goto(c) = v {
            if let Some(k) = self.p.names.renamed(self.family, kind, c) {
                *c = k.to_string();
            }
        }
    }

    /// Existing model chain `chain`, named by key only (deletes, policy).
    pub(crate) fn chain_key(&self, kind: TableKind, chain: &str) -> nft::Chain {
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        nft::Chain::new(fam, &tname, self.kernel_chain(kind, chain))
    }
}

//! User chains kept in the registry instead of the kernel (see
//! [`compile::registry`]): `-N` registers a chain; the first rule put into
//! it, or the first rule or map element that jumps to it, makes it a kernel
//! chain first ([`Planner::make_kernel_chain`]); `-X` and `-E` of a registered
//! chain change only the registry. A chain never goes back to the registry.
//!
//! The batch's registry changes are kept here and written at its end,
//! coalesced per chain (the state before the batch against the state after
//! it: at most one element delete or add per chain), so that `-N C` then
//! `-A C …` in one restore creates the kernel chain and no element at all.
//! The view learns the new states when the batch commits
//! ([`Writes::settle`]).
//!
//! A registry set has a capacity ([`registry::capacity`]). A batch whose
//! element adds the kernel refuses as beyond it (`ENFILE`) is planned
//! again with the table's registry marked full
//! ([`KernelView::registry_full`]): its new chains are then kernel chains,
//! as every chain was before the registry.

use super::{KernelView, Planner};
use compile::{layout, registry};
use nft::batch::Batch;
use nft::{Chain, Tag};
use nft::{Data, Expr, Verdict};
use ruleset::hash::FxMap;
use ruleset::{Family, TableKind};

/// Elements per registry message: a message per chain cost a restore of
/// 100k empty chains a message each; a refused element names the first
/// chain of its message's line.
const ELEMS_PER_MSG: usize = 512;

/// One change of a chain's registration, or (`name: None`) the table's
/// deletion (its registry goes with it).
#[derive(Clone, Debug)]
struct Write {
    family: Family,
    kind: TableKind,
    name: Option<String>,
    /// Registered before this change.
    old: bool,
    /// Registered after it.
    new: bool,
    /// The view knew the table's registry set to exist (else the write
    /// creates it first, which is a no-op when it does). The set is made
    /// with a table's first registered chain, not with the table: most
    /// tables never register one, and a set is kernel work to create and,
    /// when a restore replaces the table, to destroy (BENCHMARKS.md §8.17:
    /// restoring 1k chains 8% faster).
    set_known: bool,
    tag: Tag,
}

/// One table's coalesced changes (see [`Writes::write`]).
#[derive(Default)]
struct TableWrites {
    /// Per chain: registered before the batch, after it, the last tag.
    states: FxMap<String, (bool, bool, Tag)>,
    /// The chains in first-change order.
    order: Vec<String>,
    /// The registry set must be created first.
    create_set: bool,
}

/// The registry changes of one batch.
#[derive(Debug, Default)]
pub(crate) struct Writes {
    log: Vec<Write>,
    /// Each changed chain's state now, by table then name (looked up by
    /// `&str` on every rule planned).
    now: FxMap<(Family, TableKind), FxMap<String, bool>>,
    /// The element-adding messages written, as sequence ranges
    /// `[first, end)`, and their table: a refusal of one names a full
    /// registry ([`Writes::adds_at`]).
    adds: Vec<(u32, u32, Family, TableKind)>,
    /// Tables this batch deleted (their registry with them).
    dropped: Vec<(Family, TableKind)>,
}

impl Writes {
    /// Whether `name` is registered as far as this batch says (`None`: the
    /// batch did not change it).
    fn now(&self, family: Family, kind: TableKind, name: &str) -> Option<bool> {
        if self.now.is_empty() {
            return None;
        }
        self.now.get(&(family, kind))?.get(name).copied()
    }

    fn push(&mut self, w: Write) {
        let t = self.now.entry((w.family, w.kind)).or_default();
        match &w.name {
            Some(n) => {
                t.insert(n.clone(), w.new);
            }
            None => {
                t.clear();
                self.dropped.push((w.family, w.kind));
            }
        }
        self.log.push(w);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    /// The batch changed no chain's registration.
    fn untouched(&self) -> bool {
        self.now.is_empty()
    }

    pub(crate) fn mark(&self) -> usize {
        self.log.len()
    }

    /// Take back the changes since mark `m`. O(changes) (a cut write is
    /// rare).
    pub(crate) fn truncate(&mut self, m: usize) {
        if self.log.len() <= m {
            return;
        }
        let log: Vec<Write> = self.log.drain(..).take(m).collect();
        self.now.clear();
        self.dropped.clear();
        for w in log {
            self.push(w);
        }
    }

    /// Append the coalesced changes to `batch`: per chain, its first
    /// change's `old` against its last one's `new`; a set created takes
    /// batch-local id `*set_id` (then incremented). O(changes).
    pub(crate) fn write(&mut self, batch: &mut Batch, set_id: &mut u32) {
        let mut tables: FxMap<(Family, TableKind), TableWrites> = FxMap::default();
        let mut order: Vec<(Family, TableKind)> = Vec::new();
        for w in std::mem::take(&mut self.log) {
            let key = (w.family, w.kind);
            let t = tables.entry(key).or_insert_with(|| {
                order.push(key);
                TableWrites::default()
            });
            let Some(name) = w.name else {
                // Deleted with its table: the registry starts empty.
                *t = TableWrites::default();
                continue;
            };
            t.create_set |= !w.set_known && w.new;
            match t.states.get_mut(&name) {
                Some(c) => {
                    c.1 = w.new;
                    c.2 = w.tag;
                }
                None => {
                    t.order.push(name.clone());
                    t.states.insert(name, (w.old, w.new, w.tag));
                }
            }
        }
        for key in order {
            let Some(t) = tables.remove(&key) else {
                continue;
            };
            let fam = layout::nft_family(key.0);
            let tname = layout::table_name(key.1);
            let (mut dels, mut adds) = (Vec::new(), Vec::new());
            for n in &t.order {
                match t.states[n] {
                    (true, false, tag) => dels.push((n.as_str(), tag)),
                    (false, true, tag) => adds.push((n.as_str(), tag)),
                    _ => {}
                }
            }
            if t.create_set && !adds.is_empty() {
                let set = registry::set(fam, &tname, *set_id, registry::capacity(adds.len()));
                batch.add(&set, adds[0].1);
                *set_id += 1;
            }
            for (list, add) in [(dels, false), (adds, true)] {
                for part in list.chunks(ELEMS_PER_MSG) {
                    let es = registry::elems(fam, &tname, part.iter().map(|(n, _)| *n));
                    if add {
                        // Exclusive: a name registered meanwhile fails the
                        // batch rather than hide a change.
                        let first = batch.create(&es, part[0].1);
                        self.adds.push((first, batch.next_seq(), key.0, key.1));
                    } else {
                        batch.delete(&es, part[0].1);
                    }
                }
            }
        }
    }

    /// The table whose registry message `seq` adds elements to, if it is
    /// one: a refusal of it with `ENFILE` means that registry is full.
    pub(crate) fn adds_at(&self, seq: u32) -> Option<(Family, TableKind)> {
        self.adds
            .iter()
            .find(|(first, end, ..)| (*first..*end).contains(&seq))
            .map(|(_, _, f, k)| (*f, *k))
    }

    /// After the batch committed: the view of `family` takes each changed
    /// chain's state; a table deleted takes a registry with room again.
    pub(crate) fn settle(&self, family: Family, view: &mut KernelView) {
        for (f, kind) in &self.dropped {
            if *f == family {
                view.registry_full.remove(kind);
            }
        }
        for ((f, kind), names) in &self.now {
            if *f != family {
                continue;
            }
            let set = view.virtual_chains.entry(*kind).or_default();
            for (n, on) in names {
                if *on {
                    set.insert(n.clone());
                    view.registry.insert(*kind);
                } else {
                    set.remove(n);
                }
            }
        }
    }
}

impl Planner<'_> {
    /// Whether model chain `name` of table `kind` is (as of the batch being
    /// planned) a registry entry, not a kernel chain. O(1).
    pub(crate) fn is_virtual(&self, kind: TableKind, name: &str) -> bool {
        match self.p.registry.now(self.family, kind, name) {
            Some(v) => v,
            None => self.view.is_registered(kind, name),
        }
    }

    /// Register (`on`) or unregister chain `name`; a no-op when it already
    /// is so. A name too long for a key is never registered.
    pub(crate) fn set_virtual(&mut self, kind: TableKind, name: &str, on: bool) -> bool {
        if on && (registry::key(name).is_none() || self.registry_is_full(kind)) {
            return false;
        }
        let old = self.is_virtual(kind, name);
        if old != on {
            self.p.registry.push(Write {
                family: self.family,
                kind,
                name: Some(name.to_string()),
                old,
                new: on,
                set_known: self.view.registry.contains(&kind),
                tag: self.p.tag,
            });
        }
        true
    }

    /// Whether table `kind`'s registry has no room (as the kernel said),
    /// and this batch did not replace it with a new one.
    fn registry_is_full(&self, kind: TableKind) -> bool {
        self.view.registry_full.contains(&kind)
            && !self.p.registry.dropped.contains(&(self.family, kind))
    }

    /// Table `kind` is deleted by this batch: its registry goes with it.
    pub(crate) fn registry_dropped(&mut self, kind: TableKind) {
        self.p.registry.push(Write {
            family: self.family,
            kind,
            name: None,
            old: false,
            new: false,
            set_known: false,
            tag: self.p.tag,
        });
    }

    /// Make registered chain `name` a kernel chain (NEWCHAIN now; the
    /// element goes at the batch's end): a rule is about to go into it or
    /// to name it. A no-op for a kernel chain.
    pub(crate) fn make_kernel_chain(&mut self, kind: TableKind, name: &str) {
        if !self.is_virtual(kind, name) {
            return;
        }
        self.set_virtual(kind, name, false);
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        let tag = self.p.tag;
        self.p.batch.create(&Chain::new(fam, &tname, name), tag);
    }

    /// [`Planner::make_kernel_chain`] for the chains `exprs` jump or go to.
    pub(crate) fn make_kernel_targets(&mut self, kind: TableKind, exprs: &[Expr]) {
        if self.p.registry.untouched() && self.view.virtual_chains.values().all(|s| s.is_empty()) {
            return;
        }
        for e in exprs {
            if let Expr::Immediate {
                data: Data::Verdict(Verdict::Jump(c) | Verdict::Goto(c)),
                ..
            } = e
            {
                self.make_kernel_chain(kind, c);
            }
        }
    }
}

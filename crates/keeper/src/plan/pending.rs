//! The batch being built: the nftables messages of one transaction and
//! the bookkeeping that lives exactly as long as it — what its echoes will
//! name, what it deletes, which tables it replaces, the chain ends appends
//! look at. A batch may span both families (the daemon's group commit).

use crate::plan::names::KernelNames;
use crate::plan::rewrite::Rewrites;
use crate::plan::view::KernelView;
use crate::read::Tail;
use compile::userdata::catalog::{self, Census};
use nft::{Batch, SetElem, SetElems, Tag};
use ruleset::hash::FxMap;
use ruleset::{Family, RuleId, TableKind};
use std::collections::{HashMap, HashSet};

/// An object a batch creates whose kernel handle is learnt from its echo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Created {
    Rule(TableKind, RuleId),
    /// The kernel rule of run `runs[i]` of the family's view.
    Run(u32),
}

/// Input lines (tags) of what a restore put into a table it replaces: the
/// table is written at the end ([`crate::plan::Planner::finish`]), and a
/// refusal must still name the line that asked for the object.
#[derive(Debug, Default)]
pub(crate) struct FreshTags {
    pub(crate) rules: FxMap<RuleId, Tag>,
    /// By chain id: ids survive renames and are never reused in a table,
    /// and a restore of N chains allocates no name per chain here.
    pub(crate) chains: FxMap<ruleset::ChainId, Tag>,
}

/// The batch under construction and its per-batch state.
pub struct Pending {
    pub(crate) batch: Batch,
    /// Tag of the messages being added (the write's index in a group, or
    /// the restore line).
    pub(crate) tag: Tag,
    /// With echo: what each echoing message creates, by sequence number
    /// (ascending).
    pub(crate) created: Vec<(u32, Family, Created)>,
    /// With echo: rules this batch deletes; their locations are dropped
    /// once it commits, kept if it is abandoned.
    pub(crate) forgotten: Vec<(Family, TableKind, RuleId)>,
    /// With echo: tables whose every rule this batch deletes (a flush of
    /// all chains); their rule locations are dropped at once when it
    /// commits, before the handles of rules created after the flush are
    /// learnt (see [`Pending::forget_table_rules`]).
    pub(crate) forgotten_tables: Vec<(Family, TableKind)>,
    /// Run sets whose element counters `-Z` zeroes after the batch commits
    /// (a reset dump each: see [`crate::plan::Planner::zero`]).
    pub(crate) resets: Vec<(Family, TableKind, String)>,
    /// The write being planned failed only because an earlier write of
    /// its group renamed away a chain name it gives to a chain (the kernel
    /// renames at commit): it waits for the next batch instead of being
    /// refused. Cleared by [`Pending::set_tag`].
    pub(crate) deferred: bool,
    /// Tables whose kernel view this batch changed in ways that undoing
    /// its commands in the model does not undo (renames, dropped overflow
    /// text, run bookkeeping): an abandoned batch means re-reading them.
    pub(crate) side_effects: HashSet<(Family, TableKind)>,
    /// Tables this batch replaces (restore without --noflush), in the
    /// order they were first named; written whole by `finish`.
    pub(crate) fresh: Vec<(Family, TableKind)>,
    pub(crate) fresh_tags: HashMap<(Family, TableKind), FreshTags>,
    /// Run sets this batch deletes, so none is deleted twice.
    pub(crate) dropped_sets: Vec<(Family, TableKind, String)>,
    /// Ends of chains for appends (read, or derived from a whole model):
    /// appends to them join or start runs.
    pub(crate) tails: HashMap<(Family, TableKind, String), Tail>,
    /// Tags of writes that added a rule to an existing run: the kernel
    /// refuses it when the rule's key is already in the run (EEXIST) or
    /// the run's set is full (ENFILE, see `compile::runs::capacity`), and
    /// that write is then replayed with plain appends.
    pub(crate) joined: HashSet<Tag>,
    /// Chains a `--noflush` restore rewrites, their flush deferred (see
    /// `crate::plan::rewrite`).
    pub(crate) rewrites: Rewrites,
    /// The names the kernel knows chains this batch renamed by until it
    /// commits (see `crate::plan::names`).
    pub(crate) names: KernelNames,
    pub(crate) next_rule_id: u32,
    pub(crate) next_set_id: u32,
    /// The batch deletes objects in bulk (a chain flush, a table): the
    /// kernel notifies each object it removes, however short the batch.
    pub bulk: bool,
    /// Census changes of runs, in order, written at the end of the batch
    /// one element per run (see [`Pending::batch`]): the kernel refuses a
    /// batch that deletes and adds the same catalog element many times
    /// (EBUSY after ~80 pairs: a restore appending 100 members to a run).
    pub(crate) censuses: Vec<CensusWrite>,
    /// Chains registered and unregistered (see `crate::plan::registry`),
    /// written at the end of the batch.
    pub(crate) registry: super::registry::Writes,
}

/// One change of a run's census in the catalog: from `old` (what the
/// kernel has before it; `None`: no element) to `new`. `run: None` marks
/// the table deleted here (its census elements went with it).
#[derive(Clone, Debug)]
pub(crate) struct CensusWrite {
    pub(crate) family: Family,
    pub(crate) kind: TableKind,
    pub(crate) run: Option<u64>,
    pub(crate) old: Option<Census>,
    pub(crate) new: Option<Census>,
    pub(crate) tag: Tag,
}

/// A point to cut a [`Pending`] back to (one write of a group failed in
/// the model).
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    batch: nft::batch::Mark,
    created: usize,
    forgotten: usize,
    forgotten_tables: usize,
    resets: usize,
    fresh: usize,
    censuses: usize,
    registry: usize,
    names: usize,
    /// Which tables of the written family existed: a cut command may have
    /// created one.
    present: [bool; 5],
}

fn kind_index(k: TableKind) -> usize {
    TableKind::ALL.iter().position(|x| *x == k).unwrap_or(0)
}

impl Pending {
    pub fn new(batch: Batch) -> Pending {
        Pending {
            batch,
            tag: 0,
            created: Vec::new(),
            forgotten: Vec::new(),
            forgotten_tables: Vec::new(),
            resets: Vec::new(),
            deferred: false,
            side_effects: HashSet::new(),
            fresh: Vec::new(),
            fresh_tags: HashMap::new(),
            dropped_sets: Vec::new(),
            tails: HashMap::new(),
            joined: HashSet::new(),
            rewrites: Rewrites::default(),
            names: KernelNames::default(),
            next_rule_id: 1,
            next_set_id: first_set_id(),
            bulk: false,
            censuses: Vec::new(),
            registry: Default::default(),
        }
    }

    /// The batch to commit: the messages built so far, ended by the census
    /// writes (one delete and one add at most per run) and the registry's
    /// (one delete or add at most per chain).
    pub fn batch(&mut self) -> &mut Batch {
        self.write_censuses();
        self.registry.write(&mut self.batch, &mut self.next_set_id);
        &mut self.batch
    }

    /// The table whose registry message `seq` of this batch adds
    /// elements to, if it is one (see `super::registry::Writes::adds_at`).
    pub(crate) fn registry_adds_at(&self, seq: u32) -> Option<(Family, TableKind)> {
        self.registry.adds_at(seq)
    }

    /// Append the coalesced [`Pending::censuses`] to the batch: per run the
    /// first change's `old` and the last one's `new`, tagged as the last.
    /// O(changes).
    fn write_censuses(&mut self) {
        let mut runs: FxMap<(Family, TableKind, u64), CensusWrite> = FxMap::default();
        let mut order: Vec<(Family, TableKind, u64)> = Vec::new();
        for w in std::mem::take(&mut self.censuses) {
            let Some(run) = w.run else {
                // The table was deleted: what was changed before is gone.
                runs.retain(|k, _| !(k.0 == w.family && k.1 == w.kind));
                order.retain(|k| runs.contains_key(k));
                continue;
            };
            let key = (w.family, w.kind, run);
            match runs.get_mut(&key) {
                Some(c) => {
                    c.new = w.new;
                    c.tag = w.tag;
                }
                None => {
                    order.push(key);
                    runs.insert(key, w);
                }
            }
        }
        for key in order {
            let Some(w) = runs.remove(&key) else { continue };
            if w.old == w.new {
                continue;
            }
            let (fam, tname) = (
                compile::layout::nft_family(w.family),
                compile::layout::table_name(w.kind),
            );
            let ck = catalog::census_key(key.2);
            if w.old.is_some() {
                let es = SetElems::new(fam, &tname, catalog::SET, vec![SetElem::key(&ck)]);
                self.batch.delete(&es, w.tag);
            }
            if let Some(c) = w.new {
                let mut el = SetElem::key(&ck);
                el.userdata = Some(catalog::census_value(c));
                let es = SetElems::new(fam, &tname, catalog::SET, vec![el]);
                self.batch.add(&es, w.tag);
            }
        }
    }

    pub fn batch_ref(&self) -> &Batch {
        &self.batch
    }

    pub fn is_empty(&self) -> bool {
        self.batch.is_empty() && self.censuses.is_empty() && self.registry.is_empty()
    }

    /// Zero the counters of the run sets `-Z` left to a reset dump (after
    /// the batch committed, or when it was empty). A set gone meanwhile
    /// has no counters left to zero.
    pub fn reset_counters(&self, sock: &mut nft::Socket) -> Result<(), nft::Error> {
        for (f, k, set) in &self.resets {
            let fam = compile::layout::nft_family(*f);
            let table = compile::layout::table_name(*k);
            match sock.reset_set_elems(fam, &table, set) {
                // ENOENT, negative as the kernel answers.
                Err(nft::Error::Kernel { code: -2, .. }) | Ok(_) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Tag the messages added from now on.
    pub fn set_tag(&mut self, tag: Tag) {
        self.tag = tag;
        self.deferred = false;
    }

    /// Where the batch is now (see [`Pending::truncate`]); `view` is the
    /// view of the family about to be written.
    pub fn mark(&self, view: &KernelView) -> Mark {
        let mut present = [false; 5];
        for k in &view.present {
            present[kind_index(*k)] = true;
        }
        Mark {
            batch: self.batch.mark(),
            created: self.created.len(),
            forgotten: self.forgotten.len(),
            forgotten_tables: self.forgotten_tables.len(),
            resets: self.resets.len(),
            fresh: self.fresh.len(),
            censuses: self.censuses.len(),
            registry: self.registry.mark(),
            names: self.names.mark(),
            present,
        }
    }

    /// Drop what was added since `m` (the caller rolls the model back).
    /// Renames since are taken back in `view` too; other catalog and run
    /// bookkeeping changed since is recorded in `side_effects`.
    pub fn truncate(&mut self, m: Mark, view: &mut KernelView) {
        self.batch.truncate(m.batch);
        self.created.truncate(m.created);
        self.forgotten.truncate(m.forgotten);
        self.forgotten_tables.truncate(m.forgotten_tables);
        self.resets.truncate(m.resets);
        self.fresh.truncate(m.fresh);
        self.censuses.truncate(m.censuses);
        self.registry.truncate(m.registry);
        self.names.truncate(m.names, view);
        view.present.retain(|k| m.present[kind_index(*k)]);
    }

    /// After the batch committed: record in `view` (family `family`) the
    /// handles the kernel echoed for what it created and forget what it
    /// deleted. Returns how many created objects got no handle (echoes
    /// lost to a receive overrun): those tables must be re-read.
    /// O(echoes · log created).
    pub fn settle(&self, family: Family, view: &mut KernelView, echoes: &[nft::Echo]) -> usize {
        for (f, k) in &self.forgotten_tables {
            if *f == family {
                view.locs.retain(|(kind, _), _| kind != k);
            }
        }
        let mut missing = 0;
        let mut learnt = HashSet::new();
        for e in echoes {
            let Some(h) = e.handle else { continue };
            let Ok(i) = self.created.binary_search_by_key(&e.seq, |(s, _, _)| *s) else {
                continue;
            };
            let (_, f, c) = &self.created[i];
            if *f != family {
                continue;
            }
            learnt.insert(i);
            match c {
                Created::Rule(k, id) => view.learn_rule(*k, *id, h),
                Created::Run(ri) => view.learn_run(*ri, h),
            }
        }
        for (i, (_, f, _)) in self.created.iter().enumerate() {
            if *f == family && !learnt.contains(&i) {
                missing += 1;
            }
        }
        for (f, k, id) in &self.forgotten {
            if *f == family {
                view.locs.remove(&(*k, *id));
            }
        }
        self.registry.settle(family, view);
        missing
    }

    /// Every rule of table `kind` of `family` goes with this batch: their
    /// locations are forgotten when it commits. Rules the batch created in
    /// that table before are forgotten one by one (their handles are learnt
    /// after the table's locations are dropped). O(rules created so far).
    pub(crate) fn forget_table_rules(&mut self, family: Family, kind: TableKind) {
        for (_, f, c) in &self.created {
            if let Created::Rule(k, id) = c {
                if (*f, *k) == (family, kind) {
                    self.forgotten.push((family, kind, *id));
                }
            }
        }
        self.forgotten_tables.push((family, kind));
    }

    pub(crate) fn alloc_set_id(&mut self) -> u32 {
        self.next_set_id += 1;
        self.next_set_id - 1
    }

    pub(crate) fn alloc_rule_id(&mut self) -> u32 {
        self.next_rule_id += 1;
        self.next_rule_id - 1
    }

    /// Whether this batch replaces table `kind` of `family`.
    pub(crate) fn is_fresh(&self, family: Family, kind: TableKind) -> bool {
        self.fresh.contains(&(family, kind))
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

//! The warm model: every nfkeeper table of both families as the kernel has
//! it, plus where each rule and chain is in the kernel (handles), so a
//! write becomes the smallest batch without reading anything.
//!
//! Invariant between groups of writes: for every table, the model equals
//! what the kernel had at generation `genid`, except tables flagged stale
//! by [`crate::coherence`] (re-read before they are used).

use iptables::Rule;
use keeper::plan::KernelApply;
use keeper::read::{read_scoped, Scope, Snapshot};
use nft::Socket;
use ruleset::{Family, Table, TableKind};
use std::collections::HashMap;

/// Tables in iptables-save order (the order listings and saves use).
pub const KINDS: [TableKind; 5] = keeper::session::SAVE_ORDER;

/// One family's tables and kernel locations.
pub struct FamState {
    pub family: Family,
    pub tables: HashMap<TableKind, Table<Rule>>,
    /// Handles, chain handles, catalog bookkeeping and which tables exist;
    /// its batch is replaced for every group of writes.
    pub ap: KernelApply,
    /// Objects in our tables that nfkeeper did not write, described for a
    /// warning on every listing of that table (kept, never deleted).
    pub foreign: HashMap<TableKind, Vec<String>>,
}

impl FamState {
    fn new(family: Family) -> FamState {
        let mut ap = KernelApply::new(family, nft::Batch::new(0, None));
        ap.echo = true;
        // Runs compiled into sets (see keeper::session::compile_runs):
        // restores compile them, appends join them from the whole model.
        ap.compile = keeper::session::compile_runs();
        ap.model_tails = true;
        FamState {
            family,
            tables: HashMap::new(),
            ap,
            foreign: HashMap::new(),
        }
    }

    /// The model table `kind` (created empty, with its built-in chains, if
    /// the kernel has none yet).
    pub fn table_mut(&mut self, kind: TableKind) -> &mut Table<Rule> {
        let family = self.family;
        self.tables
            .entry(kind)
            .or_insert_with(|| Table::new(family, kind))
    }

    /// Whether the kernel has our table `kind`.
    pub fn exists(&self, kind: TableKind) -> bool {
        self.ap.present.contains(&kind)
    }

    /// Replace what the model knows of `kind` by a fresh read. O(objects of
    /// all tables of this family) for the location maps, O(kind's objects)
    /// otherwise.
    pub fn install(&mut self, kind: TableKind, snap: Snapshot) {
        let ap = &mut self.ap;
        ap.locs.retain(|(k, _), _| *k != kind);
        ap.chain_handles.retain(|(k, _), _| *k != kind);
        ap.overflow.retain(|(k, _), _| *k != kind);
        if snap.exists {
            ap.present.insert(kind);
        } else {
            ap.present.remove(&kind);
        }
        for (id, h) in snap.handles {
            ap.locs.insert((kind, id), keeper::plan::Loc::Handle(h));
        }
        for (name, h) in snap.chain_handles {
            ap.chain_handles.insert((kind, name), h);
        }
        for (id, n) in snap.overflow {
            ap.overflow.insert((kind, id), n);
        }
        // Compiled runs (keeper::runs): their members are set elements.
        ap.remember_runs(kind, &snap.runs);
        self.foreign.insert(kind, snap.foreign);
        self.tables.insert(kind, snap.table);
    }

    /// Rules in the model (all tables of this family).
    pub fn rule_count(&self) -> usize {
        self.existing().map(|t| t.rule_count()).sum()
    }

    pub fn chain_count(&self) -> usize {
        self.existing().map(|t| t.chains().len()).sum()
    }

    /// Model tables the kernel has.
    fn existing(&self) -> impl Iterator<Item = &Table<Rule>> {
        self.tables
            .iter()
            .filter(|(k, _)| self.exists(**k))
            .map(|(_, t)| t)
    }
}

/// Both families.
pub struct Warm {
    pub v4: FamState,
    pub v6: FamState,
    /// The kernel generation the model corresponds to (the genid every
    /// commit must still find).
    pub genid: u32,
}

impl Warm {
    /// Nothing known yet (before [`Warm::load`]).
    pub fn empty() -> Warm {
        Warm {
            v4: FamState::new(Family::Ipv4),
            v6: FamState::new(Family::Ipv6),
            genid: 0,
        }
    }

    /// Read every table of ours from the kernel: one dump each.
    pub fn load(sock: &mut Socket) -> Result<Warm, nft::Error> {
        let mut w = Warm::empty();
        loop {
            let g0 = sock.gen()?.id;
            for fam in [Family::Ipv4, Family::Ipv6] {
                for kind in KINDS {
                    w.resync(sock, fam, kind)?;
                }
            }
            // A commit elsewhere during the reads: read again, so that the
            // model is one generation's state.
            if sock.gen()?.id == g0 {
                w.genid = g0;
                return Ok(w);
            }
        }
    }

    pub fn fam(&self, f: Family) -> &FamState {
        match f {
            Family::Ipv4 => &self.v4,
            _ => &self.v6,
        }
    }

    pub fn fam_mut(&mut self, f: Family) -> &mut FamState {
        match f {
            Family::Ipv4 => &mut self.v4,
            _ => &mut self.v6,
        }
    }

    /// Re-read one table from the kernel into the model.
    pub fn resync(
        &mut self,
        sock: &mut Socket,
        fam: Family,
        kind: TableKind,
    ) -> Result<(), nft::Error> {
        let snap = read_scoped(sock, fam, kind, &Scope::Table)?;
        self.fam_mut(fam).install(kind, snap);
        Ok(())
    }
}

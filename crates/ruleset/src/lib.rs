//! The logical ruleset model: families, iptables tables, chains, ordered rules,
//! counters, and the indexes that make every single-rule operation cheap.
//!
//! What it is for: holding an iptables-shaped ruleset in memory so that any one
//! command costs O(log n) or O(1), never O(ruleset). What it is not: it knows no
//! syntax (see the `iptables` crate) and does no I/O.
//!
//! The model is generic over the rule body `R`: the `iptables` crate supplies the
//! structured rule. `R`'s `Eq + Hash` define "the same rule" for delete/check by
//! spec; a body must therefore be canonical (two bodies that print the same must
//! compare equal).
//!
//! Complexity contracts (n = rules in the chain, C = chains in the table):
//! - chain lookup by name: O(1) expected;
//! - rule at position k, insert before k, delete k, replace k: O(log n);
//! - append: O(log n) with a tree of fan-out 64 (height <= 4 at 1M rules);
//! - delete/check by spec: O(1) expected (hash index), plus O(log n) to locate;
//! - rule by stable id: O(1) expected.

mod error;
pub mod names;
mod seqtree;
mod table;
mod types;

/// A fast non-cryptographic hasher (Fx) for maps keyed by what the local
/// administrator wrote (rule ids, chain names, keys): no HashDoS concern,
/// and SipHash was a visible share of a large restore.
pub mod hash {
    pub use crate::table::hash::{FxBuild, FxHasher, FxMap, FxSet};
}

pub use error::Error;
pub use table::{ChainView, RuleView, Savepoint, Staging, Table, Undo};
pub use types::{ChainId, Counters, Family, Policy, RuleBody, RuleId, TableKind};

/// All tables of both families, indexed by (family, table kind).
#[derive(Clone, Debug)]
pub struct Ruleset<R: RuleBody> {
    tables: Vec<Table<R>>,
}

impl<R: RuleBody> Default for Ruleset<R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R: RuleBody> Ruleset<R> {
    /// A ruleset with every table of both families present and empty (built-in
    /// chains with ACCEPT policies and zero counters).
    pub fn new() -> Self {
        let mut tables = Vec::with_capacity(Family::ALL.len() * TableKind::ALL.len());
        for f in Family::ALL {
            for t in TableKind::ALL {
                tables.push(Table::new(f, t));
            }
        }
        Ruleset { tables }
    }

    fn slot(family: Family, kind: TableKind) -> usize {
        family.index() * TableKind::ALL.len() + kind.index()
    }

    pub fn table(&self, family: Family, kind: TableKind) -> &Table<R> {
        &self.tables[Self::slot(family, kind)]
    }

    pub fn table_mut(&mut self, family: Family, kind: TableKind) -> &mut Table<R> {
        &mut self.tables[Self::slot(family, kind)]
    }

    /// Swap in a whole table (restore without --noflush); returns the old one so
    /// the caller can put it back if a later part of the same restore fails.
    pub fn replace_table(&mut self, table: Table<R>) -> Table<R> {
        let slot = Self::slot(table.family(), table.kind());
        std::mem::replace(&mut self.tables[slot], table)
    }
}

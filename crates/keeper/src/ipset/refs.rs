//! `References:` of `ipset list`: how many iptables rules use a set, as
//! the kernel's ipset counts them — one per `-m set` match and one per
//! set a `-j SET` target names (`--add-set`, `--del-set`, `--map-set`), in
//! every table of both families.
//!
//! Recovered from the kernel alone: nftables exports no use count of a
//! set, so the rules are counted. Only the tables holding a copy of a
//! listed set can have such rules (a rule looks up its own table's copy,
//! see [`super`]), and those are read whole (one table read each,
//! O(rules of the table)) — or, where a model of every rule table is kept
//! at the kernel's generation (the daemon's), counted there; a set without
//! copies has 0 references and costs nothing. Rules naming sets are never
//! compiled into runs, so every one is in the model as itself.

use super::read::rule_tables_of;
use super::rules::rule_names;
use super::Sets;
use iptables::Rule;
use nft::Socket;
use ruleset::{Family, Ruleset, Table, TableKind};
use std::collections::HashMap;

/// Add the references of `table`'s rules to `into` (set name → count).
/// O(rules).
pub fn tally(table: &Table<Rule>, into: &mut HashMap<String, u32>) {
    for c in table.chains() {
        for r in table.rules_in(&c) {
            for n in rule_names(r.body) {
                *into.entry(n.to_string()).or_default() += 1;
            }
        }
    }
}

/// Where the rules are counted.
pub enum Rules<'a> {
    /// Read from the kernel (direct mode).
    Kernel,
    /// A model of every rule table at the kernel's current generation (the
    /// daemon's, brought up to date before each attempt): no kernel reads.
    Model(&'a Ruleset<Rule>),
}

/// Give each set of `names` in `sets` its references (the held count of
/// the model, which `ipset list` prints), counting the rules of the rule
/// tables that hold their copies.
pub fn count(
    sock: &mut Socket,
    sets: &mut Sets,
    names: &[String],
    rules: &Rules,
) -> Result<(), nft::Error> {
    let tables: Vec<(Family, TableKind)> = rule_tables_of(sets, names);
    let mut refs: HashMap<String, u32> = HashMap::new();
    for (f, k) in tables {
        match rules {
            Rules::Kernel => {
                let snap = crate::read::read_table(sock, f, k)?;
                tally(&snap.table, &mut refs);
            }
            Rules::Model(m) => tally(m.table(f, k), &mut refs),
        }
    }
    set_held(sets, names, &refs);
    Ok(())
}

/// Set the held count of each of `names` from `refs` (0 when absent).
pub fn set_held(sets: &mut Sets, names: &[String], refs: &HashMap<String, u32>) {
    for n in names {
        sets.store
            .set_held(n, refs.get(n.as_str()).copied().unwrap_or(0));
    }
}

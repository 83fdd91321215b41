//! Tables a restore replaces (no `--noflush`): the kernel table is
//! deleted when the restore first names it and written once, whole, from
//! the final model when the restore is done ([`Planner::finish`]) — its
//! table, base chains with their policies, user chains, and rules with
//! runs compiled. However many sections name the table and whatever their
//! lines do to it, the kernel sees one delete and one write: the cost is
//! that of the final ruleset, and a refusal still names the input line
//! that asked for the object (the lines are remembered by rule and chain).

use super::pending::FreshTags;
use super::Planner;
use compile::layout;
use compile::runs::{compile_chain, Item};
use iptables::exec::execute_owned;
use iptables::parse::{Command, Parsed};
use iptables::{Error, Rule};
use nft::batch::Placement;
use nft::{Chain, Tag};
use ruleset::hash::FxMap;
use ruleset::{Counters, RuleId, Ruleset, Table, TableKind};

fn unsupported(e: impl std::fmt::Display) -> Error {
    Error::param(e.to_string())
}

impl Planner<'_> {
    /// `*table` of a restore without `--noflush`. A second section of a
    /// table already replaced restarts it in the model only.
    pub(crate) fn start_fresh(&mut self, kind: TableKind) {
        let key = (self.family, kind);
        self.p.fresh_tags.insert(key, FreshTags::default());
        if self.p.is_fresh(self.family, kind) {
            return;
        }
        if self.view.exists(kind) {
            let (fam, tname) = (self.fam(), layout::table_name(kind));
            let tag = self.p.tag;
            self.p.bulk = true;
            self.p.batch.delete(&nft::Table::new(fam, &tname), tag);
            // Census changes before this went with the table.
            self.p.censuses.push(super::pending::CensusWrite {
                family: self.family,
                kind,
                run: None,
                old: None,
                new: None,
                tag,
            });
        }
        self.view.forget(kind);
        self.registry_dropped(kind);
        // The table's chains go with it, renamed ones too: their names are
        // free for the new ones.
        self.p.names.forget_table(self.family, kind);
        if let Some(sets) = self.ipsets.as_deref_mut() {
            sets.forget_copies(self.family, kind);
        }
        self.view.present.insert(kind);
        self.p.fresh.push(key);
    }

    /// A command on a table this batch replaces: the model only, plus the
    /// input line of each rule and chain it creates.
    pub(crate) fn fresh_command(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        out: &mut String,
    ) -> Result<(), Error> {
        let tag = self.p.tag;
        let mut new_rules: Vec<RuleId> = Vec::new();
        let mut new_chain = None;
        match p.command.clone() {
            Command::Append(c) => {
                let before = t.chain(&c).map_or(0, |c| c.len);
                execute_owned(t, p, out)?;
                let after = t.chain(&c).map_or(0, |c| c.len);
                new_rules.extend(
                    (before + 1..=after).filter_map(|i| t.rule_at(&c, i).ok().map(|r| r.id)),
                );
            }
            Command::Insert(c, n) => {
                let k = p.rules.len();
                execute_owned(t, p, out)?;
                new_rules.extend((n..n + k).filter_map(|i| t.rule_at(&c, i).ok().map(|r| r.id)));
            }
            Command::Replace(c, n) => {
                execute_owned(t, p, out)?;
                new_rules.extend(t.rule_at(&c, n).ok().map(|r| r.id));
            }
            Command::NewChain(c) => {
                execute_owned(t, p, out)?;
                new_chain = t.chain(&c).map(|v| v.id);
            }
            _ => execute_owned(t, p, out)?,
        }
        if let Some(tags) = self.p.fresh_tags.get_mut(&(self.family, kind)) {
            for id in new_rules {
                tags.rules.insert(id, tag);
            }
            if let Some(c) = new_chain {
                tags.chains.insert(c, tag);
            }
        }
        Ok(())
    }

    /// Settle the chains a `--noflush` restore rewrote (see
    /// `super::rewrite`) and write every table of this family the batch
    /// replaces, from `rs`. On error the batch's tag is the input line of
    /// the object refused.
    pub fn finish(&mut self, rs: &mut Ruleset<Rule>) -> Result<(), Error> {
        self.settle_all_rewrites(rs)?;
        let fresh: Vec<TableKind> = self
            .p
            .fresh
            .iter()
            .filter(|(f, _)| *f == self.family)
            .map(|(_, k)| *k)
            .collect();
        for kind in fresh {
            let tags = self
                .p
                .fresh_tags
                .remove(&(self.family, kind))
                .unwrap_or_default();
            self.write_table(kind, rs.table(self.family, kind), &tags)?;
        }
        Ok(())
    }

    fn write_table(
        &mut self,
        kind: TableKind,
        t: &Table<Rule>,
        tags: &FreshTags,
    ) -> Result<(), Error> {
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        let first_line = tags
            .chains
            .values()
            .chain(tags.rules.values())
            .min()
            .copied()
            .unwrap_or(self.p.tag);
        self.p.tag = first_line;
        self.add_table(kind, Some(t));
        // Views: a built-in has a policy; an empty chain has no rules to
        // emit (a restore of N empty chains looks no chain up by name). A
        // chain that holds no rule and that nothing jumps to is a registry
        // entry (see `super::registry`).
        let chains = t.chains();
        for c in chains.iter().filter(|c| c.policy.is_none()) {
            self.p.tag = tags.chains.get(&c.id).copied().unwrap_or(first_line);
            if c.len == 0 && c.references == 0 && self.set_virtual(kind, c.name, true) {
                continue;
            }
            let ch = Chain::new(fam, &tname, c.name);
            // Not echoed: see `Planner::new_chain`.
            let tag = self.p.tag;
            self.p.batch.create(&ch, tag);
        }
        for c in chains.iter().filter(|c| c.len > 0) {
            self.emit_chain(kind, t, c.name, &tags.rules)?;
        }
        Ok(())
    }

    /// Append every rule of `chain` (the model's) to the kernel chain, runs
    /// compiled when the engine compiles them.
    pub(crate) fn emit_chain(
        &mut self,
        kind: TableKind,
        t: &Table<Rule>,
        chain: &str,
        lines: &FxMap<RuleId, Tag>,
    ) -> Result<(), Error> {
        let rules: Vec<(RuleId, &Rule, Counters)> = match t.rules(chain) {
            Ok(it) => it.map(|r| (r.id, r.body, r.counters)).collect(),
            Err(_) => return Ok(()),
        };
        let items: Vec<Item> = match self.opts.compile {
            Some(o) => {
                let refs: Vec<(RuleId, &Rule)> = rules.iter().map(|(i, r, _)| (*i, *r)).collect();
                compile_chain(&refs, self.family, kind, chain, o).map_err(|e| {
                    // Name the first rule of the chain that does not lower.
                    if let Some((id, _, _)) = rules
                        .iter()
                        .find(|(_, r, _)| compile::lower_rule(r, self.family, kind, chain).is_err())
                    {
                        self.p.tag = lines.get(id).copied().unwrap_or(self.p.tag);
                    }
                    unsupported(e)
                })?
            }
            None => rules
                .iter()
                .map(|(id, _, _)| Item::Plain { id: *id })
                .collect(),
        };
        let by_id: FxMap<RuleId, (&Rule, Counters)> =
            rules.iter().map(|(i, r, c)| (*i, (*r, *c))).collect();
        for item in items {
            match item {
                Item::Plain { id } => {
                    self.p.tag = lines.get(&id).copied().unwrap_or(self.p.tag);
                    let (r, c) = by_id[&id];
                    self.new_rule(kind, chain, id, r, c, Placement::Append, None)?;
                }
                Item::Run { lowered, set } => {
                    if let Some(first) = set.elems.first() {
                        self.p.tag = lines.get(&first.id).copied().unwrap_or(self.p.tag);
                    }
                    self.new_run(kind, chain, lowered, *set, &by_id)?
                }
            }
        }
        Ok(())
    }
}

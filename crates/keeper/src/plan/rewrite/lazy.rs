//! Stand-ins in a rewrite: old rules a partial read left unparsed
//! (`crate::read::Snapshot::lazy`) enter the model as their kernel jump
//! only, and an input line of the same text takes one as its body. Here:
//! finding them in a rewritten chain, and parsing them where a body is
//! compared, written or read.

use super::super::{KernelView, Planner};
use super::Deferred;
use iptables::{Error, Rule};
use ruleset::{Counters, RuleId, Table, TableKind};

/// The stand-ins among `rules` (a chain's, in order): (0-based position,
/// id, index in `d.old`). O(rules).
pub(super) fn standins_of(
    view: &KernelView,
    kind: TableKind,
    rules: &[(RuleId, &Rule, Counters)],
    d: &Deferred,
) -> Vec<(usize, RuleId, usize)> {
    rules
        .iter()
        .enumerate()
        .filter_map(|(j, (id, _, _))| {
            let i = *d.from_text.get(id)?;
            view.lazy_text(kind, d.old[i].0).map(|_| (j, *id, i))
        })
        .collect()
}

impl Planner<'_> {
    /// The model's stand-ins in `chain` (bodies input lines took from old
    /// rules read unparsed, see [`crate::read::Snapshot::lazy`]):
    /// (0-based position, id, index in `d.old`). O(rules of the chain).
    pub(super) fn standins(
        &self,
        kind: TableKind,
        t: &Table<Rule>,
        chain: &str,
        d: &Deferred,
    ) -> Result<Vec<(usize, RuleId, usize)>, Error> {
        let rules: Vec<(RuleId, &Rule, Counters)> = t
            .rules(chain)
            .map_err(|e| Error::other(e.to_string()))?
            .map(|r| (r.id, r.body, r.counters))
            .collect();
        Ok(standins_of(self.view, kind, &rules, d))
    }

    /// Each stand-in of `list` ([`Self::standins`]) becomes in the model
    /// the rule parsed from its text (same id, position and counters).
    pub(super) fn materialize(
        &self,
        kind: TableKind,
        t: &mut Table<Rule>,
        chain: &str,
        d: &Deferred,
        list: Vec<(usize, RuleId, usize)>,
    ) -> Result<(), Error> {
        let err = |e: ruleset::Error| Error::other(e.to_string());
        for (j, id, i) in list {
            let text = self.view.lazy_text(kind, d.old[i].0).unwrap_or_default();
            let body = self.parse_text(kind, chain, text)?;
            let c = t.rule_at(chain, j + 1).map_err(err)?.counters;
            let fresh = t.replace(chain, j + 1, body, c).map_err(err)?;
            t.set_rule_id(fresh, id).map_err(err)?;
        }
        Ok(())
    }

    /// The rule `text` (a canonical text, after `-A chain`) parses to: a
    /// stand-in's body (see [`crate::read::Snapshot::lazy`]).
    pub(super) fn parse_text(
        &self,
        kind: TableKind,
        chain: &str,
        text: &str,
    ) -> Result<Rule, Error> {
        crate::read::parse_body(self.family, kind, chain, text).ok_or_else(|| {
            Error::other(format!("rule text of chain {chain} does not parse: {text}"))
        })
    }
}

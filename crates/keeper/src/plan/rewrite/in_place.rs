//! A deferred chain whose flush is not applied yet, not even to the model:
//! the model keeps the chain's old rules and a cursor over them. A line
//! `-A CHAIN TEXT` whose TEXT is the canonical text of the old rule at the
//! cursor only advances the cursor ([`iptables::exec::Known::Kept`]): the
//! model is not touched, no body is cloned, moved or checked. A line
//! spelt otherwise is parsed and kept the same way when its rule is the
//! old rule at the cursor ([`Planner::keep_parsed`]: kube-proxy writes
//! probabilities with ten digits, the kernel's read-back has eleven). A
//! chain rewritten with exactly its old rules (kube-proxy's `KUBE-SERVICES`
//! and every service chain on every sync) thus costs O(1) per line and
//! nothing at settling.
//!
//! Anything else the chain meets — an append that is not the next old
//! rule, a command that reads the chain (`-C`, `-L`, `-S`), a
//! refused jump elsewhere that the old rules might explain, the end of
//! input before every old rule was re-added, counters that differ — first
//! applies the flush ([`Planner::flush_in_place`]): the old rules are
//! collected, the model chain flushed and the rules the cursor passed
//! appended again as their lines would have been (bodies moved from the
//! old rules, each line's tag and counters). From then on the chain is a
//! deferred chain as in `super` (model flushed and refilled, difference
//! sent at settling), with exactly the state those lines would have made.
//!
//! Contract: the model seen by any command other than these in-place
//! appends is that of the flush and re-add; an in-place chain never holds
//! a rule past the cursor that a reader could see.

use super::{Deferred, Planner};
use iptables::exec::Known;
use iptables::{Error, Rule};
use nft::Tag;
use ruleset::{Counters, Family, RuleId, Table, TableKind};

/// A deferred chain's key in `super::Rewrites`.
type ChainKey = (Family, TableKind, String);

/// The cursor of a chain whose flush is not applied.
#[derive(Debug)]
pub(super) struct InPlace {
    /// The chain's rules in order when it was flushed (model ids, which
    /// are the kernel's).
    ids: Vec<RuleId>,
    /// Per old rule the cursor passed, in order: the tag and the counters
    /// (as the line gives them; `None` is zero) of the line re-adding it.
    kept: Vec<(Tag, Option<Counters>)>,
}

impl InPlace {
    /// `ids`: the chain's rules in order.
    pub(super) fn new(ids: Vec<RuleId>) -> InPlace {
        InPlace {
            ids,
            kept: Vec::new(),
        }
    }

    /// A second `:CHAIN` (or `-F CHAIN`) of the chain: back to nothing
    /// re-added.
    pub(super) fn restart(&mut self) {
        self.kept.clear();
    }

    /// Whether every old rule was re-added, in order, with the counters
    /// the model holds for it (`model`: the chain's rules' counters, in
    /// order): the flush and re-add would change nothing.
    pub(super) fn unchanged(&self, model: impl Iterator<Item = Counters>) -> bool {
        self.kept.len() == self.ids.len()
            && model
                .zip(&self.kept)
                .all(|(m, (_, c))| m == c.unwrap_or_default())
    }
}

impl Planner<'_> {
    /// A line `-A chain text` (counters as it gives them, input line
    /// `line`) of a `--noflush` restore, before it is parsed: kept in
    /// place when it re-adds the next old rule of an in-place chain (any
    /// other line of such a chain is parsed, then [`Self::keep_parsed`]);
    /// for a chain whose flush is applied, the old rule's body when a line
    /// of that text was read (`Planner::old_rule_by_text`).
    pub(crate) fn known_line(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        chain: &str,
        text: &str,
        counters: Option<Counters>,
        line: usize,
    ) -> Known {
        if self.p.rewrites.chains.is_empty() {
            return Known::Unknown;
        }
        let key = (self.family, kind, chain.to_string());
        let next = match self.p.rewrites.chains.get(&key) {
            None => return Known::Unknown,
            Some(Deferred {
                in_place: Some(ip), ..
            }) => ip.ids.get(ip.kept.len()).copied(),
            Some(_) => return self.known_body(kind, chain, text),
        };
        if next.is_some_and(|id| self.is_text_of(kind, t, chain, id, text)) {
            self.advance(&key, line as Tag, counters);
            return Known::Kept;
        }
        // Parsed, then kept if it adds the next old rule all the same
        // ([`Self::keep_parsed`]), else the flush is applied.
        Known::Unknown
    }

    /// An append `p` parsed from a line of in-place chain `chain` whose
    /// text was not the next old rule's, that adds exactly that rule
    /// (spelt otherwise: kube-proxy writes `--probability 0.3333333333`,
    /// which reads back as `0.33333333349`): kept in place too. O(1) plus
    /// one parse of the old rule's text when it was read as a stand-in.
    pub(super) fn keep_parsed(
        &mut self,
        kind: TableKind,
        t: &Table<Rule>,
        chain: &str,
        p: &iptables::parse::Parsed,
    ) -> bool {
        let [rule] = p.rules.as_slice() else {
            return false;
        };
        let key = (self.family, kind, chain.to_string());
        let Some(ip) = self
            .p
            .rewrites
            .chains
            .get(&key)
            .and_then(|d| d.in_place.as_ref())
        else {
            return false;
        };
        let Some(&id) = ip.ids.get(ip.kept.len()) else {
            return false;
        };
        let same = match self.view.lazy_text(kind, id) {
            Some(text) => self
                .parse_text(kind, chain, text)
                .is_ok_and(|old| old == *rule),
            None => t.rule_by_id(id).is_some_and(|(_, _, r)| r.body == rule),
        };
        if same {
            self.advance(&key, self.p.tag, p.counters);
        }
        same
    }

    /// The in-place chain `key` took its next old rule back from the line
    /// tagged `tag` (counters as it gives them).
    fn advance(&mut self, key: &ChainKey, tag: Tag, counters: Option<Counters>) {
        if let Some(ip) = self
            .p
            .rewrites
            .chains
            .get_mut(key)
            .and_then(|d| d.in_place.as_mut())
        {
            ip.kept.push((tag, counters));
        }
    }

    fn known_body(&mut self, kind: TableKind, chain: &str, text: &str) -> Known {
        match self.old_rule_by_text(kind, chain, text) {
            Some(r) => Known::Rule(r),
            None => Known::Unknown,
        }
    }

    /// Whether `text` is the canonical text of rule `id` of `chain`: by
    /// the texts read (O(1)), or for a whole model (which kept none) by
    /// printing that rule.
    fn is_text_of(
        &self,
        kind: TableKind,
        t: &Table<Rule>,
        chain: &str,
        id: RuleId,
        text: &str,
    ) -> bool {
        if let Some(read) = self.view.rule_by_text(kind, chain, text) {
            return read == id;
        }
        if !self.opts.whole_model {
            return false;
        }
        if let Some(lazy) = self.view.lazy_text(kind, id) {
            return lazy == text;
        }
        t.rule_by_id(id).is_some_and(|(_, _, r)| {
            super::super::emit::rule_text(self.family, r.body)
                .0
                .trim_start()
                == text
        })
    }

    /// Apply the flush of in-place chain `chain` (nothing when it is not
    /// one): the model chain flushed and the old rules the cursor passed
    /// appended again, as their lines would have (see the module doc).
    /// O(old rules).
    pub(super) fn flush_in_place(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        chain: &str,
    ) -> Result<(), Error> {
        let key = (self.family, kind, chain.to_string());
        let Some(d) = self.p.rewrites.chains.get_mut(&key) else {
            return Ok(());
        };
        apply_flush(t, chain, d)
    }

    /// [`Self::flush_in_place`] of every in-place chain of table `kind`.
    pub(super) fn flush_all_in_place(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
    ) -> Result<(), Error> {
        let chains: Vec<String> = self
            .p
            .rewrites
            .chains
            .iter()
            .filter(|((f, k, _), d)| *f == self.family && *k == kind && d.in_place.is_some())
            .map(|((_, _, c), _)| c.clone())
            .collect();
        for c in chains {
            self.flush_in_place(kind, t, &c)?;
        }
        Ok(())
    }

    /// Whether table `kind` has an in-place chain.
    pub(super) fn has_in_place(&self, kind: TableKind) -> bool {
        self.p
            .rewrites
            .chains
            .iter()
            .any(|((f, k, _), d)| *f == self.family && *k == kind && d.in_place.is_some())
    }
}

/// Apply the flush of `d` (chain `chain` of model `t`) when it is in
/// place; see [`Planner::flush_in_place`].
pub(super) fn apply_flush(t: &mut Table<Rule>, chain: &str, d: &mut Deferred) -> Result<(), Error> {
    let Some(ip) = d.in_place.take() else {
        return Ok(());
    };
    let err = |e: ruleset::Error| Error::other(e.to_string());
    let old: Vec<(RuleId, Rule, Counters)> = t
        .rules(chain)
        .map_err(err)?
        .map(|r| (r.id, r.body.clone(), r.counters))
        .collect();
    t.flush_chain(chain).map_err(err)?;
    *d = Deferred::new(old, d.tag);
    for (i, (tag, c)) in ip.kept.into_iter().enumerate() {
        let body = std::mem::take(&mut d.old[i].1);
        d.taken[i] = true;
        let id = t.append(chain, body, c.unwrap_or_default()).map_err(err)?;
        d.lines.insert(id, tag);
        d.from_text.insert(id, i);
    }
    Ok(())
}

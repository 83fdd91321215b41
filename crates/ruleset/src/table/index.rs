//! Index maintenance under the public operations: the jump graph checks and
//! the raw rule operations, which neither validate nor record undo entries.
//! Callers validate first; these keep the slab, the trees, the id and spec
//! indexes and the per-chain jump bookkeeping consistent with each other.

use super::hash::{spec_key, FxSet};
use super::{Rule, Table};
use crate::seqtree::NIL;
use crate::{Counters, Error, RuleBody, RuleId};

impl<R: RuleBody> Table<R> {
    // ----- jump graph -----------------------------------------------------

    /// `NoSuchTarget` / `Loop` checks for adding `body` to chain `cid`.
    pub(super) fn check_jump(&self, cid: u32, body: &R) -> Result<(), Error> {
        let Some(t) = body.jump_target() else {
            return Ok(());
        };
        let Some(&target) = self.names.get(t) else {
            return Err(Error::NoSuchTarget(t.to_string()));
        };
        if target.0 == cid || self.reaches(target.0, cid) {
            return Err(Error::Loop);
        }
        Ok(())
    }

    /// Whether chain `to` is reachable from chain `from` through jumps.
    /// Depth-first over the chain graph (edges are `Chain::jumps`, one per
    /// distinct target): O(chains + edges reachable from `from`), independent
    /// of the number of rules; O(1) when `from` has no jump rules, the common
    /// case.
    pub(super) fn reaches(&self, from: u32, to: u32) -> bool {
        if self.ch(from).jumps.is_empty() {
            return false;
        }
        let mut seen = FxSet::default();
        seen.insert(from);
        let mut stack = vec![from];
        while let Some(c) = stack.pop() {
            for &t in self.ch(c).jumps.keys() {
                if t == to {
                    return true;
                }
                if seen.insert(t) {
                    stack.push(t);
                }
            }
        }
        false
    }

    // ----- raw rule operations (no validation) ---------------------------

    pub(super) fn link_spec(&mut self, slot: u32) {
        let key = self.rec(slot).key;
        let head = self.spec.insert(key, slot).unwrap_or(NIL);
        self.rec_mut(slot).next = head;
    }

    /// Remove `slot` from its spec list. O(list length): equal rules of the
    /// chain plus rare 32-bit key collisions.
    pub(super) fn unlink_spec(&mut self, slot: u32) {
        let (key, next) = {
            let r = self.rec(slot);
            (r.key, r.next)
        };
        let head = self.spec[&key];
        if head == slot {
            if next == NIL {
                self.spec.remove(&key);
            } else {
                self.spec.insert(key, next);
            }
            return;
        }
        let mut prev = head;
        while self.rec(prev).next != slot {
            prev = self.rec(prev).next;
        }
        self.rec_mut(prev).next = next;
    }

    /// Put a validated rule in the slab, the spec and id indexes and the jump
    /// graph; the caller places the returned slot in the chain's tree.
    pub(super) fn alloc_rule(&mut self, cid: u32, id: RuleId, body: R, counters: Counters) -> u32 {
        let target = body.jump_target().map(|t| self.names[t].0);
        let key = spec_key(cid, &body);
        let rule = Rule {
            body,
            counters,
            id,
            chain: cid,
            leaf: NIL,
            next: NIL,
            key,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.rules[s as usize] = Some(rule);
                s
            }
            None => {
                self.rules.push(Some(rule));
                u32::try_from(self.rules.len() - 1).expect("rule slots exhausted")
            }
        };
        self.link_spec(slot);
        self.ids.insert(id, slot);
        if let Some(t) = target {
            *self.ch_mut(cid).jumps.entry(t).or_insert(0) += 1;
            self.ch_mut(t).referrers.insert(slot);
        }
        slot
    }

    /// Insert a validated rule at 0-based `at` of chain `cid`. O(log n).
    pub(super) fn raw_insert(
        &mut self,
        cid: u32,
        at: usize,
        id: RuleId,
        body: R,
        counters: Counters,
    ) -> u32 {
        let slot = self.alloc_rule(cid, id, body, counters);
        let rules = &mut self.rules;
        let chain = self.chains[cid as usize].as_mut().expect("live chain");
        chain.rules.insert(at, slot, &mut |s, leaf| {
            rules[s as usize].as_mut().expect("live rule").leaf = leaf;
        });
        slot
    }

    /// Swap the rule at 0-based `at` of chain `cid` for a validated one, in
    /// place in the tree; returns the old rule. O(log n).
    pub(super) fn raw_replace(
        &mut self,
        cid: u32,
        at: usize,
        id: RuleId,
        body: R,
        c: Counters,
    ) -> Rule<R> {
        let slot = self.alloc_rule(cid, id, body, c);
        let rules = &mut self.rules;
        let chain = self.chains[cid as usize].as_mut().expect("live chain");
        let old = chain.rules.set(at, slot, &mut |s, leaf| {
            rules[s as usize].as_mut().expect("live rule").leaf = leaf;
        });
        self.unindex(old)
    }

    /// Drop `slot` from the indexes and the slab (not from its chain's tree).
    pub(super) fn unindex(&mut self, slot: u32) -> Rule<R> {
        self.unlink_spec(slot);
        self.drop_rule(slot)
    }

    /// `unindex` minus the spec list, which the caller has already fixed.
    fn drop_rule(&mut self, slot: u32) -> Rule<R> {
        let rule = self.rules[slot as usize].take().expect("live rule");
        self.free.push(slot);
        self.ids.remove(rule.id);
        if let Some(t) = rule.body.jump_target() {
            let target = self.names[t].0;
            self.ch_mut(target).referrers.remove(&slot);
            let jumps = &mut self.ch_mut(rule.chain).jumps;
            let n = jumps.get_mut(&target).expect("jump edge");
            *n -= 1;
            if *n == 0 {
                jumps.remove(&target);
            }
        }
        rule
    }

    /// Remove the rule at 0-based `at` of chain `cid`. O(log n).
    pub(super) fn raw_remove(&mut self, cid: u32, at: usize) -> Rule<R> {
        let rules = &mut self.rules;
        let chain = self.chains[cid as usize].as_mut().expect("live chain");
        let slot = chain.rules.remove(at, &mut |s, leaf| {
            rules[s as usize].as_mut().expect("live rule").leaf = leaf;
        });
        self.unindex(slot)
    }

    /// Remove every rule of chain `cid`, in order. O(rules in the chain).
    pub(super) fn raw_flush(&mut self, cid: u32) -> Vec<Rule<R>> {
        let chain = self.chains[cid as usize].as_mut().expect("live chain");
        let slots: Vec<u32> = chain.rules.iter().collect();
        chain.rules.clear();
        // Rebuild each affected spec list once, keeping other chains' slots
        // (32-bit key collisions): unlinking slot by slot would cost
        // O(k^2) for k equal rules.
        for &slot in &slots {
            let key = self.rec(slot).key;
            let Some(head) = self.spec.remove(&key) else {
                continue;
            };
            let mut keep = Vec::new();
            let mut s = head;
            while s != NIL {
                let r = self.rec(s);
                if r.chain != cid {
                    keep.push(s);
                }
                s = r.next;
            }
            let mut next = NIL;
            for &k in keep.iter().rev() {
                self.rec_mut(k).next = next;
                next = k;
            }
            if next != NIL {
                self.spec.insert(key, next);
            }
        }
        slots.into_iter().map(|s| self.drop_rule(s)).collect()
    }

    /// 0-based position of a live slot. O(log n).
    pub(super) fn position(&self, slot: u32) -> usize {
        let r = self.rec(slot);
        self.ch(r.chain).rules.position(r.leaf, slot)
    }

    pub(super) fn alloc_id(&mut self) -> RuleId {
        let id = RuleId(self.next_id);
        self.next_id += 1;
        id
    }

    /// First (lowest position) rule of chain `cid` equal to `body`, as
    /// (0-based position, slot). O(k log n) for k rules with the same key.
    pub(super) fn find_first(&self, cid: u32, body: &R) -> Option<(usize, u32)> {
        let mut slot = *self.spec.get(&spec_key(cid, body))?;
        let mut best: Option<(usize, u32)> = None;
        while slot != NIL {
            let r = self.rec(slot);
            if r.chain == cid && r.body == *body {
                let p = self.ch(cid).rules.position(r.leaf, slot);
                if !matches!(best, Some((bp, _)) if bp <= p) {
                    best = Some((p, slot));
                }
            }
            slot = r.next;
        }
        best
    }
}

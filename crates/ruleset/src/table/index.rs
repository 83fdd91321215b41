//! Index maintenance under the public operations: the jump graph checks and
//! the raw rule operations, which neither validate nor record undo entries.
//! Callers validate first; these keep the slab, the trees, the id and spec
//! indexes and the per-chain jump bookkeeping consistent with each other.

use super::hash::{spec_key, FxMap, FxSet};
use super::{Rule, Table};
use crate::seqtree::NIL;
use crate::{Counters, Error, RuleBody, RuleId};

/// The chain a rule jumps to (`None`: no jump), as checked by
/// [`Table::check_jump`]: what the jump bookkeeping needs without a second
/// lookup of the target's name.
pub(super) struct Target(Option<u32>);

impl<R: RuleBody> Table<R> {
    // ----- jump graph -----------------------------------------------------

    /// `NoSuchTarget` / `Loop` checks for adding `body` to chain `cid`.
    ///
    /// A loop is what the kernel refuses (and what both iptables backends
    /// refuse): a cycle of jumps reachable from a built-in chain. A cycle
    /// among chains no built-in chain reaches is accepted, as iptables
    /// accepts it; it is refused once a jump makes it reachable. Cost:
    /// O(1) when the target has no jumps (the common case); otherwise the
    /// chains reachable from the target and those reaching `cid`. Returns
    /// the target's chain (for [`Table::raw_insert`]: one name lookup).
    pub(super) fn check_jump(&self, cid: u32, body: &R) -> Result<Target, Error> {
        let Some(t) = body.jump_target() else {
            return Ok(Target(None));
        };
        let Some(&target) = self.names.get(t) else {
            return Err(Error::NoSuchTarget(t.to_string()));
        };
        let (to, from) = (target.0, cid);
        let may_cycle = to == from || !self.ch(to).jumps.is_empty();
        if may_cycle && self.reached_from_builtin(from) && self.cycle_from(to, (from, to)) {
            return Err(Error::Loop);
        }
        Ok(Target(Some(to)))
    }

    /// The chain `body` jumps to, looked up by name (the body of a rule
    /// already checked, e.g. one put back by undo).
    pub(super) fn target_of(&self, body: &R) -> Target {
        Target(body.jump_target().map(|t| self.names[t].0))
    }

    /// Whether a built-in chain reaches chain `c` (or `c` is built-in):
    /// backwards over the referring rules' chains. O(chains and referring
    /// rules upstream of `c`).
    fn reached_from_builtin(&self, c: u32) -> bool {
        let mut seen = FxSet::default();
        seen.insert(c);
        let mut stack = vec![c];
        while let Some(c) = stack.pop() {
            if self.ch(c).builtin.is_some() {
                return true;
            }
            for &slot in &self.ch(c).referrers {
                let up = self.rec(slot).chain;
                if seen.insert(up) {
                    stack.push(up);
                }
            }
        }
        false
    }

    /// Whether the jump graph plus the edge `extra` has a cycle reachable
    /// from chain `start`. Depth-first with on-stack marks: O(chains and
    /// edges reachable from `start`).
    fn cycle_from(&self, start: u32, extra: (u32, u32)) -> bool {
        let succ = |c: u32| -> Vec<u32> {
            let mut v: Vec<u32> = self.ch(c).jumps.keys().copied().collect();
            if c == extra.0 {
                v.push(extra.1);
            }
            v
        };
        // true = on the current path, false = finished.
        let mut mark: FxMap<u32, bool> = FxMap::default();
        mark.insert(start, true);
        let mut stack = vec![(start, succ(start))];
        while let Some((c, next)) = stack.last_mut() {
            match next.pop() {
                Some(n) => match mark.get(&n) {
                    Some(true) => return true,
                    Some(false) => {}
                    None => {
                        mark.insert(n, true);
                        let s = succ(n);
                        stack.push((n, s));
                    }
                },
                None => {
                    mark.insert(*c, false);
                    stack.pop();
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
    pub(super) fn alloc_rule(
        &mut self,
        cid: u32,
        id: RuleId,
        body: R,
        counters: Counters,
        Target(target): Target,
    ) -> u32 {
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

    /// Insert a validated rule at 0-based `at` of chain `cid`; `target`
    /// is its jump's chain ([`Table::check_jump`], or
    /// [`Table::target_of`] for a rule checked before). O(log n).
    pub(super) fn raw_insert(
        &mut self,
        cid: u32,
        at: usize,
        id: RuleId,
        body: R,
        counters: Counters,
        target: Target,
    ) -> u32 {
        let slot = self.alloc_rule(cid, id, body, counters, target);
        self.place_slot(cid, at, slot);
        slot
    }

    /// Put the indexed rule `slot` at 0-based `at` of chain `cid`'s tree.
    pub(super) fn place_slot(&mut self, cid: u32, at: usize, slot: u32) {
        let rules = &mut self.rules;
        let chain = self.chains[cid as usize].as_mut().expect("live chain");
        chain.rules.insert(at, slot, &mut |s, leaf| {
            rules[s as usize].as_mut().expect("live rule").leaf = leaf;
        });
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
        target: Target,
    ) -> Rule<R> {
        let slot = self.alloc_rule(cid, id, body, c, target);
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
    pub(super) fn raw_flush(&mut self, cid: u32) -> Vec<(RuleId, R, Counters)> {
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
        slots
            .into_iter()
            .map(|s| {
                let r = self.drop_rule(s);
                (r.id, r.body, r.counters)
            })
            .collect()
    }

    /// 0-based position of a live slot. O(log n).
    pub(super) fn position(&self, slot: u32) -> usize {
        let r = self.rec(slot);
        self.ch(r.chain).rules.position(r.leaf, slot)
    }

    /// The id a rule given id `id` gets: `id` itself, keeping the
    /// allocator above it, unless it is 0 or taken (then a fresh one).
    pub(super) fn take_id(&mut self, id: RuleId) -> RuleId {
        if id.0 == 0 || self.ids.contains(id) {
            self.alloc_id()
        } else {
            self.next_id = self.next_id.max(id.0.saturating_add(1));
            id
        }
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

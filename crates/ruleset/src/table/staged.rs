//! Rules appended in an order other than their arrival: a model rebuilt
//! from the kernel gets a compiled run's members in the kernel's hash
//! order while their chain order is their ids'. [`Staging`] indexes each
//! rule as it arrives (slab, id and spec indexes, jump graph: the costly
//! part, done while the reader waits for the kernel's next reply) and
//! places them all at the chain's end, in order, when it ends.

use super::{Rule, Table};
use crate::seqtree::NIL;
use crate::{ChainId, Counters, Error, RuleBody, RuleId};

/// Rules staged for the end of one chain; placed there in the order of
/// the keys they were staged with when the guard ends ([`Staging::finish`]
/// or drop). While it lives, the table is reached only through it: staged
/// rules are indexed but have no position yet.
pub struct Staging<'t, R: RuleBody> {
    table: &'t mut Table<R>,
    cid: u32,
    /// (order key, slot) of each staged rule.
    staged: Vec<(RuleId, u32)>,
}

impl<R: RuleBody> Table<R> {
    /// Start staging rules for the end of chain `chain`.
    pub fn staging(&mut self, chain: &str) -> Result<Staging<'_, R>, Error> {
        let cid = self.cid(chain)?;
        Ok(Staging {
            table: self,
            cid,
            staged: Vec::new(),
        })
    }
}

impl<R: RuleBody> Staging<'_, R> {
    /// As [`Table::append_with_id`] (same checks, same id choice; returns
    /// the id used), placed by `key` at the end: rules staged with equal
    /// keys keep their staging order. O(1) amortized plus the indexes'.
    pub fn stage(
        &mut self,
        key: RuleId,
        id: RuleId,
        body: R,
        counters: Counters,
    ) -> Result<RuleId, Error> {
        let t = &mut *self.table;
        let target = t.check_jump(self.cid, &body)?;
        let id = t.take_id(id);
        let slot = t.alloc_rule(self.cid, id, body, counters, target);
        self.staged.push((key, slot));
        Ok(id)
    }

    /// Add `c` to the counters of rule `id` if this guard staged it (a
    /// rule the kernel holds as several elements). O(1).
    pub fn add_counters(&mut self, id: RuleId, c: Counters) -> bool {
        let t = &mut *self.table;
        let Some(slot) = t.ids.get(id) else {
            return false;
        };
        let r = t.rec_mut(slot);
        if r.leaf != NIL || r.chain != self.cid {
            return false;
        }
        r.counters.packets += c.packets;
        r.counters.bytes += c.bytes;
        true
    }

    /// [`Table::ensure_chain`] (a staged rule's jump target).
    pub fn ensure_chain(&mut self, name: &str) -> ChainId {
        self.table.ensure_chain(name)
    }

    /// The table, read-only (its staged rules have no position yet).
    pub fn table(&self) -> &Table<R> {
        self.table
    }

    /// Drop every rule staged so far (their ids are free again).
    pub fn clear(&mut self) {
        for (_, slot) in self.staged.drain(..) {
            let _: Rule<R> = self.table.unindex(slot);
        }
    }

    /// Place the staged rules; their ids in chain order.
    pub fn finish(mut self) -> Vec<RuleId> {
        self.place()
    }

    /// O(n log n) for the sort plus O(log n) per placed rule.
    fn place(&mut self) -> Vec<RuleId> {
        let mut staged = std::mem::take(&mut self.staged);
        staged.sort_by_key(|s| s.0);
        let t = &mut *self.table;
        let mut ids = Vec::with_capacity(staged.len());
        for (_, slot) in staged {
            let at = t.ch(self.cid).rules.len();
            t.place_slot(self.cid, at, slot);
            let id = t.rec(slot).id;
            t.record(|| super::Op::Insert(id));
            ids.push(id);
        }
        ids
    }
}

impl<R: RuleBody> Drop for Staging<'_, R> {
    /// A guard left early (an error) still leaves a consistent table.
    fn drop(&mut self) {
        self.place();
    }
}

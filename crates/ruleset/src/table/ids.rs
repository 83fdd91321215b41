//! Rule id → slot index. Ids handed out by the table are dense (1, 2, 3 …),
//! so most live in a plain `Vec` indexed by id: O(1), 4 bytes per id, and no
//! random hashing on the restore hot path. Ids that are far above the live
//! rule count (given explicitly, e.g. read back from the kernel, or left after
//! heavy churn) go to a hash map instead, which bounds the vector at
//! 4 × (live rules) + 1024 entries.

use super::hash::{FxMap, IdKey};
use crate::RuleId;

const NIL: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub(crate) struct IdIndex {
    dense: Vec<u32>,
    sparse: FxMap<IdKey, u32>,
    len: usize,
}

impl IdIndex {
    fn dense_ok(&self, id: u64) -> bool {
        (id as usize) < self.dense.len() || id <= 4 * self.len as u64 + 1024
    }

    pub(crate) fn insert(&mut self, id: RuleId, slot: u32) {
        if self.dense_ok(id.0) {
            let i = id.0 as usize;
            if i >= self.dense.len() {
                self.dense.resize(i + 1, NIL);
            }
            debug_assert_eq!(self.dense[i], NIL, "id inserted twice");
            self.dense[i] = slot;
        } else {
            self.sparse.insert(IdKey::new(id), slot);
        }
        self.len += 1;
    }

    pub(crate) fn get(&self, id: RuleId) -> Option<u32> {
        match self.dense.get(id.0 as usize) {
            Some(&s) if s != NIL => Some(s),
            _ => self.sparse.get(&IdKey::new(id)).copied(),
        }
    }

    pub(crate) fn contains(&self, id: RuleId) -> bool {
        self.get(id).is_some()
    }

    pub(crate) fn remove(&mut self, id: RuleId) -> Option<u32> {
        let i = id.0 as usize;
        let got = match self.dense.get_mut(i) {
            Some(s) if *s != NIL => Some(std::mem::replace(s, NIL)),
            _ => self.sparse.remove(&IdKey::new(id)),
        };
        if got.is_some() {
            self.len -= 1;
            if self.len == 0 {
                self.dense = Vec::new();
                self.sparse = FxMap::default();
            }
        }
        got
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn reserve(&mut self, additional: usize) {
        self.dense.reserve(additional);
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.dense.shrink_to_fit();
        self.sparse.shrink_to_fit();
    }

    /// Heap bytes: the vector plus the map (entries and control bytes).
    pub(crate) fn heap_bytes(&self, map_bytes: fn(usize, usize) -> usize) -> usize {
        self.dense.capacity() * 4
            + map_bytes(self.sparse.capacity(), std::mem::size_of::<(IdKey, u32)>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_agree_with_a_map() {
        let mut idx = IdIndex::default();
        let mut reference = std::collections::HashMap::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = 1u64;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 4 {
                0 | 1 => {
                    // Mostly dense ids, sometimes a far one.
                    let id = if x % 16 == 1 { x >> 20 } else { next };
                    next += 1;
                    if reference.contains_key(&id) || id == 0 {
                        continue;
                    }
                    idx.insert(RuleId(id), step);
                    reference.insert(id, step);
                }
                _ => {
                    let Some(&id) = reference
                        .keys()
                        .nth((x as usize / 7) % reference.len().max(1))
                    else {
                        continue;
                    };
                    assert_eq!(idx.remove(RuleId(id)), reference.remove(&id));
                }
            }
            assert_eq!(idx.len(), reference.len());
        }
        for (id, slot) in &reference {
            assert_eq!(idx.get(RuleId(*id)), Some(*slot));
        }
        assert!(idx.dense.len() <= 4 * 20_000 + 1025);
    }
}

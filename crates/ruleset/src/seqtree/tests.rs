//! Differential tests of `SeqTree` against a `Vec<u32>`.

use super::*;

/// xorshift64*: deterministic, dependency-free randomness for tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Owner-side leaf table, as the rule table keeps it.
struct Harness {
    tree: SeqTree,
    reference: Vec<u32>,
    leaf_of: Vec<u32>,
    next_item: u32,
}

impl Harness {
    fn new() -> Self {
        Harness {
            tree: SeqTree::new(),
            reference: Vec::new(),
            leaf_of: Vec::new(),
            next_item: 0,
        }
    }

    fn fresh(&mut self) -> u32 {
        let it = self.next_item;
        self.next_item += 1;
        self.leaf_of.push(NIL);
        it
    }

    fn insert(&mut self, k: usize) {
        let it = self.fresh();
        let leaf_of = &mut self.leaf_of;
        self.tree.insert(k, it, &mut |i, l| leaf_of[i as usize] = l);
        self.reference.insert(k, it);
    }

    fn remove(&mut self, k: usize) {
        let leaf_of = &mut self.leaf_of;
        let got = self.tree.remove(k, &mut |i, l| leaf_of[i as usize] = l);
        assert_eq!(got, self.reference.remove(k));
        self.leaf_of[got as usize] = NIL;
    }

    fn set(&mut self, k: usize) {
        let it = self.fresh();
        let leaf_of = &mut self.leaf_of;
        let old = self.tree.set(k, it, &mut |i, l| leaf_of[i as usize] = l);
        assert_eq!(old, std::mem::replace(&mut self.reference[k], it));
        self.leaf_of[old as usize] = NIL;
    }

    fn check(&self) {
        assert_eq!(self.tree.len(), self.reference.len());
        assert!(self.tree.iter().eq(self.reference.iter().copied()));
        for (k, &it) in self.reference.iter().enumerate() {
            assert_eq!(self.tree.position(self.leaf_of[it as usize], it), k);
        }
        self.check_structure();
    }

    fn check_structure(&self) {
        let t = &self.tree;
        if t.leaves.is_empty() {
            // A tree that never held an item has no node yet.
            assert_eq!((t.len, t.height, t.inners.len()), (0, 0, 0));
            return;
        }
        let mut leaves_in_order = Vec::new();
        let total = walk(t, t.root, t.height, NIL, &mut leaves_in_order);
        assert_eq!(total, t.len);
        let mut l = if leaves_in_order.is_empty() {
            NIL
        } else {
            t.first
        };
        let mut prev = NIL;
        for &expected in &leaves_in_order {
            assert_eq!(l, expected);
            assert_eq!(t.leaves[l as usize].prev, prev);
            assert!(t.leaves[l as usize].items.len() <= LEAF_CAP);
            prev = l;
            l = t.leaves[l as usize].next;
        }
        assert_eq!(l, NIL);
    }
}

/// Returns the item count under `node`, checking counts and parent links.
fn walk(t: &SeqTree, node: u32, height: u32, parent: u32, out: &mut Vec<u32>) -> usize {
    if height == 0 {
        let l = &t.leaves[node as usize];
        assert_eq!(l.parent, parent);
        assert!(!l.items.is_empty() || t.len == 0);
        out.push(node);
        return l.items.len();
    }
    let n = &t.inners[node as usize];
    assert_eq!(n.parent, parent);
    assert_eq!(n.leaf_kids, height == 1);
    assert!(!n.children.is_empty() && n.children.len() <= INNER_CAP);
    assert_eq!(n.children.len(), n.counts.len());
    let mut sum = 0;
    for (&c, &cnt) in n.children.iter().zip(&n.counts) {
        let got = walk(t, c, height - 1, node, out);
        assert_eq!(got, cnt as usize);
        sum += got;
    }
    sum
}

#[test]
fn empty_tree() {
    let h = Harness::new();
    h.check();
    assert_eq!(h.tree.iter().count(), 0);
}

#[test]
fn append_keeps_leaves_full() {
    let mut h = Harness::new();
    for _ in 0..10_000 {
        h.insert(h.reference.len());
    }
    h.check();
    let live = h.tree.leaves.len() - h.tree.free_leaves.len();
    assert_eq!(live, 10_000usize.div_ceil(LEAF_CAP));
}

#[test]
fn prepend_keeps_leaves_full() {
    let mut h = Harness::new();
    for _ in 0..10_000 {
        h.insert(0);
    }
    h.check();
    let live = h.tree.leaves.len() - h.tree.free_leaves.len();
    assert_eq!(live, 10_000usize.div_ceil(LEAF_CAP));
}

#[test]
fn same_middle_position_repeatedly() {
    let mut h = Harness::new();
    for _ in 0..1000 {
        h.insert(h.reference.len());
    }
    for _ in 0..5000 {
        h.insert(500);
    }
    h.check();
    let live = h.tree.leaves.len() - h.tree.free_leaves.len();
    assert!(live <= 6000 / (LEAF_CAP / 2) + 2, "{live} leaves");
}

#[test]
fn drain_from_front_back_and_middle() {
    for mode in 0..3 {
        let mut h = Harness::new();
        for _ in 0..20_000 {
            h.insert(h.reference.len());
        }
        while !h.reference.is_empty() {
            let n = h.reference.len();
            let k = match mode {
                0 => 0,
                1 => n - 1,
                _ => n / 2,
            };
            h.remove(k);
            if n % 997 == 1 {
                h.check();
            }
        }
        h.check();
        assert_eq!(h.tree.height, 0);
    }
}

#[test]
fn random_ops_against_vec() {
    for seed in 1..=6u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut h = Harness::new();
        let target = [50usize, 300, 3000, 20_000][seed as usize % 4];
        for step in 0..40_000 {
            let n = h.reference.len();
            let grow = n < target;
            match rng.below(10) {
                0..=3 if grow || n == 0 => h.insert(rng.below(n + 1)),
                0 => h.insert(n),
                1 => h.insert(0),
                2..=6 if n > 0 => h.remove(rng.below(n)),
                7 if n > 0 => h.set(rng.below(n)),
                8 if n > 0 => {
                    let k = rng.below(n);
                    assert_eq!(h.tree.get(k), h.reference[k]);
                }
                _ => h.insert(rng.below(n + 1)),
            }
            if step % 2000 == 0 {
                h.check();
            }
        }
        h.check();
        while let Some(n) = h.reference.len().checked_sub(1) {
            let k = rng.below(n + 1);
            h.remove(k);
        }
        h.check();
    }
}

#[test]
fn clone_is_independent() {
    let mut h = Harness::new();
    for _ in 0..1000 {
        h.insert(h.reference.len());
    }
    let snapshot = h.tree.clone();
    h.remove(10);
    assert_eq!(snapshot.len(), 1000);
    assert_eq!(snapshot.get(10), 10);
    assert_eq!(h.tree.get(10), 11);
}

#[test]
fn grows_to_height_three_and_back() {
    let mut h = Harness::new();
    for i in 0..300_000 {
        if i % 3 == 0 {
            h.insert(h.reference.len() / 2);
        } else {
            h.insert(h.reference.len());
        }
    }
    assert!(h.tree.height >= 3, "height {}", h.tree.height);
    h.check();
    let mut rng = Rng(77);
    while h.reference.len() > 1000 {
        let k = rng.below(h.reference.len());
        h.remove(k);
    }
    h.check();
}

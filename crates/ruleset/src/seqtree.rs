//! `SeqTree`: an order-statistic (counted) B+tree of `u32` items.
//!
//! It stores the rule slots of one chain in rule order. Items are addressed by
//! their 0-based position; every positional operation walks one root-to-leaf
//! path, so it costs O(B · log_B n) with B the fan-out (at most 64 children per
//! internal node, at most 128 items per leaf: height <= 4 at 1M items).
//!
//! Leaf tracking: the owner needs to find an item's position from the item
//! alone (rule by id, delete by spec). Every operation that places an item in a
//! leaf (insert, set, and the splits and merges that move items between
//! leaves) reports `(item, leaf)` through a `moved` callback, so the owner can
//! keep the leaf of each item; `position(leaf, item)` then walks up from that
//! leaf summing left-sibling counts in O(B · log n).
//!
//! Shape rules:
//! - a full leaf splits in half, except when inserting past the end of the last
//!   leaf or before the start of the first leaf: then the new item gets a leaf
//!   of its own, so append-only and prepend-only workloads keep leaves full;
//! - a full internal node splits in half;
//! - a leaf that falls below 1/4 full is merged into an adjacent sibling when
//!   the two fit in one leaf; empty leaves and empty internal nodes are
//!   removed; a root with one child is replaced by that child. Internal nodes
//!   are not rebalanced otherwise, so the height is bounded by the height the
//!   tree had at its largest size (log_32 of the peak size);
//! - when the tree becomes empty it is reset to a single empty leaf, releasing
//!   its memory.
//!
//! Nodes live in two arenas (`leaves`, `inners`) with free lists, so node ids
//! are `u32` indexes and stay valid until the node is freed.

/// "No node": parent of the root, neighbour of the first/last leaf.
pub(crate) const NIL: u32 = u32::MAX;

/// Maximum items per leaf.
const LEAF_CAP: usize = 128;
/// A leaf shorter than this after a removal tries to merge with a sibling.
const LEAF_MIN: usize = LEAF_CAP / 4;
/// Maximum children per internal node.
const INNER_CAP: usize = 64;

#[derive(Clone, Debug)]
struct Leaf {
    items: Vec<u32>,
    parent: u32,
    prev: u32,
    next: u32,
}

#[derive(Clone, Debug)]
struct Inner {
    children: Vec<u32>,
    /// `counts[i]` = number of items under `children[i]`.
    counts: Vec<u32>,
    parent: u32,
    /// Whether `children` are leaf ids (else internal node ids).
    leaf_kids: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct SeqTree {
    leaves: Vec<Leaf>,
    free_leaves: Vec<u32>,
    inners: Vec<Inner>,
    free_inners: Vec<u32>,
    root: u32,
    /// 0 when the root is a leaf.
    height: u32,
    first: u32,
    len: usize,
}

impl Default for SeqTree {
    fn default() -> Self {
        Self::new()
    }
}

impl SeqTree {
    /// An empty tree; it allocates nothing until the first insert (a table
    /// of 50 000 chains has 50 000 trees, and a flush of all of them gives
    /// each a new one).
    pub(crate) fn new() -> Self {
        SeqTree {
            leaves: Vec::new(),
            free_leaves: Vec::new(),
            inners: Vec::new(),
            free_inners: Vec::new(),
            root: 0,
            height: 0,
            first: 0,
            len: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Drop every item and release the nodes. O(nodes).
    pub(crate) fn clear(&mut self) {
        *self = SeqTree::new();
    }

    /// Heap bytes held by the tree (capacity, not length), for accounting.
    pub(crate) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let leaves: usize = self.leaves.iter().map(|l| l.items.capacity() * 4).sum();
        let inners: usize = self
            .inners
            .iter()
            .map(|n| n.children.capacity() * 4 + n.counts.capacity() * 4)
            .sum();
        leaves
            + inners
            + self.leaves.capacity() * size_of::<Leaf>()
            + self.inners.capacity() * size_of::<Inner>()
            + (self.free_leaves.capacity() + self.free_inners.capacity()) * 4
    }

    /// Leaf and offset of position `k < len`. O(B log n).
    fn locate(&self, mut k: usize) -> (u32, usize) {
        let mut node = self.root;
        for _ in 0..self.height {
            let inner = &self.inners[node as usize];
            let mut i = 0;
            while k >= inner.counts[i] as usize {
                k -= inner.counts[i] as usize;
                i += 1;
            }
            node = inner.children[i];
        }
        (node, k)
    }

    /// The item at position `k`. Panics if `k >= len`.
    pub(crate) fn get(&self, k: usize) -> u32 {
        assert!(k < self.len, "SeqTree::get out of range");
        let (leaf, off) = self.locate(k);
        self.leaves[leaf as usize].items[off]
    }

    /// Replace the item at `k`, returning the old one; reports the new item's
    /// leaf. Panics if `k >= len`.
    pub(crate) fn set<F: FnMut(u32, u32)>(&mut self, k: usize, item: u32, moved: &mut F) -> u32 {
        assert!(k < self.len, "SeqTree::set out of range");
        let (leaf, off) = self.locate(k);
        moved(item, leaf);
        std::mem::replace(&mut self.leaves[leaf as usize].items[off], item)
    }

    /// Insert `item` so that it ends up at position `k` (`k <= len`). Panics
    /// if `k > len`.
    pub(crate) fn insert<F: FnMut(u32, u32)>(&mut self, k: usize, item: u32, moved: &mut F) {
        assert!(k <= self.len, "SeqTree::insert out of range");
        assert!(self.len < u32::MAX as usize, "SeqTree full");
        if self.leaves.is_empty() {
            // The root leaf of a tree that never held an item.
            self.leaves.push(Leaf {
                items: Vec::new(),
                parent: NIL,
                prev: NIL,
                next: NIL,
            });
        }
        let mut k = k;
        let mut node = self.root;
        // Appending (the common case: restore, `-A`) follows the last child at
        // every level instead of scanning the counts: O(height).
        let append = k == self.len;
        for _ in 0..self.height {
            let inner = &mut self.inners[node as usize];
            let last = inner.counts.len() - 1;
            let mut i = 0;
            if append {
                i = last;
            } else {
                // Ties go left: position 0 lands in the first leaf, position
                // len in the last one.
                while i < last && k > inner.counts[i] as usize {
                    k -= inner.counts[i] as usize;
                    i += 1;
                }
            }
            inner.counts[i] += 1;
            node = inner.children[i];
        }
        if append {
            k = self.leaves[node as usize].items.len();
        }
        self.len += 1;
        let leaf = &mut self.leaves[node as usize];
        if leaf.items.len() < LEAF_CAP {
            leaf.items.insert(k, item);
            moved(item, node);
        } else {
            self.split_leaf_insert(node, k, item, moved);
        }
    }

    /// `leaf` is full and its ancestors' counts already include `item`.
    fn split_leaf_insert<F: FnMut(u32, u32)>(
        &mut self,
        leaf: u32,
        k: usize,
        item: u32,
        moved: &mut F,
    ) {
        let (prev, next) = {
            let l = &self.leaves[leaf as usize];
            (l.prev, l.next)
        };
        if k == LEAF_CAP && next == NIL {
            let new = self.alloc_leaf(vec![item]);
            moved(item, new);
            self.link_after(leaf, new);
            self.add_leaf_sibling(leaf, new, true, LEAF_CAP as u32, 1);
        } else if k == 0 && prev == NIL {
            let new = self.alloc_leaf(vec![item]);
            moved(item, new);
            self.link_before(leaf, new);
            self.add_leaf_sibling(leaf, new, false, LEAF_CAP as u32, 1);
        } else {
            let mid = LEAF_CAP / 2;
            let mut right = Vec::with_capacity(LEAF_CAP);
            right.extend_from_slice(&self.leaves[leaf as usize].items[mid..]);
            self.leaves[leaf as usize].items.truncate(mid);
            let new = self.alloc_leaf(right);
            self.link_after(leaf, new);
            if k <= mid {
                self.leaves[leaf as usize].items.insert(k, item);
                moved(item, leaf);
            } else {
                self.leaves[new as usize].items.insert(k - mid, item);
            }
            for &it in &self.leaves[new as usize].items {
                moved(it, new);
            }
            let lc = self.leaves[leaf as usize].items.len() as u32;
            let rc = self.leaves[new as usize].items.len() as u32;
            self.add_leaf_sibling(leaf, new, true, lc, rc);
        }
    }

    fn alloc_leaf(&mut self, items: Vec<u32>) -> u32 {
        let mut items = items;
        items.reserve_exact(LEAF_CAP.saturating_sub(items.len()));
        let leaf = Leaf {
            items,
            parent: NIL,
            prev: NIL,
            next: NIL,
        };
        if let Some(id) = self.free_leaves.pop() {
            self.leaves[id as usize] = leaf;
            id
        } else {
            self.leaves.push(leaf);
            (self.leaves.len() - 1) as u32
        }
    }

    fn alloc_inner(&mut self, inner: Inner) -> u32 {
        if let Some(id) = self.free_inners.pop() {
            self.inners[id as usize] = inner;
            id
        } else {
            self.inners.push(inner);
            (self.inners.len() - 1) as u32
        }
    }

    fn link_after(&mut self, leaf: u32, new: u32) {
        let next = self.leaves[leaf as usize].next;
        self.leaves[new as usize].prev = leaf;
        self.leaves[new as usize].next = next;
        self.leaves[leaf as usize].next = new;
        if next != NIL {
            self.leaves[next as usize].prev = new;
        }
    }

    fn link_before(&mut self, leaf: u32, new: u32) {
        let prev = self.leaves[leaf as usize].prev;
        self.leaves[new as usize].next = leaf;
        self.leaves[new as usize].prev = prev;
        self.leaves[leaf as usize].prev = new;
        if prev != NIL {
            self.leaves[prev as usize].next = new;
        } else {
            self.first = new;
        }
    }

    fn parent_of(&self, node: u32, is_leaf: bool) -> u32 {
        if is_leaf {
            self.leaves[node as usize].parent
        } else {
            self.inners[node as usize].parent
        }
    }

    fn set_parent(&mut self, node: u32, is_leaf: bool, parent: u32) {
        if is_leaf {
            self.leaves[node as usize].parent = parent;
        } else {
            self.inners[node as usize].parent = parent;
        }
    }

    /// Put leaf `new` next to leaf `node` (after it if `after`) under
    /// `node`'s parent, with the given item counts, splitting ancestors that
    /// overflow.
    fn add_leaf_sibling(
        &mut self,
        node: u32,
        new: u32,
        after: bool,
        node_count: u32,
        new_count: u32,
    ) {
        let parent = self.leaves[node as usize].parent;
        if parent == NIL {
            let (children, counts) = if after {
                (vec![node, new], vec![node_count, new_count])
            } else {
                (vec![new, node], vec![new_count, node_count])
            };
            let root = self.alloc_inner(Inner {
                children,
                counts,
                parent: NIL,
                leaf_kids: true,
            });
            self.leaves[node as usize].parent = root;
            self.leaves[new as usize].parent = root;
            self.root = root;
            self.height += 1;
            return;
        }
        self.leaves[new as usize].parent = parent;
        let p = &mut self.inners[parent as usize];
        let i = p
            .children
            .iter()
            .position(|&c| c == node)
            .expect("child in parent");
        p.counts[i] = node_count;
        let at = if after { i + 1 } else { i };
        p.children.insert(at, new);
        p.counts.insert(at, new_count);
        if p.children.len() > INNER_CAP {
            self.split_inner(parent);
        }
    }

    fn split_inner(&mut self, node: u32) {
        let mid = INNER_CAP.div_ceil(2);
        let (children, counts, leaf_kids) = {
            let n = &mut self.inners[node as usize];
            let mut c = Vec::with_capacity(INNER_CAP + 1);
            c.extend_from_slice(&n.children[mid..]);
            let mut k = Vec::with_capacity(INNER_CAP + 1);
            k.extend_from_slice(&n.counts[mid..]);
            n.children.truncate(mid);
            n.counts.truncate(mid);
            (c, k, n.leaf_kids)
        };
        let new_count: u32 = counts.iter().sum();
        let node_count: u32 = self.inners[node as usize].counts.iter().sum();
        let new = self.alloc_inner(Inner {
            children,
            counts,
            parent: NIL,
            leaf_kids,
        });
        for idx in 0..self.inners[new as usize].children.len() {
            let c = self.inners[new as usize].children[idx];
            self.set_parent(c, leaf_kids, new);
        }
        self.add_sibling_inner(node, new, node_count, new_count);
    }

    /// Put internal node `new` right after `node` under `node`'s parent.
    fn add_sibling_inner(&mut self, node: u32, new: u32, node_count: u32, new_count: u32) {
        let parent = self.inners[node as usize].parent;
        if parent == NIL {
            let root = self.alloc_inner(Inner {
                children: vec![node, new],
                counts: vec![node_count, new_count],
                parent: NIL,
                leaf_kids: false,
            });
            self.inners[node as usize].parent = root;
            self.inners[new as usize].parent = root;
            self.root = root;
            self.height += 1;
            return;
        }
        self.inners[new as usize].parent = parent;
        let p = &mut self.inners[parent as usize];
        let i = p
            .children
            .iter()
            .position(|&c| c == node)
            .expect("child in parent");
        p.counts[i] = node_count;
        p.children.insert(i + 1, new);
        p.counts.insert(i + 1, new_count);
        if p.children.len() > INNER_CAP {
            self.split_inner(parent);
        }
    }

    /// Remove and return the item at `k`. Panics if `k >= len`.
    pub(crate) fn remove<F: FnMut(u32, u32)>(&mut self, k: usize, moved: &mut F) -> u32 {
        assert!(k < self.len, "SeqTree::remove out of range");
        let mut k = k;
        let mut node = self.root;
        for _ in 0..self.height {
            let inner = &mut self.inners[node as usize];
            let mut i = 0;
            while k >= inner.counts[i] as usize {
                k -= inner.counts[i] as usize;
                i += 1;
            }
            inner.counts[i] -= 1;
            node = inner.children[i];
        }
        let item = self.leaves[node as usize].items.remove(k);
        self.len -= 1;
        if self.len == 0 {
            self.clear();
            return item;
        }
        let n = self.leaves[node as usize].items.len();
        if self.height > 0 {
            if n == 0 {
                self.remove_child(node, true);
            } else if n < LEAF_MIN {
                self.try_merge(node, moved);
            }
            self.collapse_root();
        }
        item
    }

    /// Merge the under-full `leaf` with an adjacent sibling under the same
    /// parent if both fit in one leaf.
    fn try_merge<F: FnMut(u32, u32)>(&mut self, leaf: u32, moved: &mut F) {
        let parent = self.leaves[leaf as usize].parent;
        let p = &self.inners[parent as usize];
        let i = p
            .children
            .iter()
            .position(|&c| c == leaf)
            .expect("child in parent");
        let n = p.counts[i] as usize;
        let pair = if i > 0 && p.counts[i - 1] as usize + n <= LEAF_CAP {
            Some((p.children[i - 1], leaf))
        } else if i + 1 < p.children.len() && p.counts[i + 1] as usize + n <= LEAF_CAP {
            Some((leaf, p.children[i + 1]))
        } else {
            None
        };
        let Some((left, right)) = pair else { return };
        let items = std::mem::take(&mut self.leaves[right as usize].items);
        for &it in &items {
            moved(it, left);
        }
        self.leaves[left as usize].items.extend_from_slice(&items);
        let p = &mut self.inners[parent as usize];
        let li = p
            .children
            .iter()
            .position(|&c| c == left)
            .expect("child in parent");
        p.counts[li] += items.len() as u32;
        p.counts[li + 1] = 0;
        self.remove_child(right, true);
    }

    /// Detach the (empty) `node` from its parent and free it; parents left
    /// without children are removed in turn.
    fn remove_child(&mut self, node: u32, is_leaf: bool) {
        let parent = self.parent_of(node, is_leaf);
        if is_leaf {
            let (prev, next) = {
                let l = &self.leaves[node as usize];
                (l.prev, l.next)
            };
            if prev != NIL {
                self.leaves[prev as usize].next = next;
            } else {
                self.first = next;
            }
            if next != NIL {
                self.leaves[next as usize].prev = prev;
            }
            self.leaves[node as usize] = Leaf {
                items: Vec::new(),
                parent: NIL,
                prev: NIL,
                next: NIL,
            };
            self.free_leaves.push(node);
        } else {
            self.inners[node as usize].children = Vec::new();
            self.inners[node as usize].counts = Vec::new();
            self.free_inners.push(node);
        }
        if parent == NIL {
            return;
        }
        let p = &mut self.inners[parent as usize];
        let i = p
            .children
            .iter()
            .position(|&c| c == node)
            .expect("child in parent");
        debug_assert_eq!(p.counts[i], 0);
        p.children.remove(i);
        p.counts.remove(i);
        if p.children.is_empty() && parent != self.root {
            self.remove_child(parent, false);
        }
    }

    fn collapse_root(&mut self) {
        while self.height > 0 && self.inners[self.root as usize].children.len() == 1 {
            let old = self.root;
            let child = self.inners[old as usize].children[0];
            let leaf_kids = self.inners[old as usize].leaf_kids;
            self.set_parent(child, leaf_kids, NIL);
            self.inners[old as usize].children = Vec::new();
            self.inners[old as usize].counts = Vec::new();
            self.free_inners.push(old);
            self.root = child;
            self.height -= 1;
        }
    }

    /// 0-based position of `item`, which lives in `leaf`. O(B log n). Panics
    /// if `item` is not in `leaf`.
    pub(crate) fn position(&self, leaf: u32, item: u32) -> usize {
        let l = &self.leaves[leaf as usize];
        let mut pos = l
            .items
            .iter()
            .position(|&x| x == item)
            .expect("item in its leaf");
        let mut child = leaf;
        let mut parent = l.parent;
        while parent != NIL {
            let p = &self.inners[parent as usize];
            let i = p
                .children
                .iter()
                .position(|&c| c == child)
                .expect("child in parent");
            pos += p.counts[..i].iter().map(|&c| c as usize).sum::<usize>();
            child = parent;
            parent = p.parent;
        }
        pos
    }

    /// Items in order; O(1) amortised per item.
    pub(crate) fn iter(&self) -> Iter<'_> {
        Iter {
            tree: self,
            leaf: if self.len == 0 { NIL } else { self.first },
            off: 0,
        }
    }
}

/// In-order iterator, leaf by leaf.
#[derive(Clone)]
pub(crate) struct Iter<'a> {
    tree: &'a SeqTree,
    leaf: u32,
    off: usize,
}

impl Iterator for Iter<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        while self.leaf != NIL {
            let l = &self.tree.leaves[self.leaf as usize];
            if let Some(&it) = l.items.get(self.off) {
                self.off += 1;
                return Some(it);
            }
            self.leaf = l.next;
            self.off = 0;
        }
        None
    }
}

#[cfg(test)]
mod tests;

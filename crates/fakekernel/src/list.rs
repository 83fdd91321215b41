//! An ordered list of named objects (a table's chains or sets) with O(1)
//! lookup by name and by handle and O(1) removal: a removed object leaves
//! a hole, so indexes stay valid for the rest of a batch;
//! [`Named::compact`] closes the holes (at commit). Order is insertion
//! order, the kernel's list order. Cloning shares the lookup maps until
//! either copy changes (a batch works on a clone).

use std::collections::HashMap;
use std::ops::{Index, IndexMut};
use std::sync::Arc;

/// What the list needs of an object.
pub trait Item {
    fn name(&self) -> &str;
    fn handle(&self) -> u64;
}

#[derive(Clone)]
pub struct Named<T> {
    items: Vec<Option<T>>,
    by_name: Arc<HashMap<String, usize>>,
    by_handle: Arc<HashMap<u64, usize>>,
    live: usize,
}

impl<T> Default for Named<T> {
    fn default() -> Self {
        Named {
            items: Vec::new(),
            by_name: Arc::default(),
            by_handle: Arc::default(),
            live: 0,
        }
    }
}

impl<T: Item> Named<T> {
    /// The index of the object named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The index of the object with handle `h`.
    pub fn find_handle(&self, h: u64) -> Option<usize> {
        self.by_handle.get(&h).copied()
    }

    /// Appends `t`; returns its index.
    pub fn push(&mut self, t: T) -> usize {
        let i = self.items.len();
        Arc::make_mut(&mut self.by_name).insert(t.name().to_string(), i);
        Arc::make_mut(&mut self.by_handle).insert(t.handle(), i);
        self.items.push(Some(t));
        self.live += 1;
        i
    }

    /// Takes the object at `i` out, leaving a hole.
    pub fn remove(&mut self, i: usize) -> T {
        let t = self.items[i].take().expect("a live index");
        Arc::make_mut(&mut self.by_name).remove(t.name());
        Arc::make_mut(&mut self.by_handle).remove(&t.handle());
        self.live -= 1;
        t
    }

    /// Renames the object at `i` (`set_name` changes the object itself).
    pub fn rename(&mut self, i: usize, new: &str, set_name: impl FnOnce(&mut T, &str)) {
        let t = self.items[i].as_mut().expect("a live index");
        let by_name = Arc::make_mut(&mut self.by_name);
        by_name.remove(t.name());
        set_name(t, new);
        by_name.insert(new.to_string(), i);
    }

    /// Every object, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> {
        self.items.iter().flatten()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.items.iter_mut().flatten()
    }

    /// The indexes of the objects, in order.
    pub fn indexes(&self) -> Vec<usize> {
        (0..self.items.len())
            .filter(|&i| self.items[i].is_some())
            .collect()
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Takes every object out, in order.
    pub fn drain(&mut self) -> Vec<T> {
        let all = self.items.drain(..).flatten().collect();
        self.by_name = Arc::default();
        self.by_handle = Arc::default();
        self.live = 0;
        all
    }

    /// Closes the holes (indexes change).
    pub fn compact(&mut self) {
        if self.live == self.items.len() {
            return;
        }
        for t in self.drain() {
            self.push(t);
        }
    }
}

impl<'a, T> IntoIterator for &'a Named<T> {
    type Item = &'a T;
    type IntoIter = std::iter::Flatten<std::slice::Iter<'a, Option<T>>>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter().flatten()
    }
}

impl<'a, T> IntoIterator for &'a mut Named<T> {
    type Item = &'a mut T;
    type IntoIter = std::iter::Flatten<std::slice::IterMut<'a, Option<T>>>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter_mut().flatten()
    }
}

impl<T> Index<usize> for Named<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        self.items[i].as_ref().expect("a live index")
    }
}

impl<T> IndexMut<usize> for Named<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        self.items[i].as_mut().expect("a live index")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct X(String, u64);
    impl Item for X {
        fn name(&self) -> &str {
            &self.0
        }
        fn handle(&self) -> u64 {
            self.1
        }
    }

    #[test]
    fn holes_keep_indexes_until_compacted() {
        let mut l = Named::default();
        for (n, h) in [("a", 1), ("b", 2), ("c", 3)] {
            l.push(X(n.into(), h));
        }
        assert_eq!(l.remove(1), X("b".into(), 2));
        assert_eq!(
            (l.find("c"), l.find("b"), l.find_handle(3)),
            (Some(2), None, Some(2))
        );
        assert_eq!(l.len(), 2);
        assert_eq!(l.indexes(), [0, 2]);
        l.rename(2, "d", |x, n| x.0 = n.to_string());
        assert_eq!((l.find("d"), l.find("c")), (Some(2), None));
        l.compact();
        assert_eq!(l.find("d"), Some(1));
        let names: Vec<&str> = l.iter().map(|x| x.name()).collect();
        assert_eq!(names, ["a", "d"]);
    }
}

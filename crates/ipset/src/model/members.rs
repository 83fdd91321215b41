//! Member storage of one set: an ordered map for hash and bitmap types (with
//! the per-prefix counts net types look up by), an ordered list for
//! list:set.
//!
//! Cost: lookups, inserts and removals O(log n); expiry is checked lazily —
//! `purge` scans only when the earliest expiry has passed (O(n) then).

use super::entry::{Expiry, Ext, Key};
use std::collections::BTreeMap;

/// Members of a hash or bitmap set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MapMembers {
    map: BTreeMap<Key, Ext>,
    /// Count of members per prefix length of the first and second address
    /// (used by net types to test an address against every stored prefix).
    nets: [BTreeMap<u8, usize>; 2],
    /// Earliest expiry time among members (`u64::MAX` if none can expire).
    next_expiry: u64,
}

fn prefixes(k: &Key) -> [Option<u8>; 2] {
    [k.ip.map(|n| n.prefix), k.ip2.map(|n| n.prefix)]
}

impl MapMembers {
    pub fn new() -> Self {
        MapMembers {
            next_expiry: u64::MAX,
            ..Default::default()
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn get(&self, k: &Key) -> Option<&Ext> {
        self.map.get(k)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Key, &Ext)> {
        self.map.iter()
    }

    /// Members whose first address is `ip` (contiguous in key order).
    pub fn with_ip<'a>(&'a self, probe: &Key) -> impl Iterator<Item = (&'a Key, &'a Ext)> + 'a {
        let lower = Key {
            ip: probe.ip,
            ..Key::default()
        };
        let ip = probe.ip;
        self.map.range(lower..).take_while(move |(k, _)| k.ip == ip)
    }

    /// Distinct prefix lengths stored for address `dim` (0: first, 1:
    /// second), longest first.
    pub fn prefix_lens(&self, dim: usize) -> Vec<u8> {
        self.nets[dim].keys().rev().copied().collect()
    }

    /// Insert `k` with `v` if no member has key `k`: one search of the map
    /// (`get` then `put` is two). Returns whether it was inserted.
    pub fn insert_new(&mut self, k: Key, v: Ext) -> bool {
        use std::collections::btree_map::Entry;
        let pfx = prefixes(&k);
        let expiry = v.expiry;
        match self.map.entry(k) {
            Entry::Occupied(_) => return false,
            Entry::Vacant(e) => {
                e.insert(v);
            }
        }
        if let Expiry::At(t) = expiry {
            self.next_expiry = self.next_expiry.min(t);
        }
        for (dim, p) in pfx.iter().enumerate() {
            if let Some(p) = *p {
                *self.nets[dim].entry(p).or_insert(0) += 1;
            }
        }
        true
    }

    /// Set `k` to `v` (insert, replace or remove); returns the old value.
    pub fn put(&mut self, k: Key, v: Option<Ext>) -> Option<Ext> {
        let pfx = prefixes(&k);
        let present = v.is_some();
        let old = match v {
            Some(e) => {
                if let Expiry::At(t) = e.expiry {
                    self.next_expiry = self.next_expiry.min(t);
                }
                self.map.insert(k, e)
            }
            None => self.map.remove(&k),
        };
        if old.is_some() != present {
            for (dim, p) in pfx.iter().enumerate() {
                let Some(p) = *p else { continue };
                let n = self.nets[dim].entry(p).or_insert(0);
                if present {
                    *n += 1;
                } else {
                    *n -= 1;
                    if *n == 0 {
                        self.nets[dim].remove(&p);
                    }
                }
            }
        }
        old
    }

    /// Remove every member expired at `now`; returns them.
    pub fn purge(&mut self, now: u64) -> Vec<(Key, Ext)> {
        if now <= self.next_expiry {
            return Vec::new();
        }
        let dead: Vec<Key> = self
            .map
            .iter()
            .filter(|(_, e)| e.expiry.expired(now))
            .map(|(k, _)| k.clone())
            .collect();
        let mut out = Vec::with_capacity(dead.len());
        for k in dead {
            if let Some(e) = self.put(k.clone(), None) {
                out.push((k, e));
            }
        }
        self.next_expiry = self
            .map
            .values()
            .filter_map(|e| match e.expiry {
                Expiry::At(t) => Some(t),
                _ => None,
            })
            .min()
            .unwrap_or(u64::MAX);
        out
    }
}

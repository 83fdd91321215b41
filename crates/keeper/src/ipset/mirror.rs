//! The nftables messages of each change of the ipset model
//! ([`ipset::exec::Mirror`]): sets created in the home table, members
//! written to the home and every copy, all in the batch being built.
//!
//! Element writes never fail on what the kernel holds: the model decided
//! (against what was read at the generation the batch carries), adds do
//! not ask for exclusivity, deletes are `DESTROYSETELEM` (no error for a
//! member a copy lacks). A member whose values change (`add -exist`) is
//! deleted and added again in the same transaction.

use super::elems::{to_elems, Values};
use super::meta::{self, Role, SetMeta};
use super::read::copy_at;
use super::{Place, FAMILY, TABLE};
use crate::plan::Pending;
use compile::ipset::{set_spec, SetSpec};
use ipset::error::{Error, Kernel, Result};
use ipset::exec::{Mirror, Named};
use ipset::model::{Entry, Header, Members, Set};
use nft::{Expr, SetElems, Tag};
use std::collections::HashMap;

/// What a message did, to word the kernel's refusal of it as ipset would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intent {
    Create,
    Destroy,
    Add,
    Update,
    Del,
    Flush,
    Rename,
    Swap,
}

/// Messages of one write, with what each did and which restore line asked
/// for it.
#[derive(Debug, Default)]
pub struct Trail {
    /// (first sequence number, intent, restore line) in batch order.
    pub marks: Vec<(u32, Intent, usize)>,
}

impl Trail {
    /// The intent and restore line of the message with sequence `seq`.
    pub fn find(&self, seq: u32) -> Option<(Intent, usize)> {
        let i = self.marks.partition_point(|m| m.0 <= seq);
        i.checked_sub(1).map(|i| (self.marks[i].1, self.marks[i].2))
    }
}

/// The mirror of one write: messages go into `p`, tagged `tag`.
pub struct KernelMirror<'a> {
    pub p: &'a mut Pending,
    pub tag: Tag,
    pub places: &'a mut HashMap<String, Place>,
    /// Whether the home table exists (or this batch creates it).
    pub table: &'a mut bool,
    pub trail: &'a mut Trail,
    line: usize,
}

fn refused(e: Error) -> Error {
    e
}

/// The elements of `entries` (members of a set with header `h`, form
/// `spec`): with their values in the home; in a copy without comments
/// and with counters from zero.
pub(super) fn member_elems(
    spec: &SetSpec,
    h: &Header,
    entries: &[Entry],
    home: bool,
) -> Result<Vec<nft::SetElem>> {
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let mut v = Values::of(e);
        if !home {
            v.counters = v.counters.map(|_| (0, 0));
            v.comment = None;
        }
        // Permanent members of a set with timeouts say so (else the
        // set's default timeout would apply).
        if h.timeout.is_some() && v.timeout.is_none() {
            v.timeout = Some(0);
        }
        out.extend(to_elems(spec, h, e, Some(&v))?);
    }
    Ok(out)
}

/// The nftables set of `name` for `h` in `table` of `fam` (userdata from
/// `m`).
pub(super) fn new_set(
    fam: nft::Family,
    table: &str,
    name: &str,
    spec: &SetSpec,
    m: &SetMeta,
) -> nft::Set {
    let mut s = spec.to_nft(fam, table, name);
    s.userdata = meta::encode_set(m);
    if spec.counter {
        s.exprs = vec![Expr::Counter {
            bytes: 0,
            packets: 0,
        }];
    }
    if m.role == Role::Copy {
        // The home enforces maxelem; a copy takes what the home holds.
        s.size = None;
        // `-j SET` updates the copy from the packet path, which needs a
        // dynamic set (a backend that can update); interval sets have
        // none, and `-j SET` refuses them.
        if !spec.interval {
            s.flags = s.flags.map(|f| f | nft::set::flags::EVAL);
        }
    }
    s
}

impl<'a> KernelMirror<'a> {
    pub fn new(
        p: &'a mut Pending,
        tag: Tag,
        places: &'a mut HashMap<String, Place>,
        table: &'a mut bool,
        trail: &'a mut Trail,
    ) -> KernelMirror<'a> {
        KernelMirror {
            p,
            tag,
            places,
            table,
            trail,
            line: 0,
        }
    }

    fn mark(&mut self, intent: Intent) {
        let seq = self.p.batch.next_seq();
        self.trail.marks.push((seq, intent, self.line));
    }

    fn ensure_table(&mut self) {
        if !*self.table {
            *self.table = true;
            self.p.batch.add(&nft::Table::new(FAMILY, TABLE), self.tag);
        }
    }

    /// NEWSET of the home of `name` with its members.
    fn create_home(
        &mut self,
        name: &str,
        h: &Header,
        slot: usize,
        members: &[Entry],
    ) -> Result<()> {
        let spec = set_spec(h).map_err(refused)?;
        if name.starts_with("__nfk") {
            return Err(Error::session(format!(
                "Set name {name} is reserved: nfkeeper names its own nftables sets __nfk…"
            )));
        }
        self.ensure_table();
        let m = SetMeta {
            role: Role::Home,
            slot,
            header: h.clone(),
        };
        let mut s = new_set(FAMILY, TABLE, name, &spec, &m);
        let id = self.p.alloc_set_id();
        s.id = Some(id);
        self.p.batch.create(&s, self.tag);
        if !members.is_empty() {
            let mut es = SetElems::new(FAMILY, TABLE, name, self.elems(&spec, h, members, true)?);
            es.set_id = Some(id);
            self.p.batch.add(&es, self.tag);
        }
        Ok(())
    }

    fn elems(
        &self,
        spec: &SetSpec,
        h: &Header,
        entries: &[Entry],
        home: bool,
    ) -> Result<Vec<nft::SetElem>> {
        member_elems(spec, h, entries, home)
    }

    fn keys(&self, spec: &SetSpec, h: &Header, entries: &[Entry]) -> Result<Vec<nft::SetElem>> {
        let mut out = Vec::with_capacity(entries.len());
        for e in entries {
            out.extend(to_elems(spec, h, e, None)?);
        }
        Ok(out)
    }

    /// The copies of `set`: (nft family, table, form).
    fn copies(&self, set: &str) -> Vec<(nft::Family, String, SetSpec)> {
        self.places
            .get(set)
            .map(|p| {
                p.copies
                    .iter()
                    .map(|(f, k, s)| {
                        let (fam, t) = copy_at(*f, *k);
                        (fam, t, s.clone())
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn delete_sets(&mut self, name: &str) {
        self.p
            .batch
            .delete(&nft::Set::new(FAMILY, TABLE, name), self.tag);
        for (fam, t, _) in self.copies(name) {
            self.p.batch.delete(&nft::Set::new(fam, &t, name), self.tag);
        }
    }

    fn destroy_elems(&mut self, es: &SetElems) {
        if !es.elems.is_empty() {
            self.p.batch.push(nft::msg::DESTROYSETELEM, 0, es, self.tag);
        }
    }

    /// All members of `set`, as entries.
    pub(super) fn all_entries(set: &Set) -> Vec<Entry> {
        match &set.members {
            Members::Map(m) => m
                .iter()
                .map(|(k, x)| ipset::exec::entry(set, k, x, super::now()))
                .collect(),
            Members::List(_) => Vec::new(),
        }
    }
}

impl Mirror for KernelMirror<'_> {
    fn at_line(&mut self, n: usize) {
        self.line = n;
    }

    fn create(&mut self, name: &str, h: &Header, slot: usize) -> Result<()> {
        self.mark(Intent::Create);
        self.create_home(name, h, slot, &[])?;
        // Made here: the model holds every member it will have, so a later
        // rename or swap in the same restore may rewrite it whole.
        self.places.insert(
            name.to_string(),
            Place {
                full: true,
                ..Place::default()
            },
        );
        Ok(())
    }

    fn destroy(&mut self, name: &str) -> Result<()> {
        self.mark(Intent::Destroy);
        self.delete_sets(name);
        self.places.remove(name);
        Ok(())
    }

    fn add(&mut self, set: &str, h: &Header, entries: &[Entry]) -> Result<()> {
        self.mark(Intent::Add);
        let spec = set_spec(h).map_err(refused)?;
        let es = SetElems::new(FAMILY, TABLE, set, self.elems(&spec, h, entries, true)?);
        // Consecutive adds to one set (a restore's member lines) share
        // messages; a refusal then names the first line of its message.
        self.p.batch.add_elems(&es, self.tag);
        for (fam, t, cspec) in self.copies(set) {
            let es = SetElems::new(fam, &t, set, self.elems(&cspec, h, entries, false)?);
            self.p.batch.add_elems(&es, self.tag);
        }
        Ok(())
    }

    fn update(&mut self, set: &str, h: &Header, entries: &[Entry]) -> Result<()> {
        self.mark(Intent::Update);
        let spec = set_spec(h).map_err(refused)?;
        // The home keeps the total less what the copies counted.
        let mut home_entries = entries.to_vec();
        if let Some(place) = self.places.get(set) {
            for e in home_entries.iter_mut() {
                if let (Some((p, b)), Some((cp, cb))) =
                    (e.counters, place.copy_counters.get(&e.key))
                {
                    e.counters = Some((p.saturating_sub(*cp), b.saturating_sub(*cb)));
                }
            }
        }
        let keys = SetElems::new(FAMILY, TABLE, set, self.keys(&spec, h, entries)?);
        self.destroy_elems(&keys);
        let es = SetElems::new(
            FAMILY,
            TABLE,
            set,
            self.elems(&spec, h, &home_entries, true)?,
        );
        self.p.batch.add(&es, self.tag);
        for (fam, t, cspec) in self.copies(set) {
            // Re-adding refreshes a copy's timeout and keeps its counters.
            let es = SetElems::new(fam, &t, set, self.elems(&cspec, h, entries, false)?);
            self.p.batch.add(&es, self.tag);
        }
        Ok(())
    }

    fn del(&mut self, set: &str, h: &Header, entries: &[Entry]) -> Result<()> {
        self.mark(Intent::Del);
        let spec = set_spec(h).map_err(refused)?;
        let keys = SetElems::new(FAMILY, TABLE, set, self.keys(&spec, h, entries)?);
        self.destroy_elems(&keys);
        for (fam, t, cspec) in self.copies(set) {
            let keys = SetElems::new(fam, &t, set, self.keys(&cspec, h, entries)?);
            self.destroy_elems(&keys);
        }
        if let Some(p) = self.places.get_mut(set) {
            for e in entries {
                p.copy_counters.remove(&e.key);
            }
        }
        Ok(())
    }

    fn flush(&mut self, set: &str) -> Result<()> {
        self.mark(Intent::Flush);
        let tag = self.tag;
        self.p
            .batch
            .delete(&SetElems::new(FAMILY, TABLE, set, Vec::new()), tag);
        for (fam, t, _) in self.copies(set) {
            self.p
                .batch
                .delete(&SetElems::new(fam, &t, set, Vec::new()), tag);
        }
        if let Some(p) = self.places.get_mut(set) {
            p.copy_counters.clear();
        }
        Ok(())
    }

    fn rename(&mut self, from: &str, to: Named) -> Result<()> {
        self.mark(Intent::Rename);
        if !self.places.get(from).is_some_and(|p| p.full) {
            return Err(Error::session(
                "Kernel error received: set not read whole for rename",
            ));
        }
        self.delete_sets(from);
        let members = Self::all_entries(to.set);
        self.create_home(to.name, &to.set.header, to.slot, &members)?;
        let place = self.places.remove(from).unwrap_or_default();
        self.places.insert(
            to.name.to_string(),
            Place {
                copies: Vec::new(),
                ..place
            },
        );
        Ok(())
    }

    fn swap(&mut self, a: Named, b: Named) -> Result<()> {
        self.mark(Intent::Swap);
        for n in [&a, &b] {
            if !self.places.get(n.name).is_some_and(|p| p.full) {
                return Err(Error::session(
                    "Kernel error received: set not read whole for swap",
                ));
            }
        }
        for n in [&a, &b] {
            let spec = set_spec(&n.set.header).map_err(refused)?;
            let members = Self::all_entries(n.set);
            self.p
                .batch
                .delete(&nft::Set::new(FAMILY, TABLE, n.name), self.tag);
            self.create_home(n.name, &n.set.header, n.slot, &members)?;
            // A copy made for the same form takes the new members; another
            // goes (the kernel refuses while a rule uses it: see
            // `txn::word`).
            let mut kept = Vec::new();
            let copies = self
                .places
                .get(n.name)
                .map(|p| p.copies.clone())
                .unwrap_or_default();
            for (f, k, cspec) in copies {
                let (fam, t) = copy_at(f, k);
                if cspec == spec {
                    let tag = self.tag;
                    self.p
                        .batch
                        .delete(&SetElems::new(fam, &t, n.name, Vec::new()), tag);
                    if !members.is_empty() {
                        let es = SetElems::new(
                            fam,
                            &t,
                            n.name,
                            self.elems(&cspec, &n.set.header, &members, false)?,
                        );
                        self.p.batch.add(&es, tag);
                    }
                    kept.push((f, k, cspec));
                } else {
                    self.p
                        .batch
                        .delete(&nft::Set::new(fam, &t, n.name), self.tag);
                }
            }
            if let Some(p) = self.places.get_mut(n.name) {
                p.copies = kept;
                p.copy_counters.clear();
            }
        }
        Ok(())
    }
}

/// The ipset error for a kernel refusal `errno` of a message that did
/// `intent`.
pub fn word(intent: Intent, errno: i32) -> Error {
    let k = match (intent, errno) {
        (Intent::Destroy, libc::EBUSY) => Some(Kernel::Busy),
        (Intent::Rename, libc::EBUSY) => Some(Kernel::Referenced),
        (Intent::Create, libc::EEXIST) => Some(Kernel::SetExists),
        (Intent::Add | Intent::Update, libc::ENFILE) => Some(Kernel::HashFull),
        _ => None,
    };
    if let Some(k) = k {
        return k.into();
    }
    match (intent, errno) {
        (Intent::Add | Intent::Update, libc::EEXIST | libc::ENOTEMPTY) => Error::session(
            "Element cannot be added to the set: it overlaps a member (an nftables interval set holds no overlapping members)",
        ),
        (Intent::Swap, libc::EBUSY) => Error::session(
            "Sets cannot be swapped: a rule uses one of them and their nftables forms differ",
        ),
        (_, e) => Error::session(format!(
            "Kernel error received: {}",
            crate::error::strerror(e)
        )),
    }
}

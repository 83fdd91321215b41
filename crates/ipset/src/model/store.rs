//! All sets of one namespace, with ipset's rules for creating, destroying,
//! renaming and swapping them, references, and list:set membership.
//!
//! Sets live in numbered slots (the kernel's set index): a new set takes
//! the first free slot, listings go in slot order with list:set sets last,
//! a swap exchanges the contents of two slots while names and references
//! stay with the slots. A set is referenced by list:set sets that contain
//! it and by holders the caller registers (`hold`, e.g. iptables rules
//! using the set); a referenced set cannot be destroyed or renamed.
//!
//! Changes are journaled while a transaction is open (`begin`), so a failed
//! command or restore can be rolled back (`rollback`) to leave the store as
//! it was. Members added to or removed from a set created inside the
//! innermost open transaction are not journaled: every rollback that can
//! reach them also undoes the set's creation (a restore that creates a set
//! of a million members keeps no undo entry per member).

use super::entry::{Ext, Key};
use super::expand::{self, Adt};
use super::header::Header;
use super::set::{Changes, Members, Set, Undo};
use crate::addr::Family;
use crate::data::Data;
use crate::error::{Kernel, Result};
use crate::types::{feature, SetType};
use std::collections::HashMap;

/// A set in its slot: name, caller-held references, contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub name: String,
    pub held: u32,
    pub set: Set,
}

enum UndoOp {
    Created(usize),
    Destroyed(usize, Slot),
    Renamed(usize, String),
    Swapped(usize, usize),
    Members(usize, Undo),
    Flushed(usize, Members),
    List(usize, Vec<(String, Ext)>),
    Held(usize, u32),
}

/// The sets of a namespace.
#[derive(Default)]
pub struct Store {
    slots: Vec<Option<Slot>>,
    index: HashMap<String, usize>,
    journal: Vec<UndoOp>,
    /// Journal length at each open transaction's `begin`, innermost last.
    marks: Vec<usize>,
    /// Per slot: the journal position of its `Created` entry, while the
    /// journal holds it and no swap has moved other contents into it.
    born: Vec<Option<usize>>,
    /// Undo buffer reused by member changes that need no journal entry.
    scratch: Undo,
    seed: u64,
}

/// A transaction mark (see [`Store::begin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Savepoint(usize);

impl Store {
    pub fn new() -> Store {
        Store::default()
    }

    /// A store whose generated `initval`s follow `seed` (a kernel backend
    /// seeds it randomly per process, as the kernel draws initvals).
    pub fn with_seed(seed: u64) -> Store {
        Store {
            seed,
            ..Store::default()
        }
    }

    /// Put a set read from a kernel into slot `slot`, with `held`
    /// references (not journaled: loading is not a change). Fails if the
    /// slot or the name is taken.
    pub fn load(&mut self, slot: usize, name: &str, header: Header, held: u32) -> Result<()> {
        if self.index.contains_key(name) || self.slots.get(slot).is_some_and(Option::is_some) {
            return Err(Kernel::SetExists.into());
        }
        if self.slots.len() <= slot {
            self.slots.resize(slot + 1, None);
        }
        self.slots[slot] = Some(Slot {
            name: name.to_string(),
            held,
            set: Set::new(header),
        });
        self.index.insert(name.to_string(), slot);
        Ok(())
    }

    /// Put a member read from a kernel into set `name` (not journaled).
    /// No-op for an unknown set or a list:set.
    pub fn load_member(&mut self, name: &str, key: Key, ext: Ext) {
        let Some(i) = self.slot(name) else { return };
        if let Some(Members::Map(m)) = self.slots[i].as_mut().map(|s| &mut s.set.members) {
            m.put(key, Some(ext));
        }
    }

    /// The slot (the kernel's set index) of set `name`.
    pub fn slot_index(&self, name: &str) -> Option<usize> {
        self.slot(name)
    }

    /// Set the caller-held references of set `name` (not journaled).
    pub fn set_held(&mut self, name: &str, held: u32) {
        if let Some(s) = self.slot(name).and_then(|i| self.slots[i].as_mut()) {
            s.held = held;
        }
    }

    /// Open a transaction: changes from here on can be rolled back.
    /// Transactions nest; the journal is dropped when the outermost one
    /// commits.
    pub fn begin(&mut self) -> Savepoint {
        self.marks.push(self.journal.len());
        Savepoint(self.journal.len())
    }

    pub fn commit(&mut self, _sp: Savepoint) {
        self.close();
    }

    /// Close the innermost transaction; the outermost drops the journal.
    fn close(&mut self) {
        self.marks.pop();
        if self.marks.is_empty() {
            self.journal.clear();
            self.born.clear();
        }
    }

    /// Whether member changes of slot `i` need journal entries: inside a
    /// transaction, unless the set was created after its innermost `begin`.
    fn journaled(&self, i: usize) -> bool {
        let Some(&mark) = self.marks.last() else {
            return false;
        };
        !matches!(self.born.get(i), Some(&Some(at)) if at >= mark)
    }

    /// Undo every change since `sp` and close its transaction.
    pub fn rollback(&mut self, sp: Savepoint) {
        while self.journal.len() > sp.0 {
            let op = self.journal.pop().expect("journal longer than savepoint");
            self.undo(op);
        }
        self.close();
    }

    fn log(&mut self, op: UndoOp) {
        if !self.marks.is_empty() {
            self.journal.push(op);
        }
    }

    fn undo(&mut self, op: UndoOp) {
        match op {
            UndoOp::Created(i) => {
                if let Some(s) = self.slots[i].take() {
                    self.index.remove(&s.name);
                }
                if let Some(b) = self.born.get_mut(i) {
                    *b = None;
                }
            }
            UndoOp::Destroyed(i, slot) => {
                self.index.insert(slot.name.clone(), i);
                self.slots[i] = Some(slot);
            }
            UndoOp::Renamed(i, old) => {
                let s = self.slots[i].as_mut().expect("renamed slot exists");
                self.index.remove(&s.name);
                s.name = old.clone();
                self.index.insert(old, i);
            }
            UndoOp::Swapped(a, b) => self.swap_slots(a, b),
            UndoOp::Members(i, undo) => {
                if let Some(Members::Map(m)) = self.slots[i].as_mut().map(|s| &mut s.set.members) {
                    for (k, v) in undo.into_iter().rev() {
                        m.put(k, v);
                    }
                }
            }
            UndoOp::Flushed(i, members) => {
                if let Some(s) = self.slots[i].as_mut() {
                    s.set.members = members;
                }
            }
            UndoOp::List(i, list) => {
                if let Some(s) = self.slots[i].as_mut() {
                    s.set.members = Members::List(list);
                }
            }
            UndoOp::Held(i, n) => {
                if let Some(s) = self.slots[i].as_mut() {
                    s.held = n;
                }
            }
        }
    }

    fn swap_slots(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        let (lo, hi) = (a.min(b), a.max(b));
        let (left, right) = self.slots.split_at_mut(hi);
        let x = left[lo].as_mut().expect("swapped slot exists");
        let y = right[0].as_mut().expect("swapped slot exists");
        std::mem::swap(&mut x.set, &mut y.set);
        // Contents older than the slots' creation now live in them.
        for i in [a, b] {
            if let Some(b) = self.born.get_mut(i) {
                *b = None;
            }
        }
    }

    fn slot(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub fn get(&self, name: &str) -> Option<&Set> {
        self.slot(name)
            .and_then(|i| self.slots[i].as_ref())
            .map(|s| &s.set)
    }

    /// Type and family of a set, for the parser.
    pub fn kind(&self, name: &str) -> Option<(SetType, Option<Family>)> {
        self.get(name).map(|s| (s.header.ty, s.header.family))
    }

    /// Sets in listing order: slot order, list:set sets last.
    pub fn in_dump_order(&self) -> Vec<&Slot> {
        let all: Vec<&Slot> = self.slots.iter().flatten().collect();
        let (lists, others): (Vec<&Slot>, Vec<&Slot>) = all
            .into_iter()
            .partition(|s| s.set.header.ty.info().features & feature::DUMP_LAST != 0);
        others.into_iter().chain(lists).collect()
    }

    pub fn slot_named(&self, name: &str) -> Option<&Slot> {
        self.slot(name).and_then(|i| self.slots[i].as_ref())
    }

    /// References to a set: caller holds plus list:set sets containing it.
    pub fn references(&self, name: &str) -> u32 {
        let held = self.slot_named(name).map_or(0, |s| s.held);
        let in_lists = self
            .slots
            .iter()
            .flatten()
            .filter_map(|s| match &s.set.members {
                Members::List(l) => Some(l.iter().filter(|(n, _)| n == name).count()),
                Members::Map(_) => None,
            })
            .sum::<usize>();
        held + in_lists as u32
    }

    /// Register a reference to a set (it can no longer be destroyed or
    /// renamed until released).
    pub fn hold(&mut self, name: &str) -> Result<()> {
        let i = self.slot(name).ok_or(Kernel::NoSet)?;
        let s = self.slots[i].as_mut().expect("indexed slot exists");
        let old = s.held;
        s.held += 1;
        self.log(UndoOp::Held(i, old));
        Ok(())
    }

    pub fn release(&mut self, name: &str) -> Result<()> {
        let i = self.slot(name).ok_or(Kernel::NoSet)?;
        let s = self.slots[i].as_mut().expect("indexed slot exists");
        let old = s.held;
        s.held = s.held.saturating_sub(1);
        self.log(UndoOp::Held(i, old));
        Ok(())
    }

    /// Drop expired members of every set (list:set expiry releases the
    /// references it held).
    pub fn purge(&mut self, now: u64) {
        for i in 0..self.slots.len() {
            self.purge_slot(i, now);
        }
    }

    fn purge_slot(&mut self, i: usize, now: u64) {
        let Some(s) = self.slots[i].as_mut() else {
            return;
        };
        match &s.set.members {
            Members::List(l) => {
                if l.iter().any(|(_, e)| e.expiry.expired(now)) {
                    let old = l.clone();
                    let mut undo = Undo::new();
                    s.set.purge(now, &mut undo);
                    self.log(UndoOp::List(i, old));
                }
            }
            Members::Map(_) => {
                let mut undo = Undo::new();
                s.set.purge(now, &mut undo);
                if !undo.is_empty() {
                    self.log(UndoOp::Members(i, undo));
                }
            }
        }
    }

    fn next_initval(&mut self) -> u32 {
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as u32
    }

    /// `create`: `Ok(true)` if created, `Ok(false)` if `exist` and an equal
    /// set already exists.
    pub fn create(&mut self, name: &str, ty: SetType, d: &Data, exist: bool) -> Result<bool> {
        let initval = self.next_initval();
        let header = Header::create(ty, d, initval)?;
        if let Some(i) = self.slot(name) {
            let old = &self.slots[i]
                .as_ref()
                .expect("indexed slot exists")
                .set
                .header;
            if exist && old.same_as(&header) {
                return Ok(false);
            }
            return Err(Kernel::SetExists.into());
        }
        let i = match self.slots.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        self.slots[i] = Some(Slot {
            name: name.to_string(),
            held: 0,
            set: Set::new(header),
        });
        self.index.insert(name.to_string(), i);
        if !self.marks.is_empty() {
            if self.born.len() <= i {
                self.born.resize(i + 1, None);
            }
            self.born[i] = Some(self.journal.len());
        }
        self.log(UndoOp::Created(i));
        Ok(true)
    }

    /// `destroy [NAME]`: the names destroyed.
    pub fn destroy(&mut self, name: Option<&str>, exist: bool, now: u64) -> Result<Vec<String>> {
        self.purge(now);
        let targets: Vec<usize> = match name {
            Some(n) => match self.slot(n) {
                Some(i) => vec![i],
                None if exist => return Ok(Vec::new()),
                None => return Err(Kernel::NoSet.into()),
            },
            None => (0..self.slots.len())
                .filter(|&i| self.slots[i].is_some())
                .collect(),
        };
        for &i in &targets {
            let n = &self.slots[i].as_ref().expect("target exists").name;
            if self.references(n) > 0 {
                return Err(Kernel::Busy.into());
            }
        }
        let mut names = Vec::new();
        for i in targets {
            let slot = self.slots[i].take().expect("target exists");
            self.index.remove(&slot.name);
            names.push(slot.name.clone());
            self.log(UndoOp::Destroyed(i, slot));
        }
        Ok(names)
    }

    /// `flush [NAME]`: the names flushed.
    pub fn flush(&mut self, name: Option<&str>) -> Result<Vec<String>> {
        let targets: Vec<usize> = match name {
            Some(n) => vec![self.slot(n).ok_or(Kernel::NoSet)?],
            None => (0..self.slots.len())
                .filter(|&i| self.slots[i].is_some())
                .collect(),
        };
        let mut names = Vec::new();
        for i in targets {
            let s = self.slots[i].as_mut().expect("target exists");
            let empty = Set::new(s.set.header.clone()).members;
            let old = std::mem::replace(&mut s.set.members, empty);
            names.push(s.name.clone());
            self.log(UndoOp::Flushed(i, old));
        }
        Ok(names)
    }

    pub fn rename(&mut self, from: &str, to: &str, now: u64) -> Result<()> {
        self.purge(now);
        let i = self.slot(from).ok_or(Kernel::NoSet)?;
        if self.references(from) > 0 {
            return Err(Kernel::Referenced.into());
        }
        if self.slot(to).is_some() {
            return Err(Kernel::RenameExists.into());
        }
        let s = self.slots[i].as_mut().expect("indexed slot exists");
        let old = std::mem::replace(&mut s.name, to.to_string());
        self.index.remove(&old);
        self.index.insert(to.to_string(), i);
        self.log(UndoOp::Renamed(i, old));
        Ok(())
    }

    pub fn swap(&mut self, a: &str, b: &str) -> Result<()> {
        let i = self.slot(a).ok_or(Kernel::NoSet)?;
        let j = self.slot(b).ok_or(Kernel::SwapNoSecond)?;
        let (ha, hb) = (
            &self.slots[i].as_ref().expect("slot").set.header,
            &self.slots[j].as_ref().expect("slot").set.header,
        );
        if ha.ty.info().features != hb.ty.info().features || ha.family != hb.family {
            return Err(Kernel::TypeMismatch.into());
        }
        self.swap_slots(i, j);
        self.log(UndoOp::Swapped(i, j));
        Ok(())
    }

    /// `add`/`del` on a hash or bitmap set, or a list:set.
    pub fn adt(
        &mut self,
        name: &str,
        d: &Data,
        adt: Adt,
        exist: bool,
        now: u64,
    ) -> Result<Changes> {
        let i = self.slot(name).ok_or(Kernel::NoSet)?;
        self.purge_slot(i, now);
        let mut ch = Changes::default();
        if self.slots[i].as_ref().expect("slot").set.header.ty == SetType::ListSet {
            self.list_adt(i, d, adt, exist, now, &mut ch)?;
            return Ok(ch);
        }
        let s = &mut self.slots[i].as_mut().expect("slot").set;
        let x = expand::expand(&s.header, d, adt)?;
        let mut undo = std::mem::take(&mut self.scratch);
        undo.clear();
        let r = match adt {
            Adt::Add => s.add(&x, d, exist, now, &mut undo, &mut ch),
            _ => s.del(&x, exist, &mut undo, &mut ch),
        };
        if self.journaled(i) {
            self.journal.push(UndoOp::Members(i, undo));
        } else if !self.marks.is_empty() {
            // A set born in this transaction: a rollback removes it whole.
            self.scratch = undo;
        } else if r.is_err() {
            if let Some(Members::Map(m)) = self.slots[i].as_mut().map(|s| &mut s.set.members) {
                for (k, v) in undo.into_iter().rev() {
                    m.put(k, v);
                }
            }
        }
        r?;
        Ok(ch)
    }

    /// `test`: whether the element is in the set (`Ok(false)` covers every
    /// kernel refusal, as ipset reports them all as "not in set").
    pub fn test(&mut self, name: &str, d: &Data, now: u64) -> Result<bool> {
        let i = self.slot(name).ok_or(Kernel::NoSet)?;
        self.purge_slot(i, now);
        let s = &self.slots[i].as_ref().expect("slot").set;
        if s.header.ty == SetType::ListSet {
            return Ok(self.list_test(s, d).unwrap_or(false));
        }
        let Ok(x) = expand::expand(&s.header, d, Adt::Test) else {
            return Ok(false);
        };
        let hit = s.test(&x.nth(0), d);
        let with_nomatch = d.nomatch && s.header.ty.has_nomatch();
        Ok(match hit {
            Some(m) => m != with_nomatch,
            None => false,
        })
    }

    /// Resolve a list:set element: member name and position reference
    /// (`Some((refname, before))`).
    fn list_refs(&self, d: &Data) -> std::result::Result<(String, Option<(String, bool)>), Kernel> {
        let name = d.name.clone().unwrap_or_default();
        let member = self.get(&name).ok_or(Kernel::ListName)?;
        if member.header.ty.info().features & feature::NAME != 0 {
            return Err(Kernel::ListLoop);
        }
        let r = match &d.nameref {
            Some(r) => {
                self.get(r).ok_or(Kernel::ListNameRef)?;
                Some((r.clone(), d.before))
            }
            None if d.before => return Err(Kernel::ListBefore),
            None => None,
        };
        Ok((name, r))
    }

    fn list_test(&self, s: &Set, d: &Data) -> std::result::Result<bool, Kernel> {
        let (name, r) = self.list_refs(d)?;
        let Members::List(l) = &s.members else {
            return Ok(false);
        };
        let Some(pos) = l.iter().position(|(n, _)| *n == name) else {
            return Ok(false);
        };
        Ok(match r {
            None => true,
            Some((r, true)) => l.get(pos + 1).is_some_and(|(n, _)| *n == r),
            Some((r, false)) => pos > 0 && l[pos - 1].0 == r,
        })
    }

    fn list_adt(
        &mut self,
        i: usize,
        d: &Data,
        adt: Adt,
        exist: bool,
        now: u64,
        ch: &mut Changes,
    ) -> Result<()> {
        let s = &self.slots[i].as_ref().expect("slot").set;
        if adt == Adt::Add {
            expand::check_extensions(&s.header, d)?;
        }
        let (name, r) = self.list_refs(d)?;
        let ext = s.new_ext(d, now);
        let Members::List(l) = &s.members else {
            return Ok(());
        };
        let mut list = l.clone();
        let old = l.clone();
        let pos = list.iter().position(|(n, _)| *n == name);
        let key = Key {
            set: Some(name.clone()),
            ..Key::default()
        };
        match adt {
            Adt::Add => {
                let refpos = match &r {
                    Some((rn, _)) => Some(
                        list.iter()
                            .position(|(n, _)| n == rn && *n != name)
                            .ok_or(Kernel::ListRefExist)?,
                    ),
                    None => None,
                };
                if let Some(p) = pos {
                    if !exist {
                        return Err(Kernel::AlreadyAdded.into());
                    }
                    let mut e = ext.clone();
                    if d.packets.is_none() {
                        e.packets = list[p].1.packets;
                    }
                    if d.bytes.is_none() {
                        e.bytes = list[p].1.bytes;
                    }
                    list[p].1 = e.clone();
                    ch.updated.push((key, e));
                } else {
                    let at = match (refpos, &r) {
                        (Some(rp), Some((_, true))) => rp,
                        (Some(rp), Some((_, false))) => rp + 1,
                        _ => list.len(),
                    };
                    list.insert(at, (name, ext.clone()));
                    ch.added.push((key, ext));
                }
            }
            _ => {
                let Some(p) = pos else {
                    if r.is_some() {
                        return Err(Kernel::ListRefExist.into());
                    }
                    if exist {
                        return Ok(());
                    }
                    return Err(Kernel::NotAdded.into());
                };
                match &r {
                    Some((rn, true)) if list.get(p + 1).is_none_or(|(n, _)| n != rn) => {
                        return Err(Kernel::ListRefExist.into())
                    }
                    Some((rn, false)) if p == 0 || list[p - 1].0 != *rn => {
                        return Err(Kernel::ListRefExist.into())
                    }
                    _ => {}
                }
                let (_, e) = list.remove(p);
                ch.removed.push((key, e));
            }
        }
        self.slots[i].as_mut().expect("slot").set.members = Members::List(list);
        self.log(UndoOp::List(i, old));
        Ok(())
    }

    /// Every slot (for listings), with the current time applied.
    pub fn slots(&self) -> impl Iterator<Item = &Slot> {
        self.slots.iter().flatten()
    }
}

impl crate::parse::SetLookup for Store {
    fn set_kind(&self, name: &str) -> Option<(SetType, Option<Family>)> {
        self.kind(name)
    }
}

#[cfg(test)]
mod tests;

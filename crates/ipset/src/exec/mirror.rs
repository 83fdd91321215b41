//! The backend hook: every change a command makes to the model is also
//! handed to a [`Mirror`], so that a kernel backend can build one nftables
//! transaction from it.
//!
//! Contract: calls arrive in command order while the model changes. A
//! mirror collects them into one transaction and the caller commits it only
//! when the command (or the whole restore) returned success; on failure the
//! model is rolled back and the caller must discard what the mirror
//! collected. A mirror may refuse a change by returning an error (e.g. a set
//! type nftables cannot represent): the command then fails with that
//! message and the model is rolled back.

use crate::error::Result;
use crate::model::{Entry, Ext, Header, Key, Set};

/// A set as it is after a change, with its name and slot (the kernel's
/// set index).
#[derive(Clone, Copy, Debug)]
pub struct Named<'a> {
    pub name: &'a str,
    pub slot: usize,
    pub set: &'a Set,
}

/// Receives every change of the model.
pub trait Mirror {
    /// A set was created in slot `slot`.
    fn create(&mut self, _name: &str, _header: &Header, _slot: usize) -> Result<()> {
        Ok(())
    }
    /// A set was destroyed.
    fn destroy(&mut self, _name: &str) -> Result<()> {
        Ok(())
    }
    /// Members were added to `set`.
    fn add(&mut self, _set: &str, _header: &Header, _entries: &[Entry]) -> Result<()> {
        Ok(())
    }
    /// Existing members got new values (`add -exist`).
    fn update(&mut self, _set: &str, _header: &Header, _entries: &[Entry]) -> Result<()> {
        Ok(())
    }
    /// Members were deleted from `set`.
    fn del(&mut self, _set: &str, _header: &Header, _entries: &[Entry]) -> Result<()> {
        Ok(())
    }
    /// All members of `set` were removed.
    fn flush(&mut self, _set: &str) -> Result<()> {
        Ok(())
    }
    /// Set `from` is now `to.name` (same slot and contents).
    fn rename(&mut self, _from: &str, _to: Named) -> Result<()> {
        Ok(())
    }
    /// The changes from here on come from restore input line `n`.
    fn at_line(&mut self, _n: usize) {}
    /// The contents (headers and members) of two sets were exchanged;
    /// names and slots stay. `a` and `b` are the sets as they are now.
    fn swap(&mut self, _a: Named, _b: Named) -> Result<()> {
        Ok(())
    }
}

/// A mirror that does nothing (the model alone).
pub struct NoMirror;

impl Mirror for NoMirror {}

/// A mirror that records calls as text (for tests and debugging).
#[derive(Default)]
pub struct Recorder {
    pub calls: Vec<String>,
}

impl Mirror for Recorder {
    fn create(&mut self, name: &str, h: &Header, _slot: usize) -> Result<()> {
        self.calls.push(format!("create {name} {}", h.ty.name()));
        Ok(())
    }
    fn destroy(&mut self, name: &str) -> Result<()> {
        self.calls.push(format!("destroy {name}"));
        Ok(())
    }
    fn add(&mut self, set: &str, h: &Header, entries: &[Entry]) -> Result<()> {
        self.calls.push(format!("add {set} {}", texts(h, entries)));
        Ok(())
    }
    fn update(&mut self, set: &str, h: &Header, entries: &[Entry]) -> Result<()> {
        self.calls
            .push(format!("update {set} {}", texts(h, entries)));
        Ok(())
    }
    fn del(&mut self, set: &str, h: &Header, entries: &[Entry]) -> Result<()> {
        self.calls.push(format!("del {set} {}", texts(h, entries)));
        Ok(())
    }
    fn flush(&mut self, set: &str) -> Result<()> {
        self.calls.push(format!("flush {set}"));
        Ok(())
    }
    fn rename(&mut self, from: &str, to: Named) -> Result<()> {
        self.calls.push(format!("rename {from} {}", to.name));
        Ok(())
    }
    fn swap(&mut self, a: Named, b: Named) -> Result<()> {
        self.calls.push(format!("swap {} {}", a.name, b.name));
        Ok(())
    }
}

fn texts(h: &Header, entries: &[Entry]) -> String {
    entries
        .iter()
        .map(|e| {
            let ext = Ext {
                mac: e.key.mac,
                ..Ext::default()
            };
            let mut k = e.key.clone();
            if h.ty == crate::types::SetType::BitmapIpMac {
                k.mac = None;
            }
            crate::print::text::key_text(h.ty, &k, &ext)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A member as a backend sees it: the key with everything it needs
/// (bitmap:ip,mac's MAC moved into the key), values with the remaining
/// timeout at `now`.
pub fn entry(set: &Set, key: &Key, ext: &Ext, now: u64) -> Entry {
    let h = &set.header;
    let mut key = key.clone();
    if key.mac.is_none() {
        key.mac = ext.mac;
    }
    Entry {
        key,
        timeout: ext.expiry.shown(now),
        counters: h.counters.then_some((ext.packets, ext.bytes)),
        comment: ext.comment.clone().filter(|_| h.comment),
        skbmark: (h.skbinfo && ext.skbmark != 0)
            .then_some(((ext.skbmark >> 32) as u32, ext.skbmark as u32)),
        skbprio: (h.skbinfo && ext.skbprio != 0).then_some(ext.skbprio),
        skbqueue: (h.skbinfo && ext.skbqueue != 0).then_some(ext.skbqueue),
        nomatch: ext.nomatch,
        wildcard: ext.wildcard,
    }
}

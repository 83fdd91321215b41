//! One set: its header and members, and the member operations (add, del,
//! test) with the kernel's semantics for each kind of set.
//!
//! Every change is recorded in `undo` (the old value of each touched key) so
//! the store can roll a failed command back, and reported in [`Changes`] so
//! a backend can mirror it.

use super::entry::{Expiry, Ext, Key};
use super::expand::Expansion;
use super::header::{Header, Params};
use super::members::MapMembers;
use crate::data::Data;
use crate::error::Kernel;
use crate::types::SetType;

/// Members of a set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Members {
    /// Hash and bitmap types.
    Map(MapMembers),
    /// list:set: member set names with their values, in list order.
    List(Vec<(String, Ext)>),
}

/// A set: header and members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Set {
    pub header: Header,
    pub members: Members,
}

/// What an operation changed, for a mirror.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    pub added: Vec<(Key, Ext)>,
    /// Existing members whose values were replaced (`add -exist`).
    pub updated: Vec<(Key, Ext)>,
    pub removed: Vec<(Key, Ext)>,
}

/// Old values of the keys an operation touched (to undo it).
pub type Undo = Vec<(Key, Option<Ext>)>;

/// Iterations one command may take (a range this long is refused, as the
/// kernel refuses ranges it cannot split).
pub const MAX_ITERATIONS: u128 = 1 << 26;
/// Members of hash:net,iface sharing one network (the kernel's bucket
/// limit for clashing entries).
const MAX_CLASHING: usize = 64;

impl Set {
    pub fn new(header: Header) -> Set {
        let members = if header.ty == SetType::ListSet {
            Members::List(Vec::new())
        } else {
            Members::Map(MapMembers::new())
        };
        Set { header, members }
    }

    pub fn len(&self) -> usize {
        match &self.members {
            Members::Map(m) => m.len(),
            Members::List(l) => l.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn map(&mut self) -> &mut MapMembers {
        match &mut self.members {
            Members::Map(m) => m,
            Members::List(_) => unreachable!("list:set has no map members"),
        }
    }

    /// Drop expired members (recorded in `undo`).
    pub fn purge(&mut self, now: u64, undo: &mut Undo) {
        match &mut self.members {
            Members::Map(m) => {
                for (k, e) in m.purge(now) {
                    undo.push((k, Some(e)));
                }
            }
            Members::List(l) => l.retain(|(_, e)| !e.expiry.expired(now)),
        }
    }

    /// The values an add gives a member (the kernel's extension init).
    pub fn new_ext(&self, d: &Data, now: u64) -> Ext {
        let h = &self.header;
        let expiry = match h.timeout {
            None => Expiry::None,
            Some(def) => Expiry::after(d.timeout.unwrap_or(def), now),
        };
        Ext {
            expiry,
            packets: d.packets.unwrap_or(0),
            bytes: d.bytes.unwrap_or(0),
            comment: if h.comment { d.comment.clone() } else { None },
            skbmark: d.skbmark.unwrap_or(0),
            skbprio: d.skbprio.unwrap_or(0),
            skbqueue: d.skbqueue.unwrap_or(0),
            nomatch: d.nomatch && h.ty.has_nomatch(),
            wildcard: d.wildcard,
            mac: None,
        }
    }

    /// Re-add of an existing member: new values, but the key, the wildcard
    /// flag and (unless given) the counters stay.
    fn overwrite(old: &Ext, new: &Ext, d: &Data) -> Ext {
        Ext {
            packets: if d.packets.is_some() {
                new.packets
            } else {
                old.packets
            },
            bytes: if d.bytes.is_some() {
                new.bytes
            } else {
                old.bytes
            },
            wildcard: old.wildcard,
            mac: old.mac,
            ..new.clone()
        }
    }

    /// The stored key equal to `probe` (hash:net,iface compares a stored
    /// wildcard name as a prefix).
    pub fn find(&self, probe: &Key) -> Option<(Key, Ext)> {
        let Members::Map(m) = &self.members else {
            return None;
        };
        if let Some(e) = m.get(probe) {
            return Some((probe.clone(), e.clone()));
        }
        if self.header.ty != SetType::HashNetIface {
            return None;
        }
        let pi = probe.iface.as_ref()?;
        m.with_ip(probe)
            .find(|(k, e)| {
                k.iface.as_ref().is_some_and(|si| {
                    si.physdev == pi.physdev && e.wildcard && pi.name.starts_with(&si.name)
                })
            })
            .map(|(k, e)| (k.clone(), e.clone()))
    }

    /// Add every member of `x`.
    pub fn add(
        &mut self,
        x: &Expansion,
        d: &Data,
        exist: bool,
        now: u64,
        undo: &mut Undo,
        ch: &mut Changes,
    ) -> Result<(), Kernel> {
        let n = x.count();
        if n > MAX_ITERATIONS {
            return Err(Kernel::RangeTooLarge);
        }
        let mut ext = self.new_ext(d, now);
        ext.wildcard = x.wildcard;
        ext.nomatch = x.nomatch && self.header.ty.has_nomatch();
        if self.header.ty == SetType::BitmapIpMac {
            return self.add_ipmac(x, d, exist, now, undo, ch);
        }
        let maxelem = self.header.maxelem();
        // Types whose members are found by their exact key take a new
        // member with one search while there is room (restores add
        // members this way by the million).
        let exact = self.header.ty != SetType::HashNetIface;
        for key in x.iter() {
            let room = maxelem.is_none_or(|max| self.len() < max as usize);
            if exact && room && self.map().insert_new(key.clone(), ext.clone()) {
                undo.push((key.clone(), None));
                ch.added.push((key, ext.clone()));
                continue;
            }
            if let Some((k, old)) = self.find(&key) {
                if !exist {
                    return Err(Kernel::AlreadyAdded);
                }
                let new = Self::overwrite(&old, &ext, d);
                undo.push((k.clone(), self.map().put(k.clone(), Some(new.clone()))));
                ch.updated.push((k, new));
                continue;
            }
            if let Some(max) = maxelem {
                if self.len() >= max as usize {
                    if !self.header.forceadd {
                        return Err(Kernel::HashFull);
                    }
                    let victim = match &self.members {
                        Members::Map(m) => m.iter().next().map(|(k, _)| k.clone()),
                        Members::List(_) => None,
                    };
                    let Some(v) = victim else {
                        return Err(Kernel::HashFull);
                    };
                    let old = self.map().put(v.clone(), None);
                    if let Some(o) = &old {
                        ch.removed.push((v.clone(), o.clone()));
                    }
                    undo.push((v, old));
                }
            }
            if self.header.ty == SetType::HashNetIface {
                let Members::Map(m) = &self.members else {
                    unreachable!()
                };
                let physdev = key.iface.as_ref().map(|i| i.physdev);
                let clashing = m
                    .with_ip(&key)
                    .filter(|(k, _)| k.iface.as_ref().map(|i| i.physdev) == physdev)
                    .count();
                if clashing >= MAX_CLASHING {
                    return Err(Kernel::HashFull);
                }
            }
            undo.push((key.clone(), self.map().put(key.clone(), Some(ext.clone()))));
            ch.added.push((key, ext.clone()));
        }
        Ok(())
    }

    /// bitmap:ip,mac's add: an address may be stored without its MAC; its
    /// timeout is then kept as a plain value and starts once the MAC is
    /// filled in (by a later add with the MAC, which needs no `-exist`).
    fn add_ipmac(
        &mut self,
        x: &Expansion,
        d: &Data,
        exist: bool,
        now: u64,
        undo: &mut Undo,
        ch: &mut Changes,
    ) -> Result<(), Kernel> {
        let key = x.nth(0);
        let def = self.header.timeout;
        let secs = def.map(|def| d.timeout.unwrap_or(def));
        let mut ext = self.new_ext(d, now);
        let old = self.find(&key).map(|(_, e)| e);
        let mac = d.ether;
        match &old {
            Some(o) if o.mac.is_some() => {
                if !exist {
                    return Err(Kernel::AlreadyAdded);
                }
                ext = Self::overwrite(o, &ext, d);
                ext.mac = mac.or(o.mac);
            }
            Some(o) => {
                ext = Self::overwrite(o, &ext, d);
                ext.mac = mac;
                match (mac, secs) {
                    (None, _) => {
                        // Re-adding an address still without MAC: the kernel
                        // takes a kept, non-zero timeout for an expired entry
                        // and overwrites it; otherwise it is a duplicate.
                        let stale = matches!(o.expiry, Expiry::Pending(s) if s != 0);
                        if !exist && !stale {
                            return Err(Kernel::AlreadyAdded);
                        }
                        if let Some(s) = secs {
                            ext.expiry = Expiry::Pending(s);
                        }
                    }
                    (Some(_), Some(s)) => {
                        let kept = match o.expiry {
                            Expiry::Pending(k) => k,
                            _ => s,
                        };
                        let t = if d.timeout.is_none() || d.timeout == def {
                            kept
                        } else {
                            s
                        };
                        ext.expiry = Expiry::after(t, now);
                    }
                    (Some(_), None) => {}
                }
            }
            None => {
                ext.mac = mac;
                if let (Some(s), None) = (secs, mac) {
                    ext.expiry = Expiry::Pending(s);
                }
            }
        }
        let prev = self.map().put(key.clone(), Some(ext.clone()));
        let updated = prev.is_some();
        undo.push((key.clone(), prev));
        if updated {
            ch.updated.push((key, ext));
        } else {
            ch.added.push((key, ext));
        }
        Ok(())
    }

    /// Delete every member of `x`.
    pub fn del(
        &mut self,
        x: &Expansion,
        exist: bool,
        undo: &mut Undo,
        ch: &mut Changes,
    ) -> Result<(), Kernel> {
        let n = x.count();
        let len = self.len() as u128;
        if n > len && !exist && n > 1 {
            return Err(Kernel::NotAdded);
        }
        if n > len * 4 + 1024 {
            let hits: Vec<Key> = match &self.members {
                Members::Map(m) => m
                    .iter()
                    .filter(|(k, _)| x.contains(k))
                    .map(|(k, _)| k.clone())
                    .collect(),
                Members::List(_) => Vec::new(),
            };
            for k in hits {
                let old = self.map().put(k.clone(), None);
                if let Some(o) = &old {
                    ch.removed.push((k.clone(), o.clone()));
                }
                undo.push((k, old));
            }
            return Ok(());
        }
        for key in x.iter() {
            match self.find(&key) {
                Some((k, _)) => {
                    let old = self.map().put(k.clone(), None);
                    if let Some(o) = &old {
                        ch.removed.push((k.clone(), o.clone()));
                    }
                    undo.push((k, old));
                }
                None if exist => {}
                None => return Err(Kernel::NotAdded),
            }
        }
        Ok(())
    }

    /// Test one member: `Some(true)` matched, `Some(false)` matched a
    /// `nomatch` entry, `None` not found.
    pub fn test(&self, probe: &Key, d: &Data) -> Option<bool> {
        let Members::Map(m) = &self.members else {
            return None;
        };
        let ty = self.header.ty;
        if ty == SetType::BitmapIpMac {
            let e = m.get(probe)?;
            return match (d.ether, e.mac) {
                (Some(a), Some(b)) => (a == b).then_some(true),
                _ => Some(true),
            };
        }
        let (n1, n2) = ty.net_dims();
        let host = |n: &Option<crate::addr::Net>| n.is_none_or(|n| n.is_host());
        let by_nets = (n1 || n2) && (!n1 || host(&probe.ip)) && (!n2 || host(&probe.ip2));
        if !by_nets {
            return self.find(probe).map(|(_, e)| !e.nomatch);
        }
        let lens = |dim: usize, on: bool| {
            if on {
                m.prefix_lens(dim)
            } else {
                vec![u8::MAX]
            }
        };
        for c1 in lens(0, n1) {
            let mut multi = false;
            for c2 in lens(1, n2) {
                let mut k = probe.clone();
                if c1 != u8::MAX {
                    k.ip = k.ip.map(|n| mask_net(n, c1));
                }
                if c2 != u8::MAX {
                    k.ip2 = k.ip2.map(|n| mask_net(n, c2));
                }
                if ty == SetType::HashNetIface && m.with_ip(&k).next().is_some() {
                    multi = true;
                }
                if let Some((_, e)) = self.find(&k) {
                    return Some(!e.nomatch);
                }
                if multi {
                    break;
                }
            }
            if multi {
                break;
            }
        }
        None
    }

    /// bitmap:ip's netmask and hash:ip's netmask (printing drops the prefix).
    pub fn netmask(&self) -> Option<u8> {
        match self.header.params {
            Params::Hash { netmask, .. } => netmask,
            Params::BitmapIp { netmask, .. } if netmask != 32 => Some(netmask),
            _ => None,
        }
    }
}

fn mask_net(n: crate::addr::Net, c: u8) -> crate::addr::Net {
    crate::addr::Net {
        addr: crate::addr::mask(n.addr, c),
        prefix: c,
    }
}

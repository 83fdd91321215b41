//! The objects the fake kernel keeps: tables, chains, rules, sets and
//! elements, with the lookups and use counts of `nf_tables_api.c`.
//!
//! A [`Ruleset`] is cheap to clone (rule lists and element maps are shared
//! behind `Arc`s and copied on first write), so a batch works on a copy and
//! a commit swaps it in: all or nothing. What a real kernel keeps across an
//! abort stays shared between the copies: a table's handle counter
//! (`hgen`), so handles taken by an aborted batch are not handed out again,
//! as in the kernel.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use nft::data::{Data, Verdict};
use nft::expr::{reg, Expr};
use nft::Family;

use crate::list::{Item, Named};

/// `NFT_CHAIN_BASE`, `NFT_CHAIN_HW_OFFLOAD`, `NFT_CHAIN_BINDING`.
pub const CHAIN_BASE: u32 = 1;
pub const CHAIN_HW_OFFLOAD: u32 = 2;
pub const CHAIN_BINDING: u32 = 4;

#[derive(Clone, Default)]
pub struct Ruleset {
    /// In creation order (the kernel's list order, which dumps follow).
    pub tables: Vec<Table>,
}

#[derive(Clone)]
pub struct Table {
    pub family: Family,
    pub name: String,
    pub handle: u64,
    pub flags: u32,
    pub userdata: Option<Vec<u8>>,
    /// Handle generator of the table's chains, rules and sets (the last
    /// handle given out). Shared by every copy of this table.
    pub hgen: Arc<AtomicU64>,
    pub chains: Named<Chain>,
    /// Shared with the committed copy until a batch changes one.
    pub sets: Named<Arc<Set>>,
}

impl Item for Chain {
    fn name(&self) -> &str {
        &self.name
    }
    fn handle(&self) -> u64 {
        self.handle
    }
}

impl Item for Arc<Set> {
    fn name(&self) -> &str {
        &self.name
    }
    fn handle(&self) -> u64 {
        self.handle
    }
}

#[derive(Clone)]
pub struct Chain {
    pub name: String,
    pub handle: u64,
    pub base: Option<Base>,
    pub flags: u32,
    pub userdata: Option<Vec<u8>>,
    /// Rules in order; slots deleted by the batch under way stay until it
    /// commits (a deleted rule still serves as a position, as in the kernel).
    pub rules: Arc<Vec<Slot>>,
}

/// What makes a chain a base chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Base {
    pub hooknum: u32,
    pub priority: i32,
    pub ty: String,
    /// `NF_DROP` 0 or `NF_ACCEPT` 1.
    pub policy: u32,
    /// (bytes, packets) of the policy counter, when it has one.
    pub counters: Option<(u64, u64)>,
    pub dev: Option<String>,
}

#[derive(Clone)]
pub struct Slot {
    pub rule: Arc<Rule>,
    /// Deleted by the batch under way.
    pub gone: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub handle: u64,
    /// As received, except that a set lookup names its set (never a
    /// batch-local set id), as the kernel dumps it.
    pub exprs: Vec<Expr>,
    pub userdata: Option<Vec<u8>>,
}

#[derive(Clone)]
pub struct Set {
    pub name: String,
    pub handle: u64,
    pub flags: u32,
    pub key_type: u32,
    pub key_len: u32,
    pub data_type: u32,
    pub data_len: u32,
    pub policy: u32,
    pub size: u32,
    pub concat: Vec<u32>,
    pub timeout: u64,
    pub gc_interval: u32,
    pub userdata: Option<Vec<u8>>,
    /// Expressions every element gets (a counter per element).
    pub exprs: Vec<Expr>,
    pub elems: Arc<BTreeMap<ElemKey, Elem>>,
    /// An anonymous set a rule is bound to (it binds one rule, and goes
    /// with it).
    pub bound: bool,
}

/// An element's identity: the catch-all element, or a key (and, in an
/// interval set, whether it ends a range: a start and an end may share a
/// key).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ElemKey {
    pub catchall: bool,
    pub key: Vec<u8>,
    pub end: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Elem {
    pub key: Option<Vec<u8>>,
    pub key_end: Option<Vec<u8>>,
    pub data: Option<Data>,
    /// `NFTA_SET_ELEM_FLAGS` as given (0: none).
    pub flags: u32,
    pub timeout: Option<u64>,
    pub userdata: Option<Vec<u8>>,
    pub exprs: Vec<Expr>,
}

pub mod set_flags {
    pub use nft::set::flags::*;
}

impl Set {
    /// The elements in the order the kernel walks them: an interval set
    /// (a red-black tree) from the highest key down, a range's end before
    /// a start of the same key; other sets (hash order in the kernel) by
    /// key.
    pub fn walk(&self) -> Vec<&Elem> {
        if self.is_interval() && self.concat.is_empty() {
            let mut v: Vec<(&ElemKey, &Elem)> = self.elems.iter().collect();
            v.sort_by(|(a, _), (b, _)| b.key.cmp(&a.key).then(b.end.cmp(&a.end)));
            v.into_iter().map(|(_, e)| e).collect()
        } else {
            self.elems.values().collect()
        }
    }

    pub fn is_anonymous(&self) -> bool {
        self.flags & set_flags::ANONYMOUS != 0
    }
    pub fn is_map(&self) -> bool {
        self.flags & set_flags::MAP != 0
    }
    pub fn is_interval(&self) -> bool {
        self.flags & set_flags::INTERVAL != 0
    }
}

impl Table {
    pub fn new(family: Family, name: &str, handle: u64, flags: u32) -> Table {
        Table {
            family,
            name: name.to_string(),
            handle,
            flags,
            userdata: None,
            hgen: Arc::new(AtomicU64::new(0)),
            chains: Named::default(),
            sets: Named::default(),
        }
    }

    /// The next handle of this table (`nf_tables_alloc_handle`).
    pub fn alloc_handle(&self) -> u64 {
        self.hgen.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub fn chain(&self, name: &str) -> Option<usize> {
        self.chains.find(name)
    }

    pub fn chain_by_handle(&self, handle: u64) -> Option<usize> {
        self.chains.find_handle(handle)
    }

    pub fn set(&self, name: &str) -> Option<usize> {
        self.sets.find(name)
    }

    pub fn set_by_handle(&self, handle: u64) -> Option<usize> {
        self.sets.find_handle(handle)
    }

    /// Active rules of every chain.
    pub fn active_rules(&self) -> impl Iterator<Item = &Rule> {
        self.chains
            .iter()
            .flat_map(|c| c.rules.iter().filter(|s| !s.gone).map(|s| &*s.rule))
    }

    /// `chain->use` of every chain, in one pass over the table.
    pub fn uses(&self) -> HashMap<&str, u32> {
        let mut u: HashMap<&str, u32> = HashMap::new();
        for c in &self.chains {
            *u.entry(c.name.as_str()).or_default() +=
                c.rules.iter().filter(|s| !s.gone).count() as u32;
        }
        for e in self.active_rules().flat_map(|r| r.exprs.iter()) {
            if let Some(t) = jump_target(e) {
                *u.entry(t).or_default() += 1;
            }
        }
        for s in &self.sets {
            for e in s.elems.values() {
                if let Some(t) = verdict_chain(&e.data) {
                    *u.entry(t).or_default() += 1;
                }
            }
        }
        u
    }

    /// Whether a rule binds the set: an anonymous set's flag, else a scan
    /// of the rules (the batch's deleted ones included: their bindings go
    /// only when it commits).
    pub fn is_bound(&self, set: &Set) -> bool {
        set.bound || (!set.is_anonymous() && self.set_bindings(&set.name) > 0)
    }

    /// `chain->use`: the chain's active rules plus the jumps and gotos to
    /// it from active rules and from verdict map elements. O(table).
    pub fn chain_use(&self, name: &str) -> u32 {
        let own = self
            .chain(name)
            .map(|i| self.chains[i].rules.iter().filter(|s| !s.gone).count())
            .unwrap_or(0);
        own as u32 + self.refs_to(name)
    }

    /// Jumps and gotos to chain `name` (rules and map elements).
    pub fn refs_to(&self, name: &str) -> u32 {
        let mut n = 0;
        for r in self.active_rules() {
            n += r
                .exprs
                .iter()
                .filter(|e| jump_target(e) == Some(name))
                .count() as u32;
        }
        for s in &self.sets {
            for e in s.elems.values() {
                if let Some(Data::Verdict(Verdict::Jump(c) | Verdict::Goto(c))) = &e.data {
                    n += (c == name) as u32;
                }
            }
        }
        n
    }

    /// `set->use`: lookups of the set in active rules.
    pub fn set_use(&self, name: &str) -> u32 {
        self.active_rules()
            .flat_map(|r| r.exprs.iter())
            .filter(|e| lookup_set(e) == Some(name))
            .count() as u32
    }

    /// Rules bound to the set, the batch's deleted ones included (their
    /// bindings go only when it commits).
    pub fn set_bindings(&self, name: &str) -> u32 {
        self.chains
            .iter()
            .flat_map(|c| c.rules.iter())
            .flat_map(|s| s.rule.exprs.iter())
            .filter(|e| lookup_set(e) == Some(name))
            .count() as u32
    }

    /// `table->use`: chains and sets, not counting anonymous sets (bound
    /// to their rule, they are the rule's).
    pub fn table_use(&self) -> u32 {
        (self.chains.len() + self.sets.iter().filter(|s| !s.is_anonymous()).count()) as u32
    }

    /// Renames every reference to chain `old` (rules, map elements), as
    /// the kernel's references follow the chain object.
    pub fn rename_refs(&mut self, old: &str, new: &str) {
        for c in &mut self.chains {
            if !c
                .rules
                .iter()
                .any(|s| s.rule.exprs.iter().any(|e| jump_target(e) == Some(old)))
            {
                continue;
            }
            for s in Arc::make_mut(&mut c.rules) {
                if s.rule.exprs.iter().any(|e| jump_target(e) == Some(old)) {
                    let r = Arc::make_mut(&mut s.rule);
                    for e in &mut r.exprs {
                        rename_in_expr(e, old, new);
                    }
                }
            }
        }
        for s in self.sets.iter_mut() {
            let hit = s
                .elems
                .values()
                .any(|e| verdict_chain(&e.data) == Some(old));
            if hit {
                let s = Arc::make_mut(s);
                for e in Arc::make_mut(&mut s.elems).values_mut() {
                    if verdict_chain(&e.data) == Some(old) {
                        if let Some(Data::Verdict(Verdict::Jump(c) | Verdict::Goto(c))) =
                            &mut e.data
                        {
                            *c = new.to_string();
                        }
                    }
                }
            }
        }
    }
}

fn rename_in_expr(e: &mut Expr, old: &str, new: &str) {
    if let Expr::Immediate {
        data: Data::Verdict(Verdict::Jump(c) | Verdict::Goto(c)),
        ..
    } = e
    {
        if c == old {
            *c = new.to_string();
        }
    }
}

/// The chain a jump or goto verdict expression names.
pub fn jump_target(e: &Expr) -> Option<&str> {
    match e {
        Expr::Immediate {
            dreg,
            data: Data::Verdict(Verdict::Jump(c) | Verdict::Goto(c)),
        } if *dreg == reg::VERDICT => Some(c),
        _ => None,
    }
}

/// The set a lookup expression names.
pub fn lookup_set(e: &Expr) -> Option<&str> {
    match e {
        Expr::Lookup { set, .. } => Some(set),
        _ => None,
    }
}

/// The chain a verdict element jumps or goes to.
pub fn verdict_chain(d: &Option<Data>) -> Option<&str> {
    match d {
        Some(Data::Verdict(Verdict::Jump(c) | Verdict::Goto(c))) => Some(c),
        _ => None,
    }
}

impl Ruleset {
    pub fn table(&self, family: Family, name: &str) -> Option<usize> {
        self.tables
            .iter()
            .position(|t| t.family == family && t.name == name)
    }

    pub fn table_by_handle(&self, handle: u64) -> Option<usize> {
        self.tables.iter().position(|t| t.handle == handle)
    }

    /// Drops the rules deleted by the batch and the holes of deleted
    /// chains and sets (at commit).
    pub fn sweep(&mut self) {
        for t in &mut self.tables {
            t.chains.compact();
            t.sets.compact();
            for c in t.chains.iter_mut() {
                if c.rules.iter().any(|s| s.gone) {
                    Arc::make_mut(&mut c.rules).retain(|s| !s.gone);
                }
            }
        }
    }
}

/// Hook names, for text (per family, as nft spells them).
pub fn hook_name(family: Family, num: u32) -> String {
    let names: &[&str] = match family {
        Family::Arp => &["input", "output", "forward"],
        Family::Netdev => &["ingress", "egress"],
        _ => &[
            "prerouting",
            "input",
            "forward",
            "output",
            "postrouting",
            "ingress",
        ],
    };
    names
        .get(num as usize)
        .map(|s| s.to_string())
        .unwrap_or_else(|| format!("hook{num}"))
}

/// `nft`'s family keyword.
pub fn family_name(f: Family) -> &'static str {
    match f {
        Family::Unspec => "unspec",
        Family::Inet => "inet",
        Family::Ipv4 => "ip",
        Family::Arp => "arp",
        Family::Netdev => "netdev",
        Family::Bridge => "bridge",
        Family::Ipv6 => "ip6",
    }
}

//! The rule side of ipsets: iptables rules that name nfkeeper's ipsets
//! (`-m set`, `-j SET`) look up a *copy* of the set in their own table
//! (see [`super`]). Here: which sets the writes of a transaction name and
//! reading them ([`prepare`]), the lowering's view of them (the
//! [`compile::Ipsets`] of [`Sets`]), the copy a rule's table gets in the
//! rule's batch ([`Planner::ensure_ipset_copy`]), and removing copies no
//! rule uses any more ([`collect`]).
//!
//! Copies go after the commit that removed their last rule, each in a
//! batch of its own: the kernel refuses (EBUSY) to delete a set a rule is
//! bound to, which is the exact "no rule uses it" test without reading
//! every rule of the table. A copy a concurrent writer starts using in
//! between is kept for the same reason.

use super::meta::{Role, SetMeta};
use super::mirror::{member_elems, new_set, KernelMirror};
use super::read::{self, copy_at, install};
use super::Sets;
use crate::plan::{Pending, Planner};
use crate::state::State;
use crate::txn::{Work, Write};
use compile::ipset::set_spec;
use compile::{IpsetInfo, Ipsets};
use iptables::ext::{Match, TargetExt};
use iptables::{Error, Rule, Target};
use nft::{SetElems, Socket};
use ruleset::{Family, TableKind};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Options whose argument names an ipset (`-m set`, `-j SET`).
const NAME_OPTS: [&str; 4] = ["--match-set", "--add-set", "--del-set", "--map-set"];

/// The ipsets `rule` names.
pub fn rule_names(rule: &Rule) -> Vec<&str> {
    let mut out: Vec<&str> = rule
        .matches
        .iter()
        .filter_map(|m| match m {
            Match::Set(s) => Some(s.name.as_str()),
            _ => None,
        })
        .collect();
    if let Target::Ext(t) = &rule.target {
        if let TargetExt::Set(s) = &**t {
            for r in [&s.add, &s.del, &s.map].into_iter().flatten() {
                out.push(r.name.as_str());
            }
        }
    }
    out
}

/// The words after an option that names an ipset in restore `input`
/// (a superset of the sets its rules name: a stray word only costs a
/// lookup).
pub fn text_names(input: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    // Every name option ends in `-set` and a blank: an input without one
    // (nearly every one; kube-proxy's has `--set-xmark`) is not split into
    // words (a kube-proxy sync is megabytes).
    let named = input.match_indices("-set").any(|(i, m)| {
        let end = i + m.len();
        input[end..].starts_with(|c: char| c.is_ascii_whitespace())
            && NAME_OPTS.iter().any(|o| input[..end].ends_with(o))
    });
    if !named {
        return out;
    }
    let mut words = input.split_whitespace();
    while let Some(w) = words.next() {
        if NAME_OPTS.contains(&w) {
            if let Some(n) = words.next() {
                out.insert(n.trim_matches('"').to_string());
            }
        }
    }
    out
}

/// The ipsets the writes' rules name and the rules of the model name
/// (rules a restore may write again); for each, the tables a new rule of
/// it goes to (`None`: not known, e.g. a restore's).
fn needed(st: &State, writes: &[&Write]) -> Vec<(String, Option<(Family, TableKind)>)> {
    // In order, once each: a set of what is in `out` (a full sync names
    // 20k chains; a linear search per name was quadratic).
    let mut out: Vec<(String, Option<(Family, TableKind)>)> = Vec::new();
    let mut have: HashMap<Option<(Family, TableKind)>, HashSet<String>> = HashMap::new();
    let mut put = |n: &str, at: Option<(Family, TableKind)>| {
        let names = have.entry(at).or_default();
        if !names.contains(n) {
            names.insert(n.to_string());
            out.push((n.to_string(), at));
        }
    };
    for w in writes {
        match &w.work {
            Work::Cmds(cmds) => {
                for p in cmds {
                    for r in &p.rules {
                        for n in rule_names(r) {
                            put(n, Some((w.family, p.table)));
                        }
                    }
                }
            }
            Work::Restore(r) => {
                for n in text_names(&r.input) {
                    put(&n, None);
                }
            }
            _ => {}
        }
    }
    // Rules already in the model matter to a write that may write them
    // again (a restore) or remove them (their copies may go): only then
    // are they scanned, O(rules of the chains or tables it may remove
    // from) — a delete in one chain of a big table scans that chain.
    let mut scan: Vec<Removing> = Vec::new();
    let mut seen: HashSet<Removing> = HashSet::new();
    for w in writes {
        for t in removing_scopes(w) {
            if seen.insert(t.clone()) {
                scan.push(t);
            }
        }
    }
    // A table scanned whole needs no scan of its chains or rules.
    let whole: Vec<(Family, TableKind)> = scan
        .iter()
        .filter(|r| r.chain.is_none())
        .map(|r| (r.family, r.kind))
        .collect();
    scan.retain(|r| r.chain.is_none() || !whole.contains(&(r.family, r.kind)));
    for r in scan {
        if !st.exists(r.family, r.kind) {
            continue;
        }
        let t = st.model.table(r.family, r.kind);
        let mut names = |body: &iptables::Rule| {
            for n in rule_names(body) {
                put(n, Some((r.family, r.kind)));
            }
        };
        match (r.chain.as_deref(), r.pos) {
            (None, _) => t.bodies().for_each(&mut names),
            (Some(c), None) => {
                for v in t.rules(c).into_iter().flatten() {
                    names(v.body);
                }
            }
            (Some(c), Some(n)) => {
                if let Ok(v) = t.rule_at(c, n) {
                    names(v.body);
                }
            }
        }
    }
    out
}

/// Rules a write may remove: a whole table (`chain: None`), a chain's
/// rules, or the rule at 1-based `pos` of a chain.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Removing {
    family: Family,
    kind: TableKind,
    chain: Option<String>,
    pos: Option<usize>,
}

/// Where `w` may remove rules ([`removing_tables`], narrowed for commands
/// naming one chain or one rule). A delete by rule spec names no rule of
/// the model: the spec's own set names are what its rule names.
fn removing_scopes(w: &Write) -> Vec<Removing> {
    use iptables::parse::Command as C;
    if let Work::Restore(r) = &w.work {
        if r.noflush {
            if let Some(v) = noflush_removing(w.family, &r.input, r.table) {
                return v;
            }
        }
    }
    let Work::Cmds(cmds) = &w.work else {
        return removing_tables(w)
            .into_iter()
            .map(|(family, kind)| Removing {
                family,
                kind,
                chain: None,
                pos: None,
            })
            .collect();
    };
    let mut out = Vec::new();
    for p in cmds {
        let (chain, pos) = match &p.command {
            C::DeleteNum(c, n) | C::Replace(c, n) => (Some(c.clone()), Some(*n)),
            C::Flush(c) | C::DeleteChain(c) => (c.clone(), None),
            _ => continue,
        };
        let r = Removing {
            family: w.family,
            kind: p.table,
            chain,
            pos,
        };
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// What a `--noflush` restore may remove: the user chains its `:CHAIN`
/// lines flush (a built-in's line only sets its policy), when its other
/// lines only add (`-A`, `-I`, `-N`, `-P`, `-Z`); `None` (scan its tables
/// whole) for any line that deletes, replaces, flushes or renames. The
/// daemon's model is whole, so this keeps an add-on restore from scanning
/// a table of 150k rules. O(input).
fn noflush_removing(family: Family, input: &str, only: Option<TableKind>) -> Option<Vec<Removing>> {
    let mut out: Vec<Removing> = Vec::new();
    let mut seen: HashSet<(TableKind, &str)> = HashSet::new();
    for (kind, line) in crate::scope::table_lines(input, only) {
        if let Some(decl) = line.strip_prefix(':') {
            let name = decl.split_ascii_whitespace().next().unwrap_or("");
            if !kind.builtin_chains().contains(&name) && seen.insert((kind, name)) {
                out.push(Removing {
                    family,
                    kind,
                    chain: Some(name.to_string()),
                    pos: None,
                });
            }
            continue;
        }
        // A counters prefix (`[p:b] -A …`) before the command.
        let body = match line.strip_prefix('[') {
            Some(rest) => rest.split_once(']').map_or("", |(_, b)| b).trim_start(),
            None => line,
        };
        let cmd = body.split_ascii_whitespace().next().unwrap_or("");
        let adds = matches!(
            cmd,
            "" | "COMMIT"
                | "-A"
                | "--append"
                | "-I"
                | "--insert"
                | "-N"
                | "--new-chain"
                | "-P"
                | "--policy"
                | "-Z"
                | "--zero"
        ) || cmd.starts_with('#');
        if !adds {
            return None;
        }
    }
    Some(out)
}

/// Read the ipsets that `writes` and the rules already in `st`'s model
/// name into `st.ipset` (header and copies; every member when a copy may
/// have to be made). Call after the rule tables are read. Cost: nothing
/// when no rule names a set; else per set one GET, its copies (see
/// [`read::copies`]), and an element dump when a table lacks its copy.
pub fn prepare(
    sock: &mut Socket,
    st: &mut State,
    writes: &[&Write],
    now: u64,
) -> Result<(), nft::Error> {
    st.ipset.for_rules = true;
    let needed = needed(st, writes);
    if needed.is_empty() {
        return Ok(());
    }
    let mut tables: Option<Vec<(Family, TableKind)>> = None;
    let sets = &mut st.ipset;
    for (name, at) in needed {
        if !sets.places.contains_key(&name) {
            let Some(m) = read::home(sock, &name)? else {
                // Not ours: maybe the kernel ipset module's.
                if !sets.kernel.contains_key(&name) {
                    if let Some(i) = nft::ipset_index::lookup(&name).map_err(nft::Error::Io)? {
                        sets.kernel.insert(name.clone(), i);
                    }
                }
                continue;
            };
            sets.table = true;
            let t = match &tables {
                Some(t) => t,
                None => tables.insert(read::rule_tables(sock)?),
            };
            let copies = read::copies(sock, &name, m.header.family, t)?;
            install(sets, &name, m, copies);
        }
        let Some(place) = sets.places.get(&name) else {
            continue;
        };
        let has_copy = at.is_some_and(|(f, k)| place.copies.iter().any(|c| (c.0, c.1) == (f, k)));
        if !has_copy {
            super::txn::full(sock, sets, &name, now)?;
        }
    }
    Ok(())
}

/// The ipsets `names` as the lowering sees them, headers only (for
/// `verify`): one GET per name, and a kernel ipset index for names that
/// are not ours.
pub fn catalog(sock: &mut Socket, names: &BTreeSet<String>) -> Result<Sets, nft::Error> {
    let mut sets = Sets {
        for_rules: true,
        ..Sets::default()
    };
    for name in names {
        match read::home(sock, name)? {
            Some(m) => install(&mut sets, name, m, Vec::new()),
            None => {
                if let Some(i) = nft::ipset_index::lookup(name).map_err(nft::Error::Io)? {
                    sets.kernel.insert(name.clone(), i);
                }
            }
        }
    }
    Ok(sets)
}

impl Ipsets for Sets {
    fn info(&self, name: &str) -> IpsetInfo<'_> {
        match self.store.get(name) {
            _ if !self.for_rules => IpsetInfo::Unknown,
            Some(s) if self.places.contains_key(name) => IpsetInfo::Ours(&s.header),
            _ => match self.kernel.get(name) {
                Some(&i) => IpsetInfo::Kernel(i),
                None => IpsetInfo::Missing,
            },
        }
    }
}

impl Sets {
    /// Forget the copies in table `k` of family `f` (a batch deletes it).
    pub fn forget_copies(&mut self, f: Family, k: TableKind) {
        for p in self.places.values_mut() {
            p.copies.retain(|c| (c.0, c.1) != (f, k));
        }
    }
}

impl Planner<'_> {
    /// Make sure table `kind` holds a copy of ipset `name` (read whole,
    /// see [`prepare`]): else NEWSET of the copy with every member, in
    /// the batch being built.
    pub(crate) fn ensure_ipset_copy(&mut self, kind: TableKind, name: &str) -> Result<(), Error> {
        let family = self.family;
        let tag = self.p.tag;
        let Some(sets) = self.ipsets.as_deref_mut() else {
            return Ok(());
        };
        let Some(place) = sets.places.get(name) else {
            return Err(Error::param(format!("Set {name} doesn't exist.\n")));
        };
        if place.copies.iter().any(|c| (c.0, c.1) == (family, kind)) {
            return Ok(());
        }
        if !place.full {
            return Err(Error::other(format!(
                "ipset {name} was not read whole to copy it into table {}",
                compile::layout::table_name(kind)
            )));
        }
        let (Some(set), Some(slot)) = (sets.store.get(name), sets.store.slot_index(name)) else {
            return Err(Error::param(format!("Set {name} doesn't exist.\n")));
        };
        let h = set.header.clone();
        let spec = set_spec(&h).map_err(|e| Error::other(e.to_string()))?;
        let entries = KernelMirror::all_entries(set);
        let elems =
            member_elems(&spec, &h, &entries, false).map_err(|e| Error::other(e.to_string()))?;
        let (fam, table) = copy_at(family, kind);
        let m = SetMeta {
            role: Role::Copy,
            slot,
            header: h,
        };
        let mut s = new_set(fam, &table, name, &spec, &m);
        let p: &mut Pending = self.p;
        let id = p.alloc_set_id();
        s.id = Some(id);
        p.batch.create(&s, tag);
        if !elems.is_empty() {
            let mut es = SetElems::new(fam, &table, name, elems);
            es.set_id = Some(id);
            p.batch.add(&es, tag);
        }
        if let Some(place) = sets.places.get_mut(name) {
            place.copies.push((family, kind, spec));
        }
        Ok(())
    }
}

/// After a commit that may have removed rules of `tables`: delete the
/// copies there that no rule uses (the kernel refuses, EBUSY, for one a
/// rule is bound to; that one stays). The candidates are the copies
/// [`prepare`] found for the sets the rules it read name, which include
/// every rule a command removes (it reads them to remove them). Best
/// effort: a failure leaves a copy that a later removal or `ipset
/// destroy` takes away. Cost: nothing without candidates; else one batch
/// per copy in use + 1.
pub fn collect(sock: &mut Socket, st: &mut State, tables: &[(Family, TableKind)]) {
    for &(f, k) in tables {
        let (fam, tname) = copy_at(f, k);
        let mut names: Vec<String> = st
            .ipset
            .places
            .iter()
            .filter(|(_, p)| p.copies.iter().any(|c| (c.0, c.1) == (f, k)))
            .map(|(n, _)| n.clone())
            .collect();
        names.sort();
        while !names.is_empty() {
            let mut b = sock.batch(None);
            for (i, n) in names.iter().enumerate() {
                b.delete(&nft::Set::new(fam, &tname, n), i as nft::Tag);
            }
            let Ok(rep) = sock.commit(&mut b) else { break };
            if rep.outcome.is_ok() {
                for n in &names {
                    if let Some(p) = st.ipset.places.get_mut(n) {
                        p.copies.retain(|c| (c.0, c.1) != (f, k));
                    }
                }
                break;
            }
            // Drop the refused copy (in use, or gone) and try the rest.
            match rep.outcome.errors.first().and_then(|e| e.tag) {
                Some(t) if (t as usize) < names.len() => {
                    names.remove(t as usize);
                }
                _ => break,
            }
        }
    }
}

/// The tables whose rules `w` may remove (where [`collect`] looks).
pub fn removing_tables(w: &Write) -> Vec<(Family, TableKind)> {
    use iptables::parse::Command as C;
    let mut out = Vec::new();
    match &w.work {
        Work::Cmds(cmds) => {
            for p in cmds {
                let removes = matches!(
                    p.command,
                    C::Delete(_)
                        | C::DeleteNum(..)
                        | C::Flush(_)
                        | C::DeleteChain(_)
                        | C::Replace(..)
                );
                if removes && !out.contains(&(w.family, p.table)) {
                    out.push((w.family, p.table));
                }
            }
        }
        Work::Restore(r) => {
            for k in crate::scope::restore_tables(&r.input, r.table) {
                out.push((w.family, k));
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a `--noflush` restore may remove: (input, the (table, chain)
    /// pairs it flushes, or `None` for its tables whole).
    type Case = (
        &'static str,
        Option<&'static [(&'static str, &'static str)]>,
    );

    /// The ipsets a restore input names, whether or not its text has other
    /// words ending in `-set`.
    #[test]
    fn text_names_finds_every_name_option() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("-A X -j MARK --set-xmark 0x4000/0x4000\n", &[]),
            ("-A X -m comment --comment my-set -j ACCEPT\n", &[]),
            ("-A X -m set --match-set a src -j ACCEPT\n", &["a"]),
            ("-A X -m set --match-set\tb src\n", &["b"]),
            (
                "-A X -j MARK --set-xmark 1\n-A Y -j SET --add-set c src --del-set \"d\" dst\n",
                &["c", "d"],
            ),
            ("-A X -j SET --map-set e src --map-mark\n", &["e"]),
            ("-A X --match-set", &[]),
        ];
        for (input, want) in cases {
            let got: Vec<String> = text_names(input).into_iter().collect();
            assert_eq!(got, *want, "{input:?}");
        }
    }

    #[test]
    fn noflush_restores_remove_only_the_chains_they_declare() {
        let cases: &[Case] = &[
            (
                "*nat\n:KUBE-SVC-A - [0:0]\n:PREROUTING ACCEPT [0:0]\n\
                 -A KUBE-SERVICES -d 10.0.0.1/32 -j KUBE-SVC-A\n[1:2] -A KUBE-SVC-A -j ACCEPT\nCOMMIT\n",
                Some(&[("nat", "KUBE-SVC-A")]),
            ),
            (
                "*filter\n-I INPUT 1 -j ACCEPT\n-N X\n-P FORWARD DROP\n-Z\n# a comment\nCOMMIT\n\
                 *nat\n:S - [0:0]\nCOMMIT\n",
                Some(&[("nat", "S")]),
            ),
            ("*filter\n:A - [0:0]\n-D INPUT 1\nCOMMIT\n", None),
            ("*filter\n-R INPUT 1 -j DROP\nCOMMIT\n", None),
            ("*filter\n-F\nCOMMIT\n", None),
            ("*filter\n-E A B\n:B - [0:0]\nCOMMIT\n", None),
            ("*filter\n-X A\nCOMMIT\n", None),
            ("*filter\n[0:0] --delete INPUT -j DROP\nCOMMIT\n", None),
        ];
        for (input, want) in cases {
            let got = noflush_removing(Family::Ipv4, input, None).map(|v| {
                v.into_iter()
                    .map(|r| {
                        assert_eq!(r.pos, None);
                        (r.kind.name(), r.chain.unwrap_or_default())
                    })
                    .collect::<Vec<_>>()
            });
            let want = want.map(|w| {
                w.iter()
                    .map(|(k, c)| (*k, c.to_string()))
                    .collect::<Vec<_>>()
            });
            assert_eq!(got, want, "{input}");
        }
    }
}

//! Reading ipsets from the kernel into the model: headers from the home
//! sets' userdata, members from their elements (all of them, or only the
//! ones a command probes), copies from the rule tables.
//!
//! Costs (kernel requests): a set's header, 1 GET; every header, 1 dump of
//! the home table's sets; its copies, 1 table dump + 1 GET per rule table
//! of its family; all members, 1 element dump per location (O(n)); a
//! probed member, 1 GET per location (2 for an interval set without
//! concatenation: its start and its end marker).

use super::elems::{self, split_interval};
use super::meta::{self, Role, SetMeta};
use super::{Place, Sets, FAMILY, TABLE};
use compile::ipset::{element_key, set_spec, SetSpec};
use ipset::addr::Family as SetFamily;
use ipset::model::{Entry, Ext, Header, Key};
use nft::{SetElem, SetElems, Socket};
use ruleset::{Family, TableKind};
use std::collections::{HashMap, HashSet};

type R<T> = Result<T, nft::Error>;

fn absent_is_empty<T: Default>(r: R<T>) -> R<T> {
    match r {
        Err(nft::Error::Kernel { code, .. }) if code == -libc::ENOENT => Ok(T::default()),
        other => other,
    }
}

/// The home set `name`'s metadata, if it exists and is ours.
pub fn home(sock: &mut Socket, name: &str) -> R<Option<SetMeta>> {
    let s = absent_is_empty(sock.get(&nft::Set::new(FAMILY, TABLE, name)))?;
    Ok(
        s.and_then(|s| s.userdata.as_deref().and_then(meta::decode_set))
            .filter(|m| m.role == Role::Home),
    )
}

/// Every home set (name and metadata); whether the home table exists.
pub fn homes(sock: &mut Socket) -> R<(bool, Vec<(String, SetMeta)>)> {
    match sock.sets(FAMILY, Some(TABLE)) {
        Ok(sets) => Ok((
            true,
            sets.into_iter()
                .filter_map(|s| {
                    let m = meta::decode_set(s.userdata.as_deref()?)?;
                    (m.role == Role::Home).then_some((s.name, m))
                })
                .collect(),
        )),
        Err(nft::Error::Kernel { code, .. }) if code == -libc::ENOENT => Ok((false, Vec::new())),
        Err(e) => Err(e),
    }
}

/// Our rule tables that exist (one dump of all tables).
pub fn rule_tables(sock: &mut Socket) -> R<Vec<(Family, TableKind)>> {
    let mut out = Vec::new();
    for t in sock.tables(nft::Family::Unspec)? {
        let family = match t.family {
            nft::Family::Ipv4 => Family::Ipv4,
            nft::Family::Ipv6 => Family::Ipv6,
            _ => continue,
        };
        if let Some(k) = TableKind::ALL
            .into_iter()
            .find(|k| compile::layout::table_name(*k) == t.name)
        {
            out.push((family, k));
        }
    }
    Ok(out)
}

/// Whether a rule table of `family` may hold a copy of a set of
/// `set_family` (family-neutral sets: both).
pub fn family_fits(set_family: Option<SetFamily>, family: Family) -> bool {
    match set_family {
        None => true,
        Some(SetFamily::Inet) => family == Family::Ipv4,
        Some(SetFamily::Inet6) => family == Family::Ipv6,
    }
}

/// The copies of set `name` (of `set_family`) among `tables`, with the
/// form each was made in.
pub fn copies(
    sock: &mut Socket,
    name: &str,
    set_family: Option<SetFamily>,
    tables: &[(Family, TableKind)],
) -> R<Vec<(Family, TableKind, SetSpec)>> {
    let mut out = Vec::new();
    for &(f, k) in tables {
        if !family_fits(set_family, f) {
            continue;
        }
        let key = nft::Set::new(
            compile::layout::nft_family(f),
            &compile::layout::table_name(k),
            name,
        );
        let Some(s) = absent_is_empty(sock.get(&key))? else {
            continue;
        };
        let Some(m) = s.userdata.as_deref().and_then(meta::decode_set) else {
            continue;
        };
        if m.role == Role::Copy {
            if let Ok(spec) = set_spec(&m.header) {
                out.push((f, k, spec));
            }
        }
    }
    Ok(out)
}

/// Where a copy is, for requests.
pub fn copy_at(f: Family, k: TableKind) -> (nft::Family, String) {
    (
        compile::layout::nft_family(f),
        compile::layout::table_name(k),
    )
}

/// Every member of set `name` (header `h`, form `spec`): the home's
/// elements with the copies' counters added, and the members packet-path
/// adds (`-j SET`) put only into a copy; also the copies' counters per
/// member.
#[allow(clippy::type_complexity)]
pub fn members(
    sock: &mut Socket,
    name: &str,
    h: &Header,
    spec: &SetSpec,
    copies: &[(Family, TableKind, SetSpec)],
    now: u64,
) -> R<(Vec<(Key, Ext)>, HashMap<Key, (u64, u64)>)> {
    let home = sock.set_elems(FAMILY, TABLE, name)?;
    let mut members = elems::from_elems(spec, h, home, now);
    let mut in_copies: HashMap<Key, (u64, u64)> = HashMap::new();
    let mut seen: HashSet<Key> = HashSet::new();
    for (f, k, cspec) in copies {
        if !h.counters && !dynamic(cspec) {
            continue;
        }
        if seen.is_empty() {
            seen = members.iter().map(|(k, _)| k.clone()).collect();
        }
        let (fam, t) = copy_at(*f, *k);
        let es = absent_is_empty(sock.set_elems(fam, &t, name))?;
        let found = elems::from_elems(cspec, h, es, now);
        absorb_copy(h, found, &mut members, &mut in_copies, |k| {
            seen.insert(k.clone())
        });
    }
    add_counters(&mut members, &in_copies);
    Ok((members, in_copies))
}

/// Whether a copy of form `spec` may hold members only it has (packet-path
/// adds need a set without intervals, see `compile::lower::targets::set`).
fn dynamic(spec: &SetSpec) -> bool {
    !spec.interval
}

/// One copy's elements (`found`) into a set's reading: their counters
/// summed per member into `in_copies` (when the set counts), and each
/// member `is_new` says the reading lacks added to `members` with zero
/// counters (a packet-path add that reached only this copy).
fn absorb_copy(
    h: &Header,
    found: Vec<(Key, Ext)>,
    members: &mut Vec<(Key, Ext)>,
    in_copies: &mut HashMap<Key, (u64, u64)>,
    mut is_new: impl FnMut(&Key) -> bool,
) {
    for (key, x) in found {
        if h.counters {
            let c = in_copies.entry(key.clone()).or_default();
            c.0 += x.packets;
            c.1 += x.bytes;
        }
        if is_new(&key) {
            members.push((
                key,
                Ext {
                    packets: 0,
                    bytes: 0,
                    ..x
                },
            ));
        }
    }
}

fn add_counters(members: &mut [(Key, Ext)], in_copies: &HashMap<Key, (u64, u64)>) {
    for (k, x) in members.iter_mut() {
        if let Some((p, b)) = in_copies.get(k) {
            x.packets += p;
            x.bytes += b;
        }
    }
}

/// The elements of one location equal to, or containing, member `probe`.
fn get_one(
    sock: &mut Socket,
    fam: nft::Family,
    table: &str,
    name: &str,
    spec: &SetSpec,
    h: &Header,
    probe: &Key,
) -> R<Vec<SetElem>> {
    let e = Entry {
        key: probe.clone(),
        timeout: None,
        counters: None,
        comment: None,
        skbmark: None,
        skbprio: None,
        skbqueue: None,
        nomatch: false,
        wildcard: false,
    };
    let Ok(k) = element_key(spec, h, &e) else {
        return Ok(Vec::new());
    };
    let get = |sock: &mut Socket, el: SetElem| -> R<Vec<SetElem>> {
        let q = SetElems::new(fam, table, name, vec![el]);
        Ok(absent_is_empty(sock.get(&q))?
            .map(|l| l.elems)
            .unwrap_or_default())
    };
    let mut first = SetElem::key(&k.start);
    if !split_interval(spec) {
        first.key_end = k.end;
        return get(sock, first);
    }
    let mut found = get(sock, first)?;
    if found.is_empty() {
        return Ok(found);
    }
    let mut end = SetElem::key(&k.start);
    end.flags = Some(nft::setelem::F_INTERVAL_END);
    found.extend(get(sock, end)?);
    Ok(found)
}

/// The members among `probes` (or containing them, for net types) of set
/// `name`, as [`members`] reads them.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn probe(
    sock: &mut Socket,
    name: &str,
    h: &Header,
    spec: &SetSpec,
    copies: &[(Family, TableKind, SetSpec)],
    probes: &[Key],
    now: u64,
) -> R<(Vec<(Key, Ext)>, HashMap<Key, (u64, u64)>)> {
    let mut members: Vec<(Key, Ext)> = Vec::new();
    let mut in_copies: HashMap<Key, (u64, u64)> = HashMap::new();
    for p in probes {
        let found = get_one(sock, FAMILY, TABLE, name, spec, h, p)?;
        let mut home_has = false;
        for m in elems::from_elems(spec, h, found, now) {
            home_has = true;
            if !members.iter().any(|(k, _)| *k == m.0) {
                members.push(m);
            }
        }
        for (f, k, cspec) in copies {
            if !h.counters && (home_has || !dynamic(cspec)) {
                continue;
            }
            let (fam, t) = copy_at(*f, *k);
            let found = get_one(sock, fam, &t, name, cspec, h, p)?;
            let found = elems::from_elems(cspec, h, found, now);
            let mut known: HashSet<Key> = members.iter().map(|(m, _)| m.clone()).collect();
            absorb_copy(h, found, &mut members, &mut in_copies, |k| {
                known.insert(k.clone())
            });
        }
    }
    add_counters(&mut members, &in_copies);
    Ok((members, in_copies))
}

/// Put set `name` with `meta` into `sets` (header, copies), without
/// members.
pub fn install(sets: &mut Sets, name: &str, m: SetMeta, copies: Vec<(Family, TableKind, SetSpec)>) {
    if sets.store.load(m.slot, name, m.header, 0).is_ok() {
        sets.places.insert(
            name.to_string(),
            Place {
                copies,
                full: false,
                copy_counters: HashMap::new(),
            },
        );
    }
}

/// Put members read of set `name` into `sets`.
pub fn install_members(
    sets: &mut Sets,
    name: &str,
    members: Vec<(Key, Ext)>,
    in_copies: HashMap<Key, (u64, u64)>,
    full: bool,
) {
    for (k, x) in members {
        sets.store.load_member(name, k, x);
    }
    if let Some(p) = sets.places.get_mut(name) {
        p.full |= full;
        p.copy_counters.extend(in_copies);
    }
}

/// The rule tables holding a copy of any of `names` (each once, in order).
pub fn rule_tables_of(sets: &Sets, names: &[String]) -> Vec<(Family, TableKind)> {
    let mut out: Vec<(Family, TableKind)> = names
        .iter()
        .filter_map(|n| sets.places.get(n))
        .flat_map(|p| p.copies.iter().map(|c| (c.0, c.1)))
        .collect();
    out.sort();
    out.dedup();
    out
}

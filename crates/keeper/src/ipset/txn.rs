//! ipset invocations through the transaction core: what each must read
//! ([`prepare`]), and a group of them planned and committed as one
//! transaction ([`commit`]) — with the generation id the reads saw, a
//! write the kernel refuses answered with ipset's words and the others
//! replayed, a generation conflict replayed after reading again.

use super::mirror::{word, KernelMirror, Trail};
use super::read::{self, install, install_members};
use super::refs;
use super::{Job, Sets};
use crate::error::Error;
use crate::plan::Pending;
use crate::state::State;
use crate::txn::{Done, Source, Stats, Work, Write};
use ipset::exec::{self, Ctx, Output};
use ipset::model::{expand, Adt, Key};
use ipset::parse::{restore, verb, Cmd, Command};
use ipset::types::SetType;
use nft::{Socket, Tag};
use ruleset::{Family, TableKind};
use std::collections::BTreeSet;
use std::time::Instant;

/// At most this many members are probed one by one (GETs); a command that
/// names more reads the whole set (one dump).
const PROBES: u128 = 64;

/// What one invocation needs of set `name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Depth {
    /// Header and copies.
    Header,
    /// Also these members (decided once the header is known).
    Probe,
    /// Every member.
    Full,
}

/// The sets an invocation names and how deeply it needs each; whether it
/// needs every set's header (and at which depth).
#[derive(Default)]
struct Needs {
    named: Vec<(String, Depth)>,
    all: Option<Depth>,
    /// Whether the listing prints headers (`References:`: see [`refs`]).
    refs: bool,
}

impl Needs {
    fn name(&mut self, n: &str, d: Depth) {
        match self.named.iter_mut().find(|(x, _)| x == n) {
            Some((_, old)) => *old = (*old).max(d),
            None => self.named.push((n.to_string(), d)),
        }
    }

    fn all(&mut self, d: Depth) {
        self.all = Some(self.all.map_or(d, |o| o.max(d)));
    }

    fn verb(&mut self, cmd: Cmd, names: &[String]) {
        let one = names.first();
        match (cmd, one) {
            (Cmd::Create, Some(n)) => {
                self.all(Depth::Header);
                self.name(n, Depth::Header);
            }
            (Cmd::Add | Cmd::Del | Cmd::Test, Some(n)) => self.name(n, Depth::Probe),
            (Cmd::List | Cmd::Save, Some(n)) => self.name(n, Depth::Full),
            (Cmd::List | Cmd::Save, None) => self.all(Depth::Full),
            (Cmd::Destroy | Cmd::Flush, Some(n)) => self.name(n, Depth::Header),
            (Cmd::Destroy | Cmd::Flush, None) => self.all(Depth::Header),
            (Cmd::Rename, _) => {
                if let Some(a) = names.first() {
                    self.name(a, Depth::Full);
                }
                if let Some(b) = names.get(1) {
                    self.name(b, Depth::Header);
                }
            }
            (Cmd::Swap, _) => {
                for n in names {
                    self.name(n, Depth::Full);
                }
            }
            _ => {}
        }
    }
}

fn needs_of(job: &Job) -> Needs {
    let mut n = Needs::default();
    let args: Vec<&str> = job.args.iter().map(String::as_str).collect();
    let Some((cmd, names)) = verb(&args) else {
        return n;
    };
    // `list -name` prints names only: headers are enough (a set of 1M
    // members is not read).
    let names_only = args
        .iter()
        .any(|a| matches!(a.trim_start_matches('-'), "n" | "name") && a.starts_with('-'));
    if cmd == Cmd::List && names_only {
        match names.first() {
            Some(x) => n.name(x, Depth::Header),
            None => n.all(Depth::Header),
        }
        return n;
    }
    if cmd != Cmd::Restore {
        n.verb(cmd, &names);
        n.refs = cmd == Cmd::List;
        return n;
    }
    // A restore: every set its lines name, whole (its adds may meet
    // members), and every header (its creates take free slots).
    n.all(Depth::Header);
    for (_, line) in restore::lines(job.input.as_deref().unwrap_or("")) {
        let restore::Line::Command(text) = line else {
            continue;
        };
        let Ok(w) = restore::words(text) else {
            continue;
        };
        let w: Vec<&str> = w.iter().map(String::as_str).collect();
        if let Some((cmd, names)) = verb(&w) {
            if cmd != Cmd::Create {
                for x in &names {
                    n.name(x, Depth::Full);
                }
            }
        }
    }
    n
}

/// Read into `sets` what `job` needs, at the clock time `now`; a listing's
/// references are counted in `rules`.
pub fn prepare(
    sock: &mut Socket,
    sets: &mut Sets,
    job: &Job,
    now: u64,
    rules: &refs::Rules,
) -> Result<(), nft::Error> {
    let needs = needs_of(job);
    let mut tables: Option<Vec<(Family, TableKind)>> = None;
    let mut load = |sock: &mut Socket,
                    sets: &mut Sets,
                    name: &str,
                    m: super::meta::SetMeta|
     -> Result<(), nft::Error> {
        if sets.places.contains_key(name) {
            return Ok(());
        }
        let t = match &tables {
            Some(t) => t,
            None => tables.insert(read::rule_tables(sock)?),
        };
        let copies = read::copies(sock, name, m.header.family, t)?;
        install(sets, name, m, copies);
        Ok(())
    };
    if let Some(depth) = needs.all {
        let (exists, homes) = read::homes(sock)?;
        sets.table = exists;
        sets.all = true;
        for (name, m) in homes {
            load(sock, sets, &name, m)?;
            if depth == Depth::Full {
                full(sock, sets, &name, now)?;
            }
        }
    }
    for (name, depth) in &needs.named {
        if !sets.places.contains_key(name) {
            match read::home(sock, name)? {
                Some(m) => {
                    sets.table = true;
                    load(sock, sets, name, m)?;
                }
                None => continue,
            }
        }
        match depth {
            Depth::Header => {}
            Depth::Full => full(sock, sets, name, now)?,
            Depth::Probe => probe(sock, sets, name, job, now)?,
        }
    }
    if needs.refs {
        let names: Vec<String> = match needs.all {
            Some(_) => sets.places.keys().cloned().collect(),
            None => needs.named.iter().map(|(n, _)| n.clone()).collect(),
        };
        refs::count(sock, sets, &names, rules)?;
    }
    if !sets.table && needs.all.is_none() {
        // Creating a set needs to know whether the table is there.
        sets.table = sock
            .get(&nft::Table::new(super::FAMILY, super::TABLE))
            .map(|t| t.is_some())
            .or_else(|e| match e {
                nft::Error::Kernel { code, .. } if code == -libc::ENOENT => Ok(false),
                e => Err(e),
            })?;
    }
    Ok(())
}

/// Every member of `name` into `sets` (once).
pub(super) fn full(
    sock: &mut Socket,
    sets: &mut Sets,
    name: &str,
    now: u64,
) -> Result<(), nft::Error> {
    let Some(place) = sets.places.get(name) else {
        return Ok(());
    };
    if place.full {
        return Ok(());
    }
    let Some(h) = sets.store.get(name).map(|s| s.header.clone()) else {
        return Ok(());
    };
    let Ok(spec) = compile::ipset::set_spec(&h) else {
        return Ok(());
    };
    let copies = place.copies.clone();
    let (members, counts) = read::members(sock, name, &h, &spec, &copies, now)?;
    install_members(sets, name, members, counts, true);
    Ok(())
}

/// The members an add/del/test of `job` touches, or all of them when
/// there are many.
fn probe(
    sock: &mut Socket,
    sets: &mut Sets,
    name: &str,
    job: &Job,
    now: u64,
) -> Result<(), nft::Error> {
    let args: Vec<&str> = job.args.iter().map(String::as_str).collect();
    let Ok(p) = exec::parse_line(&sets.store, &args) else {
        return Ok(());
    };
    let (data, adt) = match &p.cmd {
        Command::Add { data, .. } => (data, Adt::Add),
        Command::Del { data, .. } => (data, Adt::Del),
        Command::Test { data, .. } => (data, Adt::Test),
        _ => return Ok(()),
    };
    let Some(h) = sets.store.get(name).map(|s| s.header.clone()) else {
        return Ok(());
    };
    let x = match expand::expand(&h, data, adt) {
        Ok(x) => x,
        Err(_) => return Ok(()),
    };
    // bitmap:ip,mac keeps the MAC out of the key: read it whole (at most
    // 65536 members).
    if x.count() > PROBES || h.ty == SetType::BitmapIpMac {
        return full(sock, sets, name, now);
    }
    let Ok(spec) = compile::ipset::set_spec(&h) else {
        return Ok(());
    };
    let keys: Vec<Key> = x.iter().collect();
    let copies = sets.places[name].copies.clone();
    let (members, counts) = read::probe(sock, name, &h, &spec, &copies, &keys, now)?;
    install_members(sets, name, members, counts, false);
    Ok(())
}

/// Whether a command line asks for quiet.
fn quiet(args: &[String]) -> bool {
    args.iter()
        .any(|a| matches!(a.as_str(), "-q" | "-quiet" | "--q" | "--quiet"))
}

/// One ipset job on the model, mirrored into `p` with tag `tag`.
fn plan(
    sets: &mut Sets,
    p: &mut Pending,
    tag: Tag,
    job: &Job,
    now: u64,
    trail: &mut Trail,
) -> Output {
    let mut mirror = KernelMirror::new(p, tag, &mut sets.places, &mut sets.table, trail);
    let mut ctx = Ctx {
        store: &mut sets.store,
        mirror: &mut mirror,
        now,
    };
    let args: Vec<&str> = job.args.iter().map(String::as_str).collect();
    exec::run(&mut ctx, &args, job.input.as_deref())
}

/// A group of ipset writes (every write's work is [`Work::Ipset`]) as one
/// transaction; one [`Done::Ipset`] each.
pub fn commit(
    sock: &mut Socket,
    st: &mut State,
    src: &mut dyn Source,
    group: &[&Write],
    stats: &mut Stats,
) -> Vec<Done> {
    let n = group.len();
    let mut fin: Vec<Option<Output>> = (0..n).map(|_| None).collect();
    let mut attempt = 0u32;
    loop {
        let open: Vec<&Write> = (0..n)
            .filter(|i| fin[*i].is_none())
            .map(|i| group[i])
            .collect();
        if open.is_empty() {
            break;
        }
        if attempt > 0 && !src.backoff(attempt) {
            fail_open(&mut fin, group, &Error::Busy);
            break;
        }
        let genid = match src.prepare(sock, st, &open, attempt) {
            Ok(g) => g,
            Err(Error::Busy) => {
                stats.conflicts += 1;
                attempt += 1;
                continue;
            }
            Err(e) => {
                fail_open(&mut fin, group, &e);
                break;
            }
        };
        let now = super::now();
        let sets = &mut st.ipset;
        let kept = (sets.places.clone(), sets.table);
        let sp = sets.store.begin();
        let mut pending = Pending::new(sock.batch(Some(genid)));
        let mut outs: Vec<Option<Output>> = (0..n).map(|_| None).collect();
        let mut trails: Vec<Trail> = (0..n).map(|_| Trail::default()).collect();
        for (i, w) in group.iter().enumerate() {
            if fin[i].is_some() {
                continue;
            }
            let Work::Ipset(job) = &w.work else {
                outs[i] = Some(Output::default());
                continue;
            };
            let mark = pending.batch.mark();
            let before = (sets.places.clone(), sets.table);
            let o = plan(sets, &mut pending, i as Tag, job, now, &mut trails[i]);
            if o.code != 0 {
                // The model changed nothing; neither may the batch.
                pending.batch.truncate(mark);
                (sets.places, sets.table) = before;
            }
            outs[i] = Some(o);
        }
        if pending.is_empty() {
            sets.store.commit(sp);
            settle(&mut fin, &mut outs);
            break;
        }
        let t0 = Instant::now();
        let rep = sock.commit(pending.batch());
        stats.commit_time += t0.elapsed();
        match rep {
            Ok(rep) if rep.outcome.is_ok() => {
                sets.store.commit(sp);
                stats.commits += 1;
                st.genid = genid.wrapping_add(1);
                settle(&mut fin, &mut outs);
                break;
            }
            Ok(rep) => {
                sets.store.rollback(sp);
                (sets.places, sets.table) = kept;
                let first = rep.outcome.errors.first();
                match first.and_then(|e| e.tag.map(|t| (t as usize, e.code, e.seq))) {
                    Some((i, code, seq)) if i < n => {
                        let (intent, line) = trails[i]
                            .find(seq)
                            .unwrap_or((super::mirror::Intent::Add, 0));
                        let e = word(intent, -code);
                        let Work::Ipset(job) = &group[i].work else {
                            unreachable!("ipset group")
                        };
                        let mut o = Output {
                            code: e.exit_code(),
                            ..Output::default()
                        };
                        if !quiet(&job.args) {
                            o.stderr = e.render((line > 0).then_some(line));
                        }
                        fin[i] = Some(o);
                    }
                    _ => {
                        stats.conflicts += 1;
                        attempt += 1;
                    }
                }
            }
            Err(e) => {
                sets.store.rollback(sp);
                (sets.places, sets.table) = kept;
                fail_open(&mut fin, group, &Error::Unconfirmed(e.to_string()));
                break;
            }
        }
    }
    fin.into_iter()
        .map(|o| Done::Ipset(o.unwrap_or_else(|| failure(&Error::Busy, false))))
        .collect()
}

/// The output of a write that failed outside the model.
pub fn failure(e: &Error, quiet: bool) -> Output {
    let msg = match e {
        Error::Permission => "Kernel error received: Operation not permitted".to_string(),
        Error::Busy => {
            "Kernel error received: Resource temporarily unavailable (the ruleset changed concurrently; try again)"
                .to_string()
        }
        other => format!("Kernel error received: {}", other.to_iptables().msg.trim()),
    };
    let e = ipset::Error::session(msg);
    Output {
        stdout: String::new(),
        stderr: if quiet { String::new() } else { e.render(None) },
        code: e.exit_code(),
    }
}

fn fail_open(fin: &mut [Option<Output>], group: &[&Write], e: &Error) {
    for (f, w) in fin.iter_mut().zip(group) {
        if f.is_none() {
            let q = matches!(&w.work, Work::Ipset(j) if quiet(&j.args));
            *f = Some(failure(e, q));
        }
    }
}

fn settle(fin: &mut [Option<Output>], outs: &mut [Option<Output>]) {
    for (f, o) in fin.iter_mut().zip(outs.iter_mut()) {
        if f.is_none() {
            *f = Some(o.take().unwrap_or_default());
        }
    }
}

/// Names of sets `job` reads (for a caller that keeps sets warm).
pub fn named_sets(job: &Job) -> BTreeSet<String> {
    needs_of(job).named.into_iter().map(|(n, _)| n).collect()
}

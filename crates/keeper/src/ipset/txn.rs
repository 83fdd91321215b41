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
use crate::txn::{Plan, Source, Work, Write};
use ipset::exec::{self, Ctx, Output};
use ipset::model::{expand, Adt, Key};
use ipset::parse::{restore, verb, Cmd, Command};
use ipset::types::SetType;
use nft::socket::CommitReport;
use nft::{Socket, Tag};
use ruleset::{Family, TableKind};
use std::collections::BTreeSet;
use std::collections::HashMap;

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
    let mut last: Option<String> = None;
    for (_, line) in restore::lines(job.input.as_deref().unwrap_or("")) {
        let restore::Line::Command(text) = line else {
            continue;
        };
        // A run of member lines of one set (`add NAME …` without quotes or
        // options before the element) names that set again: skip it.
        if let Some(name) = last.as_deref() {
            let mut w = text.split([' ', '\t']).filter(|w| !w.is_empty());
            if matches!(w.next(), Some("add" | "del" | "test"))
                && w.next() == Some(name)
                && w.next().is_some_and(|e| !e.starts_with('-'))
                && !text.contains('"')
            {
                continue;
            }
        }
        last = None;
        let Ok(w) = restore::words(text) else {
            continue;
        };
        let w: Vec<&str> = w.iter().map(|x| x.as_ref()).collect();
        if let Some((cmd, names)) = verb(&w) {
            if cmd != Cmd::Create {
                for x in &names {
                    n.name(x, Depth::Full);
                }
            }
            if matches!(cmd, Cmd::Add | Cmd::Del | Cmd::Test) {
                last = names.into_iter().next();
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
/// transaction through the transaction core's driver (`crate::txn`): the
/// jobs run on the sets' model under one savepoint, a job that fails in
/// the model leaves nothing in the batch, a refused message is worded as
/// ipset words the kernel's error for the command and line that sent it.
pub(crate) struct IpsetPlan<'g> {
    group: &'g [&'g Write],
    /// Of the attempt being made: the model's savepoint, what the places
    /// and the home table's presence were, and each job's trail of
    /// messages (for wording a refusal).
    sp: Option<ipset::model::Savepoint>,
    kept: (HashMap<String, super::Place>, bool),
    trails: Vec<Trail>,
}

impl<'g> IpsetPlan<'g> {
    pub(crate) fn new(group: &'g [&'g Write]) -> IpsetPlan<'g> {
        IpsetPlan {
            group,
            sp: None,
            kept: (HashMap::new(), false),
            trails: Vec::new(),
        }
    }
}

impl Plan for IpsetPlan<'_> {
    type Answer = Output;

    fn plan(
        &mut self,
        st: &mut State,
        _src: &mut dyn Source,
        pending: &mut Pending,
        open: &[bool],
    ) -> Vec<Option<Output>> {
        let now = super::now();
        let sets = &mut st.ipset;
        self.kept = (sets.places.clone(), sets.table);
        self.sp = Some(sets.store.begin());
        self.trails = (0..self.group.len()).map(|_| Trail::default()).collect();
        let mut outs: Vec<Option<Output>> = (0..self.group.len()).map(|_| None).collect();
        for (i, w) in self.group.iter().enumerate() {
            if !open[i] {
                continue;
            }
            let Work::Ipset(job) = &w.work else {
                outs[i] = Some(Output::default());
                continue;
            };
            let mark = pending.batch.mark();
            let before = (sets.places.clone(), sets.table);
            let o = plan(sets, pending, i as Tag, job, now, &mut self.trails[i]);
            if o.code != 0 {
                // The model changed nothing; neither may the batch.
                pending.batch.truncate(mark);
                (sets.places, sets.table) = before;
            }
            outs[i] = Some(o);
        }
        outs
    }

    fn kept(
        &mut self,
        _sock: &mut Socket,
        st: &mut State,
        _src: &mut dyn Source,
        _pending: &Pending,
        _rep: Option<&CommitReport>,
        _answers: &[Option<Output>],
    ) {
        if let Some(sp) = self.sp.take() {
            st.ipset.store.commit(sp);
        }
    }

    /// Sets are read for each command (`prepare`), so nothing is handed
    /// to the source to read again.
    fn undone(&mut self, st: &mut State, _: &mut dyn Source, _: &Pending, _unknown: bool) {
        let sets = &mut st.ipset;
        if let Some(sp) = self.sp.take() {
            sets.store.rollback(sp);
        }
        (sets.places, sets.table) = std::mem::take(&mut self.kept);
    }

    fn refused(
        &mut self,
        _sock: &mut Socket,
        _src: &mut dyn Source,
        _pending: &Pending,
        (tag, errno, seq): (Tag, i32, u32),
    ) -> Option<Output> {
        let i = tag as usize;
        let (intent, line) = self.trails[i]
            .find(seq)
            .unwrap_or((super::mirror::Intent::Add, 0));
        let e = word(intent, errno);
        let Work::Ipset(job) = &self.group[i].work else {
            unreachable!("ipset group")
        };
        let mut o = Output {
            code: e.exit_code(),
            ..Output::default()
        };
        if !quiet(&job.args) {
            o.stderr = e.render((line > 0).then_some(line));
        }
        Some(o)
    }

    fn failed(&self, i: usize, e: &Error) -> Output {
        let q = matches!(&self.group[i].work, Work::Ipset(j) if quiet(&j.args));
        failure(e, q)
    }
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

/// Names of sets `job` reads (for a caller that keeps sets warm).
pub fn named_sets(job: &Job) -> BTreeSet<String> {
    needs_of(job).named.into_iter().map(|(n, _)| n).collect()
}

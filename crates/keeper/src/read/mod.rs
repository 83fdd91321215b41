//! Reading one of our tables back from the kernel into the model.
//!
//! Chains come from one chain dump of the table (or are fetched by name),
//! rules from one rule dump per chain that has any; each rule is rebuilt
//! from its userdata (id + canonical text), its counter expression gives
//! the counters. Cost: O(objects read) in user space; the kernel's dumps
//! dominate (a dump restarts at the head of its chain for each 32 KiB
//! reply, so a chain of n rules dumps in O(n²/~100)).

use compile::layout;
use compile::userdata::{self, catalog, catalog::Census};
use iptables::parse::{parse, restore::words, ParseOpts};
use iptables::Rule;
use nft::{Expr, Socket, Verdict};
use ruleset::{Counters, Family, Policy, RuleId, Table, TableKind};
use std::collections::{HashMap, HashSet};

mod counters;
mod dump;
pub(crate) mod registry;
mod run;
mod tail;

pub use counters::refresh_counters;
pub(crate) use dump::{counters_and_target, per_chain_dumps};
use dump::{dump_rules, KernelRule};
use run::{read_run, RunRule};
pub use tail::{tail, Tail, TailRun};

/// One table as the kernel has it.
pub struct Snapshot {
    /// Does the nftables table exist at all?
    pub exists: bool,
    pub table: Table<Rule>,
    /// Kernel handle of each rule.
    pub handles: HashMap<RuleId, u64>,
    /// Kernel handle of each chain.
    pub chain_handles: HashMap<String, u64>,
    /// Catalog chunks of each rule whose text overflows its userdata.
    pub overflow: HashMap<RuleId, u32>,
    /// Objects in our table that nfkeeper did not write (or cannot read),
    /// described for a warning.
    pub foreign: Vec<String>,
    /// Compiled runs (see `crate::runs`) and their members, in order.
    pub runs: Vec<RunSnap>,
    /// The kernel's use count of each chain read (its rules plus the
    /// references to it).
    pub chain_uses: HashMap<String, u32>,
    /// The chains whose rules were read (`None`: every chain's).
    pub rules_read: Option<Vec<String>>,
    /// Chains holding a rule the model does not have (foreign, or not
    /// rebuilt): the model's rules are not all of the kernel chain's.
    pub foreign_in: HashSet<String>,
    /// A partial read's plain rules by (chain, canonical text): a restore
    /// line with exactly that text is that rule without parsing it (see
    /// `plan::rewrite`). Empty for a whole-table read (no restore that
    /// could use it reads one: without `--noflush` the table is replaced).
    pub texts: crate::plan::ChainTexts,
    /// Run members and plain rules ending in a jump of the chains a read
    /// was told to leave unparsed ([`read_scoped_lazy`]): their canonical
    /// texts by id. Such a rule enters the model as a stand-in (its kernel
    /// jump only, which keeps the model's references right) that the
    /// planner parses from this text before anything reads or writes its
    /// body (see `plan::rewrite`).
    pub lazy: ruleset::hash::FxMap<RuleId, String>,
    /// What each run's set held, by set name, when the read was asked to
    /// keep it ([`read_table_keeping_run_elems`]); `None` otherwise.
    pub run_elems: Option<HashMap<String, Vec<SeenElem>>>,
    /// User chains read from the table's registry (see
    /// [`compile::registry`]): in the model, empty, with no kernel chain.
    pub virtual_chains: ruleset::hash::FxSet<String>,
    /// The table's registry set was seen to exist.
    pub registry: bool,
}

/// One element of a run's set as a read saw it, without its text and
/// counter (a few dozen bytes: `verify` keeps every run's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeenElem {
    pub key: Vec<u8>,
    /// An interval end marker.
    pub end: bool,
    pub verdict: Option<Verdict>,
    /// The logical rule its userdata names.
    pub id: Option<RuleId>,
}

impl SeenElem {
    pub(crate) fn of(e: &nft::SetElem) -> SeenElem {
        SeenElem {
            key: e.key.clone().unwrap_or_default(),
            end: e.flags.unwrap_or(0) & nft::setelem::F_INTERVAL_END != 0,
            verdict: match &e.data {
                Some(nft::Data::Verdict(v)) => Some(v.clone()),
                _ => None,
            },
            id: e
                .userdata
                .as_deref()
                .and_then(|u| userdata::decode(u).ok())
                .and_then(|d| d.id),
        }
    }
}

/// A compiled run as read from the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSnap {
    pub chain: String,
    pub set: String,
    pub key: compile::runs::KeyKind,
    pub map: bool,
    /// Handle of the run's kernel rule.
    pub handle: u64,
    pub members: Vec<RuleId>,
    /// The members' shape, from the run rule's userdata (when it fit).
    pub shape: Option<Rule>,
    /// Only the members equal to a probe rule were read (see
    /// [`read_scoped_probe`]): `members` is not all of them.
    pub partial: bool,
    /// What the run held when nfkeeper last wrote it (from the catalog);
    /// `None` for a run written without one.
    pub census: Option<Census>,
}

/// How much of a table a command needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Everything (listings of all chains, -Z of all chains, restore).
    Table,
    /// Every chain, no rules (-F and -X of all chains: the kernel flushes
    /// without reading, and refuses a chain delete the model can't judge).
    Chains,
    /// Only `names`, each chain fetched by name (O(1) kernel requests,
    /// independent of the table size), and the rules of the chains in
    /// `rules_of` (one rule dump each, O(rules of that chain)). Chains that
    /// the read rules jump to are known to exist (the kernel holds the
    /// reference) and enter the model empty, unread. `targets`: chains
    /// whose existence alone matters (the targets of jumps being added);
    /// fetched only when the rules read do not already show them (a
    /// kube-proxy sync rewriting KUBE-SERVICES names its 5 000 service
    /// chains, which the old KUBE-SERVICES rules all jump to).
    Part {
        names: Vec<String>,
        rules_of: Vec<String>,
        targets: Vec<String>,
    },
}

impl Scope {
    /// Only these chains, by name, without their rules.
    pub fn names(names: Vec<String>) -> Scope {
        Scope::Part {
            names,
            rules_of: Vec::new(),
            targets: Vec::new(),
        }
    }

    /// Widen `self` by what `other` needs.
    pub fn merge(&mut self, other: Scope) {
        let with_rules =
            |s: &Scope| matches!(s, Scope::Part { rules_of, .. } if !rules_of.is_empty());
        let merged = match (std::mem::replace(self, Scope::Table), other) {
            (Scope::Table, _) | (_, Scope::Table) => Scope::Table,
            // All chains without rules plus some chains' rules: only the
            // whole table covers both.
            (Scope::Chains, p) | (p, Scope::Chains) => {
                if with_rules(&p) {
                    Scope::Table
                } else {
                    Scope::Chains
                }
            }
            (
                Scope::Part {
                    mut names,
                    mut rules_of,
                    mut targets,
                },
                Scope::Part {
                    names: n2,
                    rules_of: r2,
                    targets: t2,
                },
            ) => {
                for (into, from) in [(&mut names, n2), (&mut rules_of, r2), (&mut targets, t2)] {
                    for n in from {
                        if !into.contains(&n) {
                            into.push(n);
                        }
                    }
                }
                Scope::Part {
                    names,
                    rules_of,
                    targets,
                }
            }
        };
        *self = merged;
    }
}

/// First id for rules created after a partial read (the model holds only
/// part of the table, so `max + 1` is unknown): microseconds since the
/// epoch times 256 plus a random byte. Ids then grow with time across
/// processes, which keeps members of a run (listed in id order, see
/// `crate::runs`) in the order they were appended, and two processes in
/// the same microsecond collide with odds 1/256 per id (rules of one run
/// appended in the same microsecond by two processes: none in practice, as
/// commits serialise and take longer). Below 2^61 until the year 2043.
pub fn fresh_id_base() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    let micros = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    (micros << 8) | (random & 0xff) | 1
}

/// The run sets of table `kind` (one set dump, O(its sets)): what a flush
/// of every chain must delete with the rules, and the candidates for a
/// flush of some chains ([`run_sets_used_by`]). Empty when the table does
/// not exist.
pub fn run_sets_of_table(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
) -> Result<Vec<String>, nft::Error> {
    let fam = layout::nft_family(family);
    let tname = layout::table_name(kind);
    match sock.sets(fam, Some(&tname)) {
        Ok(sets) => Ok(sets
            .into_iter()
            .filter(|s| s.table == tname && s.name.starts_with(compile::runs::SET_PREFIX))
            .map(|s| s.name)
            .collect()),
        Err(nft::Error::Kernel { code: -2, .. }) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The run sets the kernel rules of `chain` use: one rule dump of the
/// chain, O(its kernel rules, a run counting one), userdata decoded, no
/// rule text parsed. Empty when the chain does not exist.
pub fn run_sets_used_by(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
    chain: &str,
) -> Result<Vec<String>, nft::Error> {
    let fam = layout::nft_family(family);
    let tname = layout::table_name(kind);
    let mut used = Vec::new();
    let r = sock.rules(fam, Some(&tname), Some(chain), |r| {
        if r.table != tname || r.chain != chain {
            return Ok(());
        }
        let run = r
            .userdata
            .and_then(|u| userdata::decode(u).ok())
            .and_then(|d| d.run);
        if let Some((_, set)) = run {
            used.push(set);
        }
        Ok(())
    });
    match r {
        Ok(()) => Ok(used),
        Err(nft::Error::Kernel { code: -2, .. }) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// A rule body (the text after `-A CHAIN`) parsed into a rule.
pub(crate) fn parse_body(family: Family, kind: TableKind, chain: &str, text: &str) -> Option<Rule> {
    let words = words(text).ok()?;
    let mut argv: Vec<&str> = Vec::with_capacity(words.len() + 2);
    argv.extend(["-A", chain]);
    argv.extend(words.iter().map(|w| w.as_ref()));
    let o = ParseOpts {
        family,
        restore: true,
        table: Some(kind),
        prog: "nfkeeper",
    };
    let mut p = parse(&argv, o).ok()?;
    (p.rules.len() == 1).then(|| p.rules.remove(0))
}

/// Read table `kind` of `family`, all of it.
pub fn read_table(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
) -> Result<Snapshot, nft::Error> {
    read_scoped(sock, family, kind, &Scope::Table)
}

/// Read what `scope` asks for. With a partial scope the model holds only
/// part of the table, so new rule ids start at a random 62-bit base: unique
/// against the ids of rules that were not read (collision odds ~n²/2⁶³).
pub fn read_scoped(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
    scope: &Scope,
) -> Result<Snapshot, nft::Error> {
    read_scoped_probe(sock, family, kind, scope, None)
}

/// Above this many chains named by a partial scope, reading the whole
/// table's chains in one dump and keeping the named ones costs less than a
/// request per chain (a round trip is ~10 µs; a dump reply carries
/// hundreds of chains). Rules are still read per chain: a dump of a whole
/// table restarts every reply from the table's first rule, O(rules²/reply).
const BULK_CHAINS: usize = 256;

/// [`read_scoped`] for a command that only looks for rules equal to
/// `probe` (`-D` by spec, `-C`): of each compiled run, only the member
/// that could equal it is read — the element with the probe's key, one
/// `GETSETELEM` of that key — instead of all members (an element dump,
/// O(run length)). Such runs are marked `partial`.
pub fn read_scoped_probe(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
    scope: &Scope,
    probe: Option<&Rule>,
) -> Result<Snapshot, nft::Error> {
    read_scoped_lazy(sock, family, kind, scope, probe, &[])
}

/// [`read_scoped_probe`], the members of compiled runs in the chains
/// `lazy` (of a part's `rules_of`) left unparsed where their text shows
/// their kernel jump ([`Snapshot::lazy`]): a kube-proxy sync rewrites a
/// KUBE-SERVICES of thousands of members with the same texts, and parsing
/// them was a tenth of its time.
pub fn read_scoped_lazy(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
    scope: &Scope,
    probe: Option<&Rule>,
    lazy: &[String],
) -> Result<Snapshot, nft::Error> {
    let how = How {
        probe,
        lazy,
        ..How::default()
    };
    let mut snap = read_chains_and_rules(sock, family, kind, scope, &how)?;
    if let (Scope::Part { targets, .. }, true) = (scope, snap.exists) {
        // Jump targets the rules read did not show to exist.
        let missing: Vec<&str> = targets
            .iter()
            .map(String::as_str)
            .filter(|t| snap.table.chain(t).is_none())
            .collect();
        let tname = layout::table_name(kind);
        let fam = layout::nft_family(family);
        for c in fetch_chains(sock, fam, &tname, &missing)? {
            add_chain(&mut snap, kind, &c);
        }
        let missing: Vec<&str> = missing
            .into_iter()
            .filter(|t| snap.table.chain(t).is_none())
            .collect();
        fetch_registered(sock, &mut snap, fam, &tname, &missing)?;
    }
    Ok(snap)
}

/// Put the chains of `missing` (named by a scope, not kernel chains) that
/// are registered into the snapshot (see [`compile::registry`]).
fn fetch_registered(
    sock: &mut Socket,
    snap: &mut Snapshot,
    fam: nft::Family,
    tname: &str,
    missing: &[&str],
) -> Result<(), nft::Error> {
    if missing.is_empty() {
        return Ok(());
    }
    if let Some(found) = registry::lookup(sock, fam, tname, missing, BULK_CHAINS)? {
        snap.registry = true;
        for n in found {
            registry::add(snap, n);
        }
    }
    Ok(())
}

/// Fold adjacent entries of one logical rule (the elements of a multiport
/// run member, sorted by id) into the first, summing their counters;
/// `parts` gives an entry's rule id and counters. O(n); a no-op when ids
/// are unique.
pub(crate) fn fold_members<T>(v: &mut Vec<T>, parts: impl Fn(&mut T) -> (RuleId, &mut Counters)) {
    v.dedup_by(|later, first| {
        let (a, c) = parts(later);
        let c = *c;
        let (b, sum) = parts(first);
        if a != b {
            return false;
        }
        sum.packets += c.packets;
        sum.bytes += c.bytes;
        true
    });
}

/// The chains of our table `tname` named in `wanted` (absent ones left
/// out): a GET each, or for many one dump of the table's chains kept
/// where named.
fn fetch_chains(
    sock: &mut Socket,
    fam: nft::Family,
    tname: &str,
    wanted: &[&str],
) -> Result<Vec<nft::Chain>, nft::Error> {
    if wanted.len() > BULK_CHAINS {
        let set: HashSet<&str> = wanted.iter().copied().collect();
        let mut all = sock.chains(fam, Some(tname))?;
        all.retain(|c| c.table == tname && set.contains(c.name.as_str()));
        return Ok(all);
    }
    let mut v = Vec::new();
    for n in wanted {
        if let Some(c) = sock.get(&nft::Chain::new(fam, tname, n))? {
            v.push(c);
        }
    }
    Ok(v)
}

/// [`read_table`], keeping each run's raw elements
/// ([`Snapshot::run_elems`]): `verify` compares them with what the
/// members compile to, without dumping every set a second time.
pub fn read_table_keeping_run_elems(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
) -> Result<Snapshot, nft::Error> {
    let how = How {
        keep_elems: true,
        ..How::default()
    };
    read_chains_and_rules(sock, family, kind, &Scope::Table, &how)
}

/// [`read_scoped`] for `-Z` of whole chains on a kernel that resets a
/// set's element counters by a dump: the rules of compiled runs are read
/// (their sets are what the reset names), their members are not (one
/// element dump each, O(members): most of a `-Z` of 100k members). The
/// model holds the plain rules only; each run is `partial` with no
/// members, and the snapshot claims no chain read whole
/// ([`Snapshot::rules_read`] empty), so nothing may rely on a chain's
/// rules being all there.
pub fn read_scoped_without_members(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
    scope: &Scope,
) -> Result<Snapshot, nft::Error> {
    let how = How {
        members: false,
        ..How::default()
    };
    read_chains_and_rules(sock, family, kind, scope, &how)
}

/// How [`read_chains_and_rules`] reads what its scope names.
struct How<'a> {
    /// Only run members equal to this rule ([`read_scoped_probe`]).
    probe: Option<&'a Rule>,
    /// Chains whose run members may stay unparsed ([`read_scoped_lazy`]).
    lazy: &'a [String],
    /// Keep each run's elements ([`Snapshot::run_elems`]).
    keep_elems: bool,
    /// Read the members of runs at all ([`read_scoped_without_members`]).
    members: bool,
}

impl Default for How<'_> {
    fn default() -> Self {
        How {
            probe: None,
            lazy: &[],
            keep_elems: false,
            members: true,
        }
    }
}

/// [`read_scoped_probe`] but for a part's jump targets, read as `how`
/// says.
fn read_chains_and_rules(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
    scope: &Scope,
    how: &How<'_>,
) -> Result<Snapshot, nft::Error> {
    let (probe, lazy) = (how.probe, how.lazy);
    let fam = layout::nft_family(family);
    let tname = layout::table_name(kind);
    let mut snap = Snapshot {
        exists: false,
        table: Table::new(family, kind),
        handles: HashMap::new(),
        chain_handles: HashMap::new(),
        overflow: HashMap::new(),
        foreign: Vec::new(),
        runs: Vec::new(),
        chain_uses: HashMap::new(),
        // A probe reads only the run members equal to it.
        rules_read: match scope {
            _ if probe.is_some() || !how.members => Some(Vec::new()),
            Scope::Part { rules_of, .. } => Some(rules_of.clone()),
            Scope::Chains => Some(Vec::new()),
            Scope::Table => None,
        },
        foreign_in: HashSet::new(),
        texts: Default::default(),
        lazy: Default::default(),
        run_elems: how.keep_elems.then(HashMap::new),
        virtual_chains: Default::default(),
        registry: false,
    };
    if sock.get(&nft::Table::new(fam, &tname))?.is_none() {
        return Ok(snap);
    }
    snap.exists = true;
    // Filter by table here too: a dump request's table filter is advisory.
    let wanted: Vec<&str> = match scope {
        Scope::Part {
            names, rules_of, ..
        } => {
            let named: HashSet<&String> = names.iter().collect();
            names
                .iter()
                .chain(rules_of.iter().filter(|r| !named.contains(r)))
                .map(String::as_str)
                .collect()
        }
        Scope::Table | Scope::Chains => Vec::new(),
    };
    let chains = match scope {
        Scope::Part { .. } => fetch_chains(sock, fam, &tname, &wanted)?,
        Scope::Table | Scope::Chains => sock.chains(fam, Some(&tname))?,
    };
    for c in chains.iter().filter(|c| c.table == tname) {
        add_chain(&mut snap, kind, c);
    }
    // Registered chains (see `compile::registry`): those named that are
    // no kernel chain, or all of them.
    match scope {
        Scope::Part { .. } => {
            let missing: Vec<&str> = wanted
                .into_iter()
                .filter(|n| snap.table.chain(n).is_none())
                .collect();
            fetch_registered(sock, &mut snap, fam, &tname, &missing)?;
        }
        Scope::Table | Scope::Chains => {
            if let Some(mut names) = registry::dump(sock, fam, &tname, &mut snap.foreign)? {
                snap.registry = true;
                // In name order, as listings print them: the model's
                // chain list then needs no sort of its own (see
                // `Table::chains`), which a long-lived model pays per
                // generation.
                names.sort_unstable();
                for n in names {
                    registry::add(&mut snap, n);
                }
            }
        }
    }
    let only: Option<&[String]> = match scope {
        Scope::Part { rules_of, .. } => Some(rules_of),
        Scope::Chains => Some(&[]),
        Scope::Table => None,
    };
    if only.is_some() || !how.members {
        snap.table.set_next_id(fresh_id_base());
    }
    if only.is_some_and(|o| o.is_empty()) {
        return Ok(snap);
    }
    let lazy: HashSet<&str> = lazy.iter().map(String::as_str).collect();
    let (mut texts, censuses) = read_catalog(sock, fam, &tname)?;
    // `Some`: one dump per chain, in this order; `None`: one for the table.
    let list: Option<Vec<&str>> = match only {
        Some(list) => Some(
            list.iter()
                .map(String::as_str)
                .filter(|c| snap.table.chain(c).is_some() && !snap.virtual_chains.contains(*c))
                .collect(),
        ),
        None => per_chain_dumps(chains.iter().filter(|c| c.table == tname)),
    };
    let mut reader = Reader {
        family,
        kind,
        partial: only.is_some(),
        probe,
        members: how.members,
        lazy: &lazy,
        texts: &mut texts,
        censuses: &censuses,
    };
    let other = list
        .as_ref()
        .filter(|l| l.len() >= dump::PARALLEL_CHAINS)
        .and_then(|_| sock.sibling());
    match (list, other) {
        (Some(list), Some(other)) => {
            // The use counts bound the rules (they also count references):
            // room for them up front, the spare given back after a whole
            // read, whose model may live on (the daemon's).
            let bound: u64 = chains
                .iter()
                .filter(|c| c.table == tname)
                .map(|c| u64::from(c.use_count.unwrap_or(0)))
                .sum();
            let bound = bound.min(1 << 22) as usize;
            snap.table.reserve(bound);
            snap.handles.reserve(bound);
            dump::dump_parallel(other, fam, &tname, &list, |kr| {
                reader.take(sock, &mut snap, kr)
            })?;
            if only.is_none() {
                snap.table.shrink_to_fit();
                snap.handles.shrink_to_fit();
            }
        }
        (list, _) => {
            let mut rules: Vec<KernelRule> = Vec::new();
            match list {
                Some(list) => {
                    for c in list {
                        dump_rules(sock, fam, &tname, Some(c), &mut rules)?;
                    }
                }
                None => dump_rules(sock, fam, &tname, None, &mut rules)?,
            }
            // Exact room for what the dump returned: growing by doubling
            // would leave up to half of the rule slab unused for the
            // model's lifetime.
            snap.table.reserve(rules.len());
            snap.handles.reserve(rules.len());
            for kr in rules {
                reader.take(sock, &mut snap, kr)?;
            }
        }
    }
    Ok(snap)
}

/// What turns dumped kernel rules into a snapshot's model (see
/// [`read_chains_and_rules`]).
struct Reader<'a> {
    family: Family,
    kind: TableKind,
    /// A partial read (some chains' rules only).
    partial: bool,
    probe: Option<&'a Rule>,
    /// Read run members (see [`How::members`]).
    members: bool,
    /// Chains whose run members are read unparsed.
    lazy: &'a HashSet<&'a str>,
    texts: &'a mut Texts,
    censuses: &'a Censuses,
}

impl Reader<'_> {
    /// Rule `kr` into `snap`: a run's rule reads its members (element
    /// dumps on `sock`); a plain rule is rebuilt from its userdata.
    fn take(
        &mut self,
        sock: &mut Socket,
        snap: &mut Snapshot,
        kr: KernelRule,
    ) -> Result<(), nft::Error> {
        let KernelRule {
            chain,
            handle,
            userdata,
            counters,
            target,
        } = kr;
        let (family, kind) = (self.family, self.kind);
        if let Some((kb, set)) = userdata
            .as_deref()
            .and_then(|u| userdata::decode(u).ok())
            .and_then(|d| d.run)
        {
            let shape_text = userdata
                .as_deref()
                .and_then(|u| userdata::decode(u).ok())
                .filter(|d| d.has_text)
                .map(|d| d.text);
            let rk = RunRule {
                chain: &chain,
                handle,
                key: kb,
                set: &set,
                target: target.as_deref(),
                shape: shape_text.as_deref(),
                lazy: self.partial && self.probe.is_none() && self.lazy.contains(chain.as_str()),
            };
            if self.members {
                read_run(sock, snap, kind, rk, self.partial, self.probe, self.texts)?;
            } else {
                run::run_unread(snap, kind, rk);
            }
            if let Some(r) = snap.runs.last_mut() {
                r.census =
                    compile::runs::run_id(&r.set).and_then(|i| self.censuses.get(&i).copied());
            }
            return Ok(());
        }
        let lazy = self.partial && self.probe.is_none() && self.lazy.contains(chain.as_str());
        let standin = match (lazy, target.as_deref()) {
            (true, Some(t)) => plain_stand_in(userdata.as_deref(), self.texts, t),
            _ => None,
        };
        let is_standin = standin.is_some();
        let rebuilt = match standin {
            Some(s) => Some(s),
            None => rebuild(family, kind, &chain, userdata.as_deref(), self.texts),
        };
        let Some((id, mut rule, chunks, text)) = rebuilt else {
            snap.foreign.push(format!(
                "rule handle {handle} in chain {chain} (no nfkeeper userdata)"
            ));
            snap.foreign_in.insert(chain);
            return Ok(());
        };
        let as_text = text_holds(&rule, target.as_deref());
        follow_target(&mut rule, target.as_deref(), self.partial, |t| {
            snap.table.ensure_chain(t);
        });
        match snap.table.append_with_id(&chain, id, rule, counters) {
            Ok(id) => {
                snap.handles.insert(id, handle);
                if chunks > 0 {
                    snap.overflow.insert(id, chunks);
                }
                if is_standin {
                    snap.lazy.insert(id, text.clone());
                }
                if self.partial && as_text {
                    snap.texts.entry(chain).or_default().insert(text, id);
                }
            }
            Err(e) => {
                snap.foreign
                    .push(format!("rule handle {handle} in chain {chain} ({e})"));
                snap.foreign_in.insert(chain);
            }
        }
        Ok(())
    }
}

/// The kernel's verdict names the target chain as it is now (a rename
/// moves the jump, not our text), so it wins over the text. With a partial
/// read (`partial`) the target may not have been fetched; it exists (the
/// kernel holds the reference), so it enters the model empty.
/// `ensure` puts a chain into the model when absent (`Table::ensure_chain`
/// or a staging guard's).
fn follow_target(rule: &mut Rule, target: Option<&str>, partial: bool, ensure: impl FnOnce(&str)) {
    let Some(t) = target else { return };
    retarget(rule, t);
    if partial {
        ensure(t);
    }
}

/// Point `rule`'s jump/goto at `t` if it names another chain.
fn retarget(rule: &mut Rule, t: &str) {
    use ruleset::RuleBody;
    if rule.jump_target().is_some_and(|old| old != t) {
        rule.retarget(t);
    }
}

/// A chain from the kernel into the snapshot's model.
fn add_chain(snap: &mut Snapshot, kind: TableKind, c: &nft::Chain) {
    if let Some(h) = c.handle {
        snap.chain_handles.insert(c.name.clone(), h);
    }
    if let Some(u) = c.use_count {
        snap.chain_uses.insert(c.name.clone(), u);
    }
    if c.hook.is_some() {
        if layout::base_chain(kind, &c.name).is_none() {
            snap.foreign.push(format!(
                "base chain {} (not an iptables chain of this table)",
                c.name
            ));
            return;
        }
        let policy = if c.policy == Some(nft::chain::POLICY_DROP) {
            Policy::Drop
        } else {
            Policy::Accept
        };
        let counters = c
            .counters
            .map(|(bytes, packets)| Counters { packets, bytes });
        let _ = snap.table.set_policy(&c.name, policy, counters);
    } else if snap.table.new_chain(&c.name).is_err() {
        snap.foreign.push(format!("chain {}", c.name));
    }
}

/// Overflow texts of the table's rules: its catalog set's elements, by
/// rule id (chunk number, text). Empty without a catalog.
pub(crate) type Texts = HashMap<RuleId, Vec<(u32, String)>>;

/// The runs' censuses in the catalog, by run id
/// ([`compile::runs::run_id`]).
pub(crate) type Censuses = HashMap<u64, Census>;

/// The catalog: overflow texts and run censuses (one element dump).
pub(crate) fn read_catalog(
    sock: &mut Socket,
    fam: nft::Family,
    tname: &str,
) -> Result<(Texts, Censuses), nft::Error> {
    let mut texts: Texts = HashMap::new();
    let mut censuses = Censuses::new();
    if sock
        .get(&nft::Set::new(fam, tname, catalog::SET))?
        .is_some()
    {
        for e in sock.set_elems(fam, tname, catalog::SET)? {
            let (Some(k), Some(u)) = (e.key.as_deref(), e.userdata.as_deref()) else {
                continue;
            };
            if let Some((id, n, t)) = catalog::parse(k, u) {
                texts.entry(id).or_default().push((n, t));
            } else if let Some((run, c)) = catalog::parse_census(k, u) {
                censuses.insert(run, c);
            }
        }
    }
    Ok((texts, censuses))
}

/// The census of run set `set`: one GETSETELEM in the catalog. `None`
/// when the run has none (or the table no catalog).
pub(crate) fn read_census(
    sock: &mut Socket,
    fam: nft::Family,
    tname: &str,
    set: &str,
) -> Result<Option<Census>, nft::Error> {
    let Some(run) = compile::runs::run_id(set) else {
        return Ok(None);
    };
    let probe = nft::SetElems::new(
        fam,
        tname,
        catalog::SET,
        vec![nft::SetElem::key(&catalog::census_key(run))],
    );
    Ok(sock.get(&probe)?.and_then(|l| {
        l.elems.iter().find_map(|e| {
            catalog::parse_census(e.key.as_deref()?, e.userdata.as_deref()?).map(|(_, c)| c)
        })
    }))
}

/// A kernel rule's id and canonical text (the part after `-A CHAIN`) from
/// its userdata and, for a long rule, its catalog chunks (taken out of
/// `texts`); also the number of chunks used. `None`: not ours.
pub(crate) fn rule_text(ud: Option<&[u8]>, texts: &mut Texts) -> Option<(RuleId, String, u32)> {
    let d = userdata::decode(ud?).ok()?;
    let id = d.id?;
    let mut text = d.text;
    let mut chunks = 0;
    if let Some(total) = d.continued {
        let mut parts = texts.remove(&id)?;
        parts.sort_by_key(|p| p.0);
        chunks = parts.len() as u32;
        for (_, t) in parts {
            text.push_str(&t);
        }
        if text.len() != total as usize {
            return None;
        }
    }
    Some((id, text, chunks))
}

/// The logical rule of a kernel rule from its userdata (and, for a long
/// rule, its catalog chunks); also the number of chunks used.
/// A rule from its userdata: id, body, catalog chunks, and its text
/// without the leading blanks (as a restore line's text after `-A CHAIN `).
fn rebuild(
    family: Family,
    kind: TableKind,
    chain: &str,
    ud: Option<&[u8]>,
    texts: &mut Texts,
) -> Option<(RuleId, Rule, u32, String)> {
    let (id, mut text, chunks) = rule_text(ud, texts)?;
    let rule = parse_body(family, kind, chain, &text)?;
    let blanks = text.len() - text.trim_start_matches([' ', '\t']).len();
    text.drain(..blanks);
    Some((id, rule, chunks, text))
}

/// A plain rule of a chain read lazily (see [`Snapshot::lazy`]) whose
/// text ends in its kernel jump to `t`: a stand-in (its jump only), with
/// its id, catalog chunks and text as [`rebuild`] gives them. Not for a
/// rule naming an ipset (`-m set`, `-j SET`): the sets a restore leaves in
/// use are found from the model's bodies. `None`: parse it.
fn plain_stand_in(
    ud: Option<&[u8]>,
    texts: &mut Texts,
    t: &str,
) -> Option<(RuleId, Rule, u32, String)> {
    let (id, mut text, chunks) = rule_text(ud, texts)?;
    if text.contains("-set ") {
        return None;
    }
    let blanks = text.len() - text.trim_start_matches([' ', '\t']).len();
    text.drain(..blanks);
    let rule = run::stand_in(&text, t, false).or_else(|| run::stand_in(&text, t, true))?;
    Some((id, rule, chunks, text))
}

/// Whether a rule's text still says what it does given the chain its
/// kernel verdict jumps to (`target`): not when that chain was renamed.
fn text_holds(rule: &Rule, target: Option<&str>) -> bool {
    match (ruleset::RuleBody::jump_target(rule), target) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain rule stands in as its jump only when its text ends in the
    /// kernel's jump and names no ipset.
    #[test]
    fn plain_stand_ins() {
        // (text, kernel target, stands in)
        let cases = [
            (" -m comment --comment one -j T2", "T2", true),
            (" -s 10.0.0.1/32 -g T3", "T3", true),
            (" -j T2", "T3", false),
            (" -m set --match-set s src -j T2", "T2", false),
            (" -j SET --add-set s src", "s", false),
            (" -p tcp -j DNAT --to-destination 10.0.0.1", "T2", false),
        ];
        for (text, t, want) in cases {
            let ud = userdata::encode(RuleId(9), text, None).bytes;
            let got = plain_stand_in(Some(&ud), &mut Texts::new(), t);
            assert_eq!(got.is_some(), want, "{text}");
            if let Some((id, r, _, kept)) = got {
                assert_eq!((id, kept.as_str()), (RuleId(9), text.trim_start()));
                assert_eq!(ruleset::RuleBody::jump_target(&r), Some(t));
                assert!(r.matches.is_empty(), "{text}");
            }
        }
    }
}

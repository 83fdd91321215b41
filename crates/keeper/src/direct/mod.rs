//! Direct mode: whole invocations against the kernel with no daemon —
//! `iptables ARGS`, `iptables-save`, `iptables-restore`. Each reads only
//! what it needs (see [`crate::scope`]) into a fresh model and commits
//! through the transaction core ([`crate::txn`]) with the generation id it
//! read; when the ruleset changes in between (another writer), it reads
//! again and retries, as iptables-nft does, within the time `-w` (or the
//! settings) allow.

mod reads;

use crate::error::Error;
use crate::plan::PlanOpts;
use crate::read::{self, Scope};
use crate::scope::{flushed_chains, restore_flushes, restore_lazy_chains, restore_scopes, scope};
use crate::settings::Settings;
use crate::state::{foreign_warning, State};
use crate::txn::{self, Done, Restore, Source, Work, Write};
use iptables::exec::{RestoreError, RestoreOpts, RestoreStats};
use iptables::parse::{Command, Parsed};
use iptables::tool::Backend;
use iptables::Rule;
use nft::Socket;
use ruleset::{Family, Ruleset, TableKind};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Chains of at most this many kernel rules have their end read for an
/// append (one small dump); longer ones take plain appends, O(1).
const TAIL_RULES: u32 = 64;

/// A connection to the kernel for one invocation.
pub struct Session {
    sock: Socket,
    pub family: Family,
    settings: Settings,
    /// Warnings for stderr (foreign objects seen in our tables).
    pub warnings: Vec<String>,
    /// A write named a set of the kernel's own ipset module: its xtables
    /// match holds the set until the kernel destroys the deleted rule, so
    /// this program waits for that at exit as iptables-nft does (a script's
    /// `ipset destroy` right after must not find the set still in use).
    wait_at_exit: bool,
}

impl Session {
    pub fn open(family: Family, settings: Settings) -> Result<Session, Error> {
        let sock = Socket::open().map_err(Error::from_nft)?;
        Ok(Session::with_socket(sock, family, settings))
    }

    /// A session over an already open socket (e.g. one on a fake kernel).
    pub fn with_socket(sock: Socket, family: Family, settings: Settings) -> Session {
        Session {
            sock,
            family,
            settings,
            warnings: Vec::new(),
            wait_at_exit: false,
        }
    }

    fn plan_opts(&self) -> PlanOpts {
        PlanOpts {
            echo: false,
            compile: self.settings.compile,
            whole_model: false,
            plain_appends: false,
        }
    }

    /// Run one parsed iptables command; returns its stdout. Reads only what
    /// the command needs.
    pub fn iptables(&mut self, p: Parsed) -> Result<String, Error> {
        // `-S` of a whole table: straight from the kernel's userdata, no
        // model (O(output) memory; see crate::save).
        if let Command::ListRules {
            chain: None,
            num: None,
            zero: false,
        } = p.command
        {
            if !p.flags.verbose {
                return self.list_rules_streamed(p.table);
            }
        }
        if let Some(out) = self.read_from_snapshot(&p)? {
            return Ok(out);
        }
        let deadline = deadline(p.flags.wait, self.settings.retry_for);
        let w = Write {
            family: self.family,
            prog: String::new(),
            work: Work::Cmds(vec![p]),
        };
        match self.apply(w, deadline) {
            Done::Cmds(r) => r,
            _ => Err(Error::Busy),
        }
    }

    /// iptables-restore of `input` with `o` (no `-w`), errors as
    /// iptables-restore reports them.
    pub fn restore(&mut self, input: &str, o: &RestoreOpts) -> Result<RestoreStats, RestoreError> {
        Backend::restore(self, input, o, None)
    }

    /// iptables-restore: the whole input in one transaction.
    pub fn restore_job(
        &mut self,
        job: Restore,
        prog: &str,
        wait: Option<Option<u32>>,
    ) -> Result<RestoreStats, crate::Failure> {
        let w = Write {
            family: self.family,
            prog: prog.to_string(),
            work: Work::Restore(job),
        };
        let deadline = deadline(wait, self.settings.retry_for);
        match self.apply(w, deadline) {
            Done::Restore(r) => r,
            _ => Err(crate::Failure {
                line: 0,
                err: Error::Busy,
            }),
        }
    }

    fn apply(&mut self, w: Write, deadline: Option<Instant>) -> Done {
        let mut st = State::default();
        let mut src = Scoped {
            family: self.family,
            compile: self.settings.compile.is_some(),
            widened: false,
            warnings: Vec::new(),
            deadline,
            seed: seed(),
        };
        let mut stats = txn::Stats::default();
        let opts = self.plan_opts();
        let mut done = txn::apply(
            &mut self.sock,
            &mut st,
            &mut src,
            opts,
            std::slice::from_ref(&w),
            &mut stats,
        );
        self.warnings.append(&mut src.warnings);
        self.wait_at_exit |= !st.ipset.kernel.is_empty();
        let d = done.pop().unwrap_or(Done::Sync(Err(Error::Busy)));
        if let (Done::Restore(Ok(_)), Work::Restore(job)) = (&d, &w.work) {
            if !job.noflush && !job.test && stats.commits > 0 {
                self.snapshot_restored(&st, job);
            }
        }
        if self.settings.one_shot {
            std::mem::forget(st);
        }
        d
    }

    /// One ipset invocation (ipset's output and exit status).
    pub fn ipset(&mut self, job: crate::ipset::Job) -> ipset::exec::Output {
        let deadline = deadline(None, self.settings.retry_for);
        let w = Write {
            family: self.family,
            prog: "ipset".to_string(),
            work: Work::Ipset(job),
        };
        match self.apply(w, deadline) {
            Done::Ipset(o) => o,
            _ => crate::ipset::txn::failure(&Error::Busy, false),
        }
    }

    /// The logical ruleset of every one of our tables (read whole).
    pub fn model(&mut self) -> Result<Ruleset<Rule>, Error> {
        let mut rs = Ruleset::new();
        for kind in TableKind::ALL {
            let snap =
                read::read_table(&mut self.sock, self.family, kind).map_err(Error::from_nft)?;
            self.warn_foreign(kind, snap.foreign.clone());
            rs.replace_table(snap.table);
        }
        Ok(rs)
    }
}

impl Session {
    /// Whether what this session committed left the kernel objects to
    /// free after a grace period, which its exit would wait for (then the
    /// socket goes to the namespace's closer, see `nft::linger`).
    pub fn defers_destruction(&self) -> bool {
        self.sock.defers_destruction()
    }

    /// iptables-save text without comment lines (for comparisons).
    pub fn save_text(&mut self, counters: bool, only: Option<TableKind>) -> Result<String, Error> {
        let mut out = Vec::new();
        self.save_to(counters, only, None, &mut out)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

/// Direct mode as the iptables programs' backend.
impl Drop for Session {
    fn drop(&mut self) {
        if self.settings.close_after_exit && !self.wait_at_exit {
            self.sock.close_after_exit();
        }
    }
}

impl Backend for Session {
    fn command(&mut self, p: Parsed) -> Result<String, iptables::Error> {
        self.iptables(p).map_err(|e| e.to_iptables())
    }

    fn save(
        &mut self,
        counters: bool,
        only: Option<TableKind>,
        prog: &str,
        out: &mut dyn std::io::Write,
    ) -> Result<(), iptables::Error> {
        self.save_to(counters, only, Some(prog), out)
            .map_err(|e| e.to_iptables())
    }

    fn restore(
        &mut self,
        input: &str,
        o: &RestoreOpts,
        wait: Option<Option<u32>>,
    ) -> Result<RestoreStats, RestoreError> {
        let job = Restore {
            input: input.to_string(),
            noflush: o.noflush,
            counters: o.counters,
            test: o.test,
            table: o.table,
        };
        self.restore_job(job, o.prog, wait)
            .map_err(|f| f.to_restore_error())
    }

    fn warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    fn others(&mut self, family: Family) -> iptables::tool::Others {
        crate::others::others(&mut self.sock, family)
    }
}

/// When retries stop: `-w SECONDS` (or `-w` alone: never), else the
/// settings' bound.
fn deadline(wait: Option<Option<u32>>, default: Duration) -> Option<Instant> {
    let now = Instant::now();
    match wait {
        Some(None) => None,
        Some(Some(s)) => Some(now + Duration::from_secs(u64::from(s)).max(default)),
        None => Some(now + default),
    }
}

fn seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
        | 1
}

/// Direct mode's model: read for every attempt, only what the writes need.
struct Scoped {
    family: Family,
    compile: bool,
    /// A refusal the partial read could not explain: read whole tables.
    widened: bool,
    warnings: Vec<String>,
    deadline: Option<Instant>,
    /// xorshift state for the back-off's jitter.
    seed: u64,
}

impl Scoped {
    /// What to read for `w`, per table: the scope, the rule an `-D`/`-C`
    /// looks for, the chains appended to, the chains flushed unread.
    fn needs(&self, w: &Write) -> Vec<Need> {
        let mut needs: Vec<Need> = Vec::new();
        fn need(needs: &mut Vec<Need>, kind: TableKind) -> usize {
            match needs.iter().position(|n| n.kind == kind) {
                Some(i) => i,
                None => {
                    needs.push(Need::new(kind));
                    needs.len() - 1
                }
            }
        }
        match &w.work {
            Work::Cmds(cmds) => {
                for p in cmds {
                    let i = need(&mut needs, p.table);
                    let n = &mut needs[i];
                    let sc = if self.widened { Scope::Table } else { scope(p) };
                    n.scope = match n.scope.take() {
                        None => Some(sc),
                        Some(mut s) => {
                            s.merge(sc);
                            Some(s)
                        }
                    };
                    if let (Command::Delete(_) | Command::Check(_), [r]) =
                        (&p.command, p.rules.as_slice())
                    {
                        n.probe = Some(r.clone());
                    }
                    if let Command::Append(c) = &p.command {
                        n.appends.push(c.clone());
                    }
                    n.flushes.extend(flushed_chains(p));
                }
                // A table only zeroed whole chains in, its runs zeroed by
                // reset dumps: their members need not be read.
                let zero_whole = |p: &Parsed| {
                    matches!(p.command, Command::Zero { num: None, .. })
                        && crate::plan::kernel_resets_set_elems()
                };
                for n in &mut needs {
                    n.members = !cmds.iter().filter(|p| p.table == n.kind).all(zero_whole);
                }
            }
            Work::Restore(r) => {
                let scopes = restore_scopes(&r.input, self.family, r.noflush, r.table, "");
                for (k, sc) in scopes {
                    let i = need(&mut needs, k);
                    needs[i].scope = Some(if self.widened { Scope::Table } else { sc });
                    needs[i].replaced = !r.noflush;
                }
                if r.noflush {
                    for (k, c) in restore_flushes(&r.input, r.table) {
                        let i = need(&mut needs, k);
                        needs[i].flushes.push(c);
                    }
                    if !self.widened {
                        for (k, cs) in restore_lazy_chains(&r.input, r.table) {
                            let i = need(&mut needs, k);
                            needs[i].lazy = cs;
                        }
                    }
                }
            }
            Work::Sync | Work::Ipset(_) => {}
        }
        needs
    }
}

/// What one table must be read for.
struct Need {
    kind: TableKind,
    scope: Option<Scope>,
    probe: Option<Rule>,
    appends: Vec<String>,
    flushes: Vec<Option<String>>,
    /// Replaced by a restore (warn about foreign objects it removes).
    replaced: bool,
    /// Chains whose run members may be read unparsed
    /// ([`crate::scope::restore_lazy_chains`]).
    lazy: Vec<String>,
    /// Read the members of compiled runs (see
    /// [`read::read_scoped_without_members`]).
    members: bool,
}

impl Need {
    fn new(kind: TableKind) -> Need {
        Need {
            kind,
            scope: None,
            probe: None,
            appends: Vec::new(),
            flushes: Vec::new(),
            replaced: false,
            lazy: Vec::new(),
            members: true,
        }
    }
}

impl Source for Scoped {
    fn prepare(
        &mut self,
        sock: &mut Socket,
        st: &mut State,
        writes: &[&Write],
        _attempt: u32,
    ) -> Result<u32, Error> {
        st.clear();
        self.warnings.clear();
        let genid = sock.gen().map_err(Error::from_nft)?.id;
        let f = self.family;
        let now = crate::ipset::now();
        for w in writes {
            if let Work::Ipset(job) = &w.work {
                let kernel = crate::ipset::refs::Rules::Kernel;
                crate::ipset::txn::prepare(sock, &mut st.ipset, job, now, &kernel)
                    .map_err(Error::from_nft)?;
            }
            for n in self.needs(w) {
                let scope = n.scope.unwrap_or(Scope::Table);
                // -D by spec and -C of one rule look for rules equal to it:
                // of a compiled run only the element with its key can be one.
                let probe = n.probe.as_ref().filter(|_| scope != Scope::Table);
                let snap = if n.members {
                    read::read_scoped_lazy(sock, f, n.kind, &scope, probe, &n.lazy)
                } else {
                    read::read_scoped_without_members(sock, f, n.kind, &scope)
                }
                .map_err(Error::from_nft)?;
                for what in &snap.foreign {
                    self.warnings.push(foreign_warning(n.kind, what));
                }
                if n.replaced && !snap.foreign.is_empty() {
                    self.warnings.push(format!(
                        "Warning: restoring table {} replaces {} object(s) nfkeeper did not write",
                        compile::layout::table_name(n.kind),
                        snap.foreign.len()
                    ));
                }
                let uses: HashMap<String, u32> = snap.chain_uses.clone();
                st.install(f, n.kind, snap);
                if self.compile {
                    for c in &n.appends {
                        let Some(&u) = uses.get(c) else { continue };
                        if let Some(t) = read::tail(sock, f, n.kind, c, u, TAIL_RULES)
                            .map_err(Error::from_nft)?
                        {
                            st.tails.insert((f, n.kind, c.clone()), t);
                        }
                    }
                }
                if !n.flushes.is_empty() && st.exists(f, n.kind) {
                    self.unread_run_sets(sock, st, n.kind, &n.flushes)?;
                }
            }
        }
        crate::ipset::rules::prepare(sock, st, writes, now).map_err(Error::from_nft)?;
        st.genid = genid;
        Ok(genid)
    }

    fn explain(&mut self, sock: &mut Socket, w: &Write, errno: i32) -> Option<Error> {
        // -X CHAIN refused as busy: it has rules or references. Read only
        // that chain's rules and the kernel's use count to say which, as
        // iptables does (not the whole table).
        let Work::Cmds(cmds) = &w.work else {
            return None;
        };
        let [p] = cmds.as_slice() else { return None };
        let Command::DeleteChain(Some(ch)) = &p.command else {
            return None;
        };
        if errno != libc::EBUSY {
            return None;
        }
        let with_rules = Scope::Part {
            names: vec![ch.clone()],
            rules_of: vec![ch.clone()],
            targets: Vec::new(),
        };
        let snap = match read::read_scoped(sock, self.family, p.table, &with_rules) {
            Ok(s) => s,
            Err(e) => return Some(Error::from_nft(e)),
        };
        // The kernel's use count is rules + references; like iptables,
        // references are reported first.
        let fam = compile::layout::nft_family(self.family);
        let tname = compile::layout::table_name(p.table);
        let used = match sock.get(&nft::Chain::new(fam, &tname, ch)) {
            Ok(c) => c.and_then(|c| c.use_count).unwrap_or(0) as usize,
            Err(e) => return Some(Error::from_nft(e)),
        };
        Some(Error::refused(match snap.table.chain(ch) {
            Some(c) if used > c.len || c.len == 0 => libc::EMLINK,
            Some(_) => libc::EBUSY,
            None => libc::ENOENT,
        }))
    }

    fn widen(&mut self, _w: &Write, errno: i32) -> bool {
        // After a partial read the kernel saw what the read did not (rules
        // or references of a deleted chain, a loop through unread chains):
        // read whole tables so the model words the error as iptables does
        // (or, if the conflict vanished meanwhile, succeeds).
        if self.widened || !matches!(errno, libc::EBUSY | libc::EMLINK | libc::ELOOP) {
            return false;
        }
        self.widened = true;
        true
    }

    fn invalidate(&mut self, _f: Family, _k: TableKind) {
        // Every attempt reads afresh.
    }

    fn backoff(&mut self, attempt: u32) -> bool {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return false;
        }
        // Jittered exponential back-off, 50 µs doubling up to 10 ms, so
        // that writers that collided do not collide again in step.
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        let base = Duration::from_micros(50 << attempt.min(8)).min(Duration::from_millis(10));
        let jitter = (self.seed % 1000) as u32 + 500;
        std::thread::sleep(base * jitter / 1000);
        true
    }
}

impl Scoped {
    /// The run sets of chains a write flushes without reading their rules
    /// go with the flush: per table one set dump and, only if the table
    /// has run sets, one rule dump per flushed chain.
    fn unread_run_sets(
        &mut self,
        sock: &mut Socket,
        st: &mut State,
        kind: TableKind,
        flushes: &[Option<String>],
    ) -> Result<(), Error> {
        let all = read::run_sets_of_table(sock, self.family, kind).map_err(Error::from_nft)?;
        if all.is_empty() {
            return Ok(());
        }
        for chain in flushes {
            let sets = match chain {
                None => all.clone(),
                Some(c) => {
                    let mut used = read::run_sets_used_by(sock, self.family, kind, c)
                        .map_err(Error::from_nft)?;
                    // Only sets that exist: deleting a missing one would
                    // fail the whole transaction.
                    used.retain(|u| all.contains(u));
                    used
                }
            };
            st.view_mut(self.family)
                .unread_run_sets
                .insert((kind, chain.clone()), sets);
        }
        Ok(())
    }
}

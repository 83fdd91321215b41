//! Whole invocations against the kernel (direct mode): `iptables ARGS`,
//! `iptables-save`, `iptables-restore`. Each reads the tables it needs, runs
//! the command(s) on the model, and commits one transaction that carries
//! the generation id it read, so a concurrent writer makes the commit fail
//! cleanly instead of being overwritten.

use crate::plan::{KernelApply, Loc};
use crate::read::{Scope, Snapshot};
use crate::save::{save_table_to, Form, SaveError};
use crate::scope::{restore_scopes, scope};
use iptables::exec::{restore_with, RestoreError, RestoreOpts, RestoreStats};
use iptables::parse::{Command, Parsed};
use iptables::{Error, Rule};
use nft::Socket;
use ruleset::{Family, Ruleset, TableKind};

/// Tables iptables-save prints, in iptables-nft's order.
pub const SAVE_ORDER: [TableKind; 5] = [
    TableKind::Mangle,
    TableKind::Security,
    TableKind::Raw,
    TableKind::Filter,
    TableKind::Nat,
];

/// Whether runs of similar rules are compiled into sets and verdict maps
/// (`crate::runs`): by default, runs of at least
/// [`compile::runs::DEFAULT_MIN_LEN`] rules. The environment
/// decides: `NFKEEPER_COMPILE=off` (every logical rule its own kernel
/// rule), `runs` (the default) or `runs:N` (runs of at least N rules); any
/// other value keeps the default.
pub fn compile_runs() -> Option<compile::runs::RunOpts> {
    let mut o = compile::runs::RunOpts::default();
    let Ok(v) = std::env::var("NFKEEPER_COMPILE") else {
        return Some(o);
    };
    if v == "off" {
        return None;
    }
    if let Some(n) = v.strip_prefix("runs:").and_then(|n| n.parse().ok()) {
        o.min_len = n;
    }
    Some(o)
}

/// A connection to the kernel for one invocation.
pub struct Session {
    sock: Socket,
    pub family: Family,
    /// Warnings for stderr (foreign objects seen in our tables).
    pub warnings: Vec<String>,
    /// The errno of the last commit the kernel refused (reset per attempt):
    /// tells a kernel refusal from the model's own error of the same text.
    refused: Option<i32>,
    /// Restores compile runs into sets and maps ([`compile_runs`]), and
    /// appends join or start runs at the end of short chains.
    pub compile: Option<compile::runs::RunOpts>,
    /// Appends are plain rules (the retry after a run refused a key).
    plain_appends: bool,
}

/// Chains of at most this many kernel rules have their end read for an
/// append (one small dump); longer ones take plain appends, O(1).
const TAIL_RULES: u32 = 64;

pub fn kernel_err(e: nft::Error) -> Error {
    match e {
        nft::Error::Kernel { code, .. } => errno_err(-code),
        nft::Error::Io(io) if io.raw_os_error() == Some(libc_eperm()) => {
            Error::op("Permission denied (you must be root).")
        }
        other => Error::other(format!("netlink: {other}")),
    }
}

const fn libc_eperm() -> i32 {
    1
}

/// iptables' wording for a kernel errno of a failed commit.
pub fn errno_err(errno: i32) -> Error {
    match errno {
        1 | 13 => Error::op("Permission denied (you must be root)."),
        2 => Error::op("No chain/target/match by that name."),
        16 => Error::op("Directory not empty."),
        17 => Error::op("Chain already exists."),
        40 => Error::op("Loop found in table."),
        11 | 85 | 512 => Error {
            kind: iptables::ExitKind::Resource,
            ..Error::op(
                "Resource temporarily unavailable: the ruleset changed concurrently; try again.",
            )
        },
        // strerror's text, as iptables prints it (std adds "(os error N)").
        e => {
            let text = std::io::Error::from_raw_os_error(e).to_string();
            let text = text.split(" (os error").next().unwrap_or_default();
            Error::op(format!("{text}."))
        }
    }
}

/// Kernel refusals that a partial read can cause without the model seeing
/// them: a chain still in use (EBUSY), a jump loop or too deep a jump
/// chain (ELOOP, EMLINK).
fn unseen_conflict(refused: Option<i32>) -> bool {
    matches!(refused, Some(16 | 31 | 40))
}

impl Session {
    pub fn open(family: Family) -> Result<Session, Error> {
        let sock = Socket::open().map_err(kernel_err)?;
        Ok(Session {
            sock,
            family,
            warnings: Vec::new(),
            refused: None,
            compile: compile_runs(),
            plain_appends: false,
        })
    }

    fn read_in(&mut self, kind: TableKind, scope: &Scope) -> Result<Snapshot, Error> {
        self.read_probe(kind, scope, None)
    }

    /// [`Session::read_in`] of runs' members equal to `probe` only (see
    /// [`crate::read::read_scoped_probe`]).
    fn read_probe(
        &mut self,
        kind: TableKind,
        scope: &Scope,
        probe: Option<&Rule>,
    ) -> Result<Snapshot, Error> {
        let s = crate::read::read_scoped_probe(&mut self.sock, self.family, kind, scope, probe)
            .map_err(kernel_err)?;
        self.warn_foreign(kind, s.foreign.clone());
        Ok(s)
    }

    fn remember(ap: &mut KernelApply, kind: TableKind, s: &Snapshot) {
        if s.exists {
            ap.present.insert(kind);
        }
        for (id, h) in &s.handles {
            ap.locs.insert((kind, *id), Loc::Handle(*h));
        }
        for (name, h) in &s.chain_handles {
            ap.chain_handles.insert((kind, name.clone()), *h);
        }
        for (id, n) in &s.overflow {
            ap.overflow.insert((kind, *id), *n);
        }
        ap.remember_runs(kind, &s.runs);
    }

    fn genid(&mut self) -> Result<u32, Error> {
        Ok(self.sock.gen().map_err(kernel_err)?.id)
    }

    /// Commit the batch if it has anything in it; errors map to iptables'
    /// wording (the first failing message decides).
    fn commit(&mut self, ap: &mut KernelApply) -> Result<(), Error> {
        if ap.batch.is_empty() {
            return Ok(());
        }
        let rep = self.sock.commit(&mut ap.batch).map_err(kernel_err)?;
        if let Some(e) = rep.outcome.errors.first() {
            self.refused = Some(-e.code);
            return Err(errno_err(-e.code));
        }
        if !rep.outcome.committed {
            return Err(Error::other("the kernel did not confirm the transaction"));
        }
        Ok(())
    }

    /// Run one parsed iptables command; returns its stdout. Reads only what
    /// the command needs (see [`scope`]).
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
        let sc = scope(&p);
        let partial = sc != Scope::Table;
        if let Command::DeleteChain(Some(ch)) = &p.command {
            // -X CHAIN refused as busy: it has rules or references. Read
            // only that chain's rules and the kernel's use count to say
            // which, as iptables does (not the whole table).
            let ch = ch.clone();
            return match self.iptables_in(p.clone(), &sc) {
                Err(_) if self.refused == Some(16) => {
                    self.warnings.clear();
                    let with_rules = Scope::Part {
                        names: vec![ch.clone()],
                        rules_of: vec![ch.clone()],
                    };
                    let snap = self.read_in(p.table, &with_rules)?;
                    // The kernel's use count is rules + references; like
                    // iptables, references are reported first.
                    let fam = compile::layout::nft_family(self.family);
                    let tname = compile::layout::table_name(p.table);
                    let used = self
                        .sock
                        .get(&nft::Chain::new(fam, &tname, &ch))
                        .map_err(kernel_err)?
                        .and_then(|c| c.use_count)
                        .unwrap_or(0) as usize;
                    match snap.table.chain(&ch) {
                        Some(c) if used > c.len || c.len == 0 => Err(errno_err(31)), // EMLINK
                        Some(_) => Err(errno_err(16)),
                        None => Err(errno_err(2)),
                    }
                }
                r => r,
            };
        }
        match self.iptables_in(p.clone(), &sc) {
            // After a partial read the kernel saw what the read did not
            // (rules or references of a deleted chain, a loop through
            // unread chains). Read the table so the model words the error
            // as iptables does (or, if the conflict vanished meanwhile,
            // succeeds).
            Err(_) if partial && unseen_conflict(self.refused) => {
                self.warnings.clear();
                self.iptables_in(p, &Scope::Table)
            }
            r => r,
        }
    }

    fn warn_foreign(&mut self, kind: TableKind, foreign: Vec<String>) {
        for f in foreign {
            self.warnings.push(format!(
                "Warning: table {}: {f} was not written by nfkeeper; left as is",
                compile::layout::table_name(kind)
            ));
        }
    }

    fn list_rules_streamed(&mut self, kind: TableKind) -> Result<String, Error> {
        let mut out = Vec::new();
        let mut foreign = Vec::new();
        let r = save_table_to(
            &mut self.sock,
            self.family,
            kind,
            Form::Spec,
            &mut out,
            &mut foreign,
        );
        self.warn_foreign(kind, foreign);
        match r {
            Ok(_) => Ok(String::from_utf8_lossy(&out).into_owned()),
            Err(SaveError::Kernel(e)) => Err(kernel_err(e)),
            Err(SaveError::Output(e)) => Err(Error::other(format!("listing: {e}"))),
        }
    }

    fn iptables_in(&mut self, p: Parsed, sc: &Scope) -> Result<String, Error> {
        self.refused = None;
        let genid = self.genid()?;
        let kind = p.table;
        // -D by spec and -C of one rule look for rules equal to it: of a
        // compiled run only the element with its key can be one.
        let probe = match &p.command {
            Command::Delete(_) | Command::Check(_) if p.rules.len() == 1 && *sc != Scope::Table => {
                Some(&p.rules[0])
            }
            _ => None,
        };
        let mut snap = self.read_probe(kind, sc, probe)?;
        let mut ap = KernelApply::new(self.family, self.sock.batch(Some(genid)));
        Self::remember(&mut ap, kind, &snap);
        ap.compile = self.compile;
        let append_to = match &p.command {
            Command::Append(c) if self.compile.is_some() && !self.plain_appends => Some(c.clone()),
            _ => None,
        };
        if let Some(c) = &append_to {
            // Few kernel rules: read the chain's end so the append can join
            // or start a run (crate::runs).
            if let Some(&uses) = snap.chain_uses.get(c) {
                let t = crate::read::tail(&mut self.sock, self.family, kind, c, uses, TAIL_RULES)
                    .map_err(kernel_err)?;
                if let Some(t) = t {
                    ap.tails.insert((kind, c.clone()), t);
                }
            }
        }
        let mut out = String::new();
        ap.run(kind, &mut snap.table, p.clone(), &mut out)?;
        self.drop_flushed_run_sets(&mut ap)?;
        match self.commit(&mut ap) {
            // The rule's key is already in the run it would join: append it
            // as a plain rule after the run instead.
            Err(_) if ap.joined_run && self.refused == Some(17) => {
                self.plain_appends = true;
                let r = self.iptables_in(p, sc);
                self.plain_appends = false;
                r
            }
            r => r.map(|()| out),
        }
    }

    /// The run sets of chains the batch flushed without having read them
    /// go with their rules (the read covered only the chains' names): per
    /// table one set dump and, only if the table has run sets, one rule
    /// dump per flushed chain (see [`crate::read::run_sets_used_by`]).
    fn drop_flushed_run_sets(&mut self, ap: &mut KernelApply) -> Result<(), Error> {
        let flushed = std::mem::take(&mut ap.flushed);
        for kind in TableKind::ALL {
            let mut chains = flushed.iter().filter(|(k, _)| *k == kind).peekable();
            if chains.peek().is_none() {
                continue;
            }
            let all = crate::read::run_sets_of_table(&mut self.sock, self.family, kind)
                .map_err(kernel_err)?;
            if all.is_empty() {
                continue;
            }
            for (_, chain) in chains {
                let sets = match chain {
                    None => all.clone(),
                    Some(c) => {
                        let mut used =
                            crate::read::run_sets_used_by(&mut self.sock, self.family, kind, c)
                                .map_err(kernel_err)?;
                        // Only sets that exist: deleting a missing one
                        // would fail the whole transaction.
                        used.retain(|u| all.contains(u));
                        used
                    }
                };
                ap.drop_unread_run_sets(kind, sets);
            }
        }
        Ok(())
    }

    /// The logical ruleset of every one of our tables (read whole).
    pub fn model(&mut self) -> Result<Ruleset<Rule>, Error> {
        let mut rs = Ruleset::new();
        for kind in TableKind::ALL {
            let snap = self.read_in(kind, &Scope::Table)?;
            rs.replace_table(snap.table);
        }
        Ok(rs)
    }

    /// iptables-save text of our tables that exist (`only`: one table).
    pub fn save(
        &mut self,
        counters: bool,
        only: Option<TableKind>,
        header: impl Fn() -> String,
        footer: impl Fn() -> String,
    ) -> Result<String, Error> {
        let mut out = Vec::new();
        self.save_to(counters, only, header, footer, &mut out)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// [`Session::save`] streamed to `out`, table by table, without
    /// building the model (see [`crate::save`]).
    pub fn save_to(
        &mut self,
        counters: bool,
        only: Option<TableKind>,
        header: impl Fn() -> String,
        footer: impl Fn() -> String,
        out: &mut dyn std::io::Write,
    ) -> Result<(), Error> {
        for kind in SAVE_ORDER {
            if only.is_some_and(|o| o != kind) {
                continue;
            }
            let mut foreign = Vec::new();
            let (header, footer) = (header(), footer());
            let form = Form::Save {
                counters,
                header: &header,
                footer: &footer,
            };
            let r = save_table_to(&mut self.sock, self.family, kind, form, out, &mut foreign);
            self.warn_foreign(kind, foreign);
            match r {
                Ok(_) => {}
                Err(SaveError::Kernel(e)) => return Err(kernel_err(e)),
                Err(SaveError::Output(e)) => {
                    return Err(Error::other(format!("writing the output: {e}")))
                }
            }
        }
        Ok(())
    }

    /// iptables-restore: the whole input in one transaction.
    pub fn restore(&mut self, input: &str, o: &RestoreOpts) -> Result<RestoreStats, RestoreError> {
        let scopes = restore_scopes(input, self.family, o.noflush, o.table, o.prog);
        let partial = scopes.iter().any(|(_, s)| *s != Scope::Table);
        match self.restore_in(input, o, scopes.clone()) {
            // As for single commands: let the model see everything to word
            // what the kernel refused.
            Err(_) if partial && unseen_conflict(self.refused) => {
                self.warnings.clear();
                let all = scopes.into_iter().map(|(k, _)| (k, Scope::Table)).collect();
                self.restore_in(input, o, all)
            }
            r => r,
        }
    }

    fn restore_in(
        &mut self,
        input: &str,
        o: &RestoreOpts,
        scopes: Vec<(TableKind, Scope)>,
    ) -> Result<RestoreStats, RestoreError> {
        self.refused = None;
        let at0 = |e: Error| RestoreError { line: 0, err: e };
        let genid = self.genid().map_err(at0)?;
        let mut rs: Ruleset<Rule> = Ruleset::new();
        let mut ap = KernelApply::new(self.family, self.sock.batch(Some(genid)));
        ap.compile = self.compile;
        // What the input needs of each table it names (see
        // [`restore_scopes`]): whole tables when they are replaced, only the
        // chains the lines touch with --noflush.
        for (k, sc) in scopes {
            let snap = self.read_in(k, &sc).map_err(at0)?;
            Self::remember(&mut ap, k, &snap);
            if !o.noflush && !snap.foreign.is_empty() {
                self.warnings.push(format!(
                    "Warning: restoring table {} replaces {} object(s) nfkeeper did not write",
                    compile::layout::table_name(k),
                    snap.foreign.len()
                ));
            }
            rs.replace_table(snap.table);
        }
        let stats = restore_with(&mut rs, input, o, &mut ap)?;
        if o.test {
            return Ok(stats);
        }
        ap.finish(&rs).map_err(at0)?;
        self.drop_flushed_run_sets(&mut ap).map_err(at0)?;
        self.commit(&mut ap).map_err(at0)?;
        Ok(stats)
    }
}

//! The transaction core, shared by direct mode and the daemon: a group of
//! writes applied to the model with savepoints, mirrored into one batch,
//! committed with the generation id the model was read at; a write the
//! model or the kernel refuses is cut out and the rest replayed; a
//! generation conflict is replayed after the model is brought up to date;
//! handles of created objects are learnt from the kernel's echoes.
//!
//! Where the model comes from is the caller's [`Source`]: read for each
//! attempt (direct mode, [`crate::direct`]) or kept warm by following the
//! kernel's events (the daemon). Everything else is here, so both modes
//! accept, refuse and word the same input the same way.
//!
//! Contract: every write gets exactly one [`Done`]; a write answered `Ok`
//! is in the kernel; a write answered with an error left nothing in the
//! kernel (except [`Error::Unconfirmed`]: unknown); the model ends equal
//! to what the kernel holds for every table the group touched, or those
//! tables are handed to [`Source::invalidate`].

use crate::error::{Error, Failure, Refusal};
use crate::plan::{replay, Pending, PlanOpts, Planner};
use crate::state::State;
use iptables::exec::{restore_open, RestoreOpts, RestoreStats};
use iptables::parse::Parsed;
use nft::{msg, Socket, Tag};
use ruleset::{Family, TableKind};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// What a write does.
pub enum Work {
    /// iptables commands applied as one unit (a command line: one; typed
    /// operations: all or none).
    Cmds(Vec<Parsed>),
    /// An iptables-restore payload (always alone in its transaction).
    Restore(Restore),
    /// Nothing: only bring the model up to date.
    Sync,
    /// An ipset invocation (see [`crate::ipset`]); consecutive ones share
    /// a transaction.
    Ipset(crate::ipset::Job),
}

/// An iptables-restore invocation.
#[derive(Clone, Debug)]
pub struct Restore {
    pub input: String,
    pub noflush: bool,
    pub counters: bool,
    pub test: bool,
    pub table: Option<TableKind>,
}

/// One write of a group.
pub struct Write {
    pub family: Family,
    /// Program name for messages ("iptables", "ip6tables-restore" …).
    pub prog: String,
    pub work: Work,
}

/// The answer to one write.
#[derive(Debug)]
pub enum Done {
    /// The commands' output (listings of `-L -Z`), or why they failed.
    Cmds(Result<String, Error>),
    Restore(Result<RestoreStats, Failure>),
    Sync(Result<(), Error>),
    /// ipset's output and exit status (failures included).
    Ipset(ipset::exec::Output),
}

impl Done {
    pub fn is_ok(&self) -> bool {
        match self {
            Done::Cmds(r) => r.is_ok(),
            Done::Restore(r) => r.is_ok(),
            Done::Sync(r) => r.is_ok(),
            Done::Ipset(o) => o.code == 0,
        }
    }
}

/// Where the model comes from and how it is kept in step with the kernel.
pub trait Source {
    /// Bring `st` up to date for `writes` (the writes of the group not yet
    /// answered) and return the generation the batch must carry. `attempt`
    /// is 0 for the first try; later ones follow a conflict, after which
    /// nothing cached may be trusted. `Err(Error::Busy)` counts as a
    /// conflict (e.g. a dump interrupted by a concurrent change).
    fn prepare(
        &mut self,
        sock: &mut Socket,
        st: &mut State,
        writes: &[&Write],
        attempt: u32,
    ) -> Result<u32, Error>;

    /// The kernel refused write `w` with `errno` although the model took
    /// it: the model did not see what the kernel saw. `Some(error)` words
    /// the refusal (reading what it needs); `None` if it cannot.
    fn explain(&mut self, _sock: &mut Socket, _w: &Write, _errno: i32) -> Option<Error> {
        None
    }

    /// Whether reading more (whole tables) for write `w` may let the
    /// model word a refusal with `errno` itself; if so the source reads
    /// more for it from the next [`Source::prepare`] on.
    fn widen(&mut self, _w: &Write, _errno: i32) -> bool {
        false
    }

    /// Table `k` of family `f` in `st` may no longer be what the kernel
    /// holds: read it again before it is used.
    fn invalidate(&mut self, f: Family, k: TableKind);

    /// Before attempt `attempt` (≥ 1) after a conflict: wait a little, or
    /// give up (false: the writes fail as busy).
    fn backoff(&mut self, attempt: u32) -> bool;
}

/// What one commit cost, for metrics.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Kernel commits that applied something.
    pub commits: u32,
    /// Attempts that hit a generation conflict.
    pub conflicts: u32,
    /// Time spent in kernel commits.
    pub commit_time: Duration,
}

/// Apply `writes` in order: consecutive commands and syncs as one
/// transaction, each restore alone. Returns one [`Done`] per write.
pub fn apply(
    sock: &mut Socket,
    st: &mut State,
    src: &mut dyn Source,
    opts: PlanOpts,
    writes: &[Write],
    stats: &mut Stats,
) -> Vec<Done> {
    let mut done: Vec<Option<Done>> = (0..writes.len()).map(|_| None).collect();
    let mut from = 0;
    while from < writes.len() {
        if let Work::Restore(r) = &writes[from].work {
            done[from] = Some(Done::Restore(restore(
                sock,
                st,
                src,
                opts,
                &writes[from],
                r,
                stats,
            )));
            from += 1;
            continue;
        }
        // A run of ipset writes, or of iptables commands and syncs.
        let ipset = matches!(writes[from].work, Work::Ipset(_));
        let to = writes[from..]
            .iter()
            .position(|w| {
                matches!(w.work, Work::Restore(_)) || matches!(w.work, Work::Ipset(_)) != ipset
            })
            .map_or(writes.len(), |p| from + p);
        let group: Vec<&Write> = writes[from..to].iter().collect();
        let answers = if ipset {
            crate::ipset::txn::commit(sock, st, src, &group, stats)
        } else {
            commit_cmds(sock, st, src, opts, &group, stats)
        };
        for (i, d) in answers.into_iter().enumerate() {
            done[from + i] = Some(d);
        }
        from = to;
    }
    done.into_iter()
        .map(|d| d.unwrap_or(Done::Sync(Err(Error::Busy))))
        .collect()
}

/// Tables a write of commands touches.
fn kinds_of(w: &Write) -> Vec<TableKind> {
    let mut v: Vec<TableKind> = match &w.work {
        Work::Cmds(c) => c.iter().map(|p| p.table).collect(),
        _ => Vec::new(),
    };
    v.sort_by_key(|k| k.index());
    v.dedup();
    v
}

/// Which tables of each family exist, to put back if a batch is abandoned.
fn presence(st: &State) -> [Vec<TableKind>; 2] {
    Family::ALL.map(|f| {
        TableKind::ALL
            .into_iter()
            .filter(|k| st.exists(f, *k))
            .collect()
    })
}

fn restore_presence(st: &mut State, p: &[Vec<TableKind>; 2]) {
    for f in Family::ALL {
        st.view_mut(f).present = p[f.index()].iter().copied().collect();
    }
}

/// A group of command writes as one transaction.
fn commit_cmds(
    sock: &mut Socket,
    st: &mut State,
    src: &mut dyn Source,
    opts: PlanOpts,
    group: &[&Write],
    stats: &mut Stats,
) -> Vec<Done> {
    let n = group.len();
    let mut fin: Vec<Option<Result<String, Error>>> = (0..n).map(|_| None).collect();
    // Writes replayed with plain appends (a run refused one of their keys).
    let mut plain: HashSet<usize> = HashSet::new();
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
            fail_open(&mut fin, Error::Busy);
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
                fail_open(&mut fin, e);
                break;
            }
        };
        let present0 = presence(st);
        let places0 = st.ipset.places.clone();
        let mut pending = Pending::new(sock.batch(Some(genid)));
        pending.tails = std::mem::take(&mut st.tails);
        let mut touched: HashSet<(Family, TableKind)> = HashSet::new();
        // Raw tables the group changes: whether each had helper rules, and
        // the last write that changed it (its tag goes on the replay).
        let mut raw: Vec<(Family, bool, Option<usize>)> = Vec::new();
        for w in group
            .iter()
            .filter(|w| kinds_of(w).contains(&TableKind::Raw))
        {
            if !raw.iter().any(|(f, ..)| *f == w.family) {
                let t = st.model.table(w.family, TableKind::Raw);
                raw.push((w.family, compile::replay::has_helpers(t), None));
            }
        }
        let mut outs: Vec<Option<Result<String, Error>>> = (0..n).map(|_| None).collect();
        for (i, w) in group.iter().enumerate() {
            if fin[i].is_some() {
                continue;
            }
            let Work::Cmds(cmds) = &w.work else {
                outs[i] = Some(Ok(String::new()));
                continue;
            };
            pending.set_tag(i as Tag);
            let mark = pending.mark(st.view(w.family));
            let places_before = st.ipset.places.clone();
            let mut sps = Vec::new();
            for k in kinds_of(w) {
                let t = st.model.table_mut(w.family, k);
                t.begin();
                sps.push((k, t.savepoint().expect("transaction open")));
                touched.insert((w.family, k));
            }
            let o = PlanOpts {
                plain_appends: opts.plain_appends || plain.contains(&i),
                ..opts
            };
            let mut out = String::new();
            let mut r = Ok(());
            for (j, p) in cmds.iter().enumerate() {
                let (t, view, sets) = st.parts_ipsets(w.family, p.table);
                let mut planner = Planner::new(w.family, view, &mut pending, o).with_ipsets(sets);
                r = planner.run(p.table, t, p.clone(), &mut out).map_err(|e| {
                    if cmds.len() > 1 {
                        Error::CommandAt { index: j, err: e }
                    } else {
                        Error::Command(e)
                    }
                });
                if r.is_err() {
                    break;
                }
            }
            let changes_raw = kinds_of(w).contains(&TableKind::Raw);
            if r.is_ok() && changes_raw {
                let t = st.model.table(w.family, TableKind::Raw);
                if let Err((_, e)) = replay::check(t, w.family) {
                    r = Err(Error::Command(e));
                }
            }
            match r {
                Ok(()) => {
                    outs[i] = Some(Ok(out));
                    if changes_raw {
                        if let Some(x) = raw.iter_mut().find(|x| x.0 == w.family) {
                            x.2 = Some(i);
                        }
                    }
                }
                Err(e) => {
                    for (k, sp) in sps {
                        st.model.table_mut(w.family, k).rollback_to(sp);
                    }
                    pending.truncate(mark, st.view_mut(w.family));
                    st.ipset.places = places_before;
                    outs[i] = Some(Err(e));
                }
            }
        }
        for (f, had, last) in &raw {
            if let Some(i) = last {
                pending.set_tag(*i as Tag);
                replay::emit(&mut pending, *f, st.model.table(*f, TableKind::Raw), *had);
            }
        }
        let end_model = |st: &mut State, keep: bool| {
            for (f, k) in &touched {
                let t = st.model.table_mut(*f, *k);
                if keep {
                    t.commit();
                } else {
                    t.rollback();
                }
            }
        };
        if pending.is_empty() {
            end_model(st, true);
            settle_answers(&mut fin, &mut outs);
            break;
        }
        let t0 = Instant::now();
        let rep = sock.commit(pending.batch());
        stats.commit_time += t0.elapsed();
        match rep {
            Ok(rep) if rep.outcome.is_ok() => {
                end_model(st, true);
                stats.commits += 1;
                after_commit(st, src, opts, &pending, &rep, &touched);
                st.genid = genid.wrapping_add(1);
                let removing: Vec<(Family, TableKind)> = group
                    .iter()
                    .zip(&outs)
                    .filter(|(_, o)| o.as_ref().is_some_and(|r| r.is_ok()))
                    .flat_map(|(w, _)| crate::ipset::rules::removing_tables(w))
                    .collect();
                crate::ipset::rules::collect(sock, st, &removing);
                settle_answers(&mut fin, &mut outs);
                break;
            }
            Ok(rep) if rep.outcome.errors.is_empty() && !nothing_applied(sock, genid) => {
                // No verdict (replies lost) and the generation moved: the
                // batch may have committed; replaying could apply it twice.
                end_model(st, false);
                restore_presence(st, &present0);
                st.ipset.places = places0.clone();
                for (f, k) in &touched {
                    src.invalidate(*f, *k);
                }
                fail_open(&mut fin, Error::Unconfirmed(NO_VERDICT.into()));
                break;
            }
            Ok(rep) => {
                end_model(st, false);
                restore_presence(st, &present0);
                st.ipset.places = places0.clone();
                for (f, k) in &pending.side_effects {
                    src.invalidate(*f, *k);
                }
                let first = rep.outcome.errors.first();
                match first.and_then(|e| e.tag.map(|t| (t as usize, e.code, e.seq))) {
                    // A message of one write refused: that write fails (or,
                    // if a run refused a key it already has, is replayed
                    // with plain appends); the others are replayed.
                    Some((i, code, seq)) if i < n => {
                        let errno = -code;
                        let w = group[i];
                        let rerun_plain = errno == libc::EEXIST
                            && pending.joined.contains(&(i as Tag))
                            && plain.insert(i);
                        if !rerun_plain {
                            if let Some(e) = src.explain(sock, w, errno) {
                                fin[i] = Some(Err(e));
                            } else if !src.widen(w, errno) {
                                let r = describe(&pending, seq, errno);
                                fin[i] = Some(Err(Error::Refused(r)));
                            }
                        }
                    }
                    // The batch as a whole: a generation conflict: replay
                    // after bringing the model up. (A write refused alone
                    // is not a conflict: each such replay answers one write
                    // or changes how one is planned, so they end.)
                    _ => {
                        stats.conflicts += 1;
                        attempt += 1;
                    }
                }
            }
            Err(e) => {
                // Sent or not, the fate is unknown: re-read what we touched
                // and tell every writer.
                end_model(st, false);
                restore_presence(st, &present0);
                st.ipset.places = places0.clone();
                for (f, k) in &touched {
                    src.invalidate(*f, *k);
                }
                fail_open(&mut fin, Error::Unconfirmed(e.to_string()));
                break;
            }
        }
    }
    fin.into_iter()
        .map(|r| Done::Cmds(r.unwrap_or(Err(Error::Busy))))
        .collect()
}

/// What a batch without any answer from the kernel is reported as.
const NO_VERDICT: &str = "the kernel's answer to the transaction was lost";

/// After a batch got no verdict (its replies lost): whether the kernel is
/// still at generation `genid`, so nothing of it was applied and it may be
/// replayed. O(1): one GETGEN.
fn nothing_applied(sock: &mut Socket, genid: u32) -> bool {
    sock.gen().is_ok_and(|g| g.id == genid)
}

fn fail_open(fin: &mut [Option<Result<String, Error>>], e: Error) {
    for f in fin.iter_mut().filter(|f| f.is_none()) {
        *f = Some(Err(e.clone()));
    }
}

/// Each open write's answer is what the model made of it.
fn settle_answers(
    fin: &mut [Option<Result<String, Error>>],
    outs: &mut [Option<Result<String, Error>>],
) {
    for (f, o) in fin.iter_mut().zip(outs.iter_mut()) {
        if f.is_none() {
            *f = Some(o.take().unwrap_or(Ok(String::new())));
        }
    }
}

/// After a committed batch: learn the echoed handles; tables whose echoes
/// were lost, and tables with foreign objects the batch touched (their
/// list may have changed), are read again before next use.
fn after_commit(
    st: &mut State,
    src: &mut dyn Source,
    opts: PlanOpts,
    pending: &Pending,
    rep: &nft::socket::CommitReport,
    touched: &HashSet<(Family, TableKind)>,
) {
    if opts.echo {
        for f in Family::ALL {
            let missing = pending.settle(f, st.view_mut(f), &rep.outcome.echoes);
            if missing > 0 || rep.overrun {
                for (tf, k) in touched.iter().filter(|(tf, _)| *tf == f) {
                    src.invalidate(*tf, *k);
                }
            }
        }
    }
    for key in touched {
        if st.foreign.get(key).is_some_and(|v| !v.is_empty()) {
            src.invalidate(key.0, key.1);
        }
    }
}

/// What the refused message `seq` of `pending` did, in iptables-nft's
/// terms.
fn describe(pending: &Pending, seq: u32, errno: i32) -> Refusal {
    let mut r = Refusal {
        errno,
        op: None,
        object: String::new(),
    };
    let Some(m) = pending.batch_ref().message(seq) else {
        return r;
    };
    let Ok(nf) = m.nf() else { return r };
    let Ok(fam) = nft::Family::from_u8(nf.family) else {
        return r;
    };
    let flags = m.flags;
    use nft::netlink::{NLM_F_APPEND, NLM_F_REPLACE};
    use nft::Object;
    match m.ty & 0xff {
        msg::NEWRULE | msg::DELRULE => {
            let chain = nft::Rule::parse(fam, nf.attrs.clone())
                .map(|x| x.chain)
                .unwrap_or_default();
            r.op = Some(match m.ty & 0xff {
                msg::DELRULE if chain.is_empty() => "TABLE_FLUSH",
                msg::DELRULE => "RULE_DELETE",
                _ if flags & NLM_F_REPLACE != 0 => "RULE_REPLACE",
                _ if flags & NLM_F_APPEND != 0 => "RULE_APPEND",
                _ => "RULE_INSERT",
            });
            r.object = format!("rule in chain {chain}");
        }
        msg::NEWCHAIN | msg::DELCHAIN => {
            let c = nft::Chain::parse(fam, nf.attrs.clone()).unwrap_or_default();
            r.op = Some(match m.ty & 0xff {
                msg::DELCHAIN => "CHAIN_DEL",
                _ if c.handle.is_some() => "CHAIN_RENAME",
                _ if c.policy.is_some() || c.counters.is_some() => "CHAIN_UPDATE",
                _ => "CHAIN_USER_ADD",
            });
            r.object = format!("chain {}", c.name);
        }
        msg::NEWTABLE | msg::DELTABLE => {
            let t = nft::Table::parse(fam, nf.attrs.clone()).unwrap_or_default();
            r.op = Some(if m.ty & 0xff == msg::NEWTABLE {
                "TABLE_ADD"
            } else {
                "TABLE_FLUSH"
            });
            r.object = format!("table {}", t.name);
        }
        msg::NEWSET | msg::DELSET | msg::NEWSETELEM | msg::DELSETELEM => {
            let name = nft::Set::parse(fam, nf.attrs.clone())
                .map(|s| s.name)
                .unwrap_or_default();
            r.op = Some(match m.ty & 0xff {
                msg::NEWSET => "SET_ADD",
                msg::DELSET => "SET_DEL",
                msg::NEWSETELEM => "SET_ELEM_ADD",
                _ => "SET_ELEM_DEL",
            });
            r.object = format!("set {name}");
        }
        _ => {}
    }
    r
}

/// An iptables-restore payload, alone in its transaction. Tables it
/// replaces are written whole at the end; with `--noflush` each line is
/// planned as a command. The model keeps the change only if the kernel
/// took it.
fn restore(
    sock: &mut Socket,
    st: &mut State,
    src: &mut dyn Source,
    opts: PlanOpts,
    w: &Write,
    job: &Restore,
    stats: &mut Stats,
) -> Result<RestoreStats, Failure> {
    let o = RestoreOpts {
        family: w.family,
        noflush: job.noflush,
        counters: job.counters,
        test: job.test,
        table: job.table,
        prog: &w.prog,
    };
    let at0 = |err: Error| Failure { line: 0, err };
    let mut attempt = 0u32;
    let mut plain = false;
    loop {
        if attempt > 0 && !src.backoff(attempt) {
            return Err(at0(Error::Busy));
        }
        let genid = match src.prepare(sock, st, &[w], attempt) {
            Ok(g) => g,
            Err(Error::Busy) => {
                stats.conflicts += 1;
                attempt += 1;
                continue;
            }
            Err(e) => return Err(at0(e)),
        };
        let present0 = presence(st);
        let mut pending = Pending::new(sock.batch(Some(genid)));
        pending.tails = std::mem::take(&mut st.tails);
        let o2 = PlanOpts {
            plain_appends: opts.plain_appends || plain,
            ..opts
        };
        let places0 = st.ipset.places.clone();
        let changes_raw = named_tables(w, job).contains(&(w.family, TableKind::Raw));
        let had_helpers =
            changes_raw && compile::replay::has_helpers(st.model.table(w.family, TableKind::Raw));
        let (rs, view, sets) = st.model_view_ipsets(w.family);
        let mut planner = Planner::new(w.family, view, &mut pending, o2).with_ipsets(sets);
        let (rstats, reverse) = match restore_open(rs, &job.input, &o, &mut planner) {
            Ok(x) => x,
            Err(f) => {
                // The model is back (the restore undoes itself), but the
                // planner may have moved kernel locations in the view (a
                // rename moves its chain's handle): a long-lived view
                // (the daemon's) re-reads the tables named.
                restore_presence(st, &present0);
                st.ipset.places = places0.clone();
                for (f2, k) in named_tables(w, job) {
                    src.invalidate(f2, k);
                }
                return Err(f.into());
            }
        };
        if job.test {
            return Ok(rstats);
        }
        // The replay of raw's helper rules is checked on the whole new
        // table, before it is written (while the lines of its rules are
        // known): a refusal names the line of the rule it cannot replay.
        let refused = if changes_raw {
            replay::check(rs.table(w.family, TableKind::Raw), w.family)
                .err()
                .map(|(id, e)| {
                    let line = planner
                        .p
                        .fresh_tags
                        .get(&(w.family, TableKind::Raw))
                        .and_then(|ft| ft.rules.get(&id))
                        .map_or(planner.p.tag as usize, |t| *t as usize);
                    (line, e)
                })
        } else {
            None
        };
        let finished = match refused {
            Some(x) => Err(x),
            None => planner.finish(rs).map_err(|e| (planner.p.tag as usize, e)),
        };
        if let Err((line, e)) = finished {
            reverse.undo(&mut st.model);
            restore_presence(st, &present0);
            st.ipset.places = places0.clone();
            for (f, k) in named_tables(w, job) {
                src.invalidate(f, k);
            }
            return Err(Failure {
                line,
                err: Error::Command(e),
            });
        }
        if changes_raw {
            let t = st.model.table(w.family, TableKind::Raw);
            replay::emit(&mut pending, w.family, t, had_helpers);
        }
        let touched: HashSet<(Family, TableKind)> = named_tables(w, job).into_iter().collect();
        if pending.is_empty() {
            reverse.keep(&mut st.model);
            return Ok(rstats);
        }
        let t0 = Instant::now();
        let rep = sock.commit(pending.batch());
        stats.commit_time += t0.elapsed();
        match rep {
            Ok(rep) if rep.outcome.is_ok() => {
                reverse.keep(&mut st.model);
                stats.commits += 1;
                after_commit(st, src, opts, &pending, &rep, &touched);
                st.genid = genid.wrapping_add(1);
                crate::ipset::rules::collect(sock, st, &crate::ipset::rules::removing_tables(w));
                return Ok(rstats);
            }
            Ok(rep) if rep.outcome.errors.is_empty() && !nothing_applied(sock, genid) => {
                reverse.undo(&mut st.model);
                restore_presence(st, &present0);
                st.ipset.places = places0.clone();
                for key in &touched {
                    src.invalidate(key.0, key.1);
                }
                return Err(at0(Error::Unconfirmed(NO_VERDICT.into())));
            }
            Ok(rep) => {
                reverse.undo(&mut st.model);
                restore_presence(st, &present0);
                st.ipset.places = places0.clone();
                // Views of replaced tables were forgotten when the restore
                // started them; side effects as for commands.
                for key in touched.iter().chain(pending.side_effects.iter()) {
                    src.invalidate(key.0, key.1);
                }
                let first = rep.outcome.errors.first();
                match first.and_then(|e| e.tag.map(|t| (t, e.code, e.seq))) {
                    Some((tag, code, seq)) => {
                        let errno = -code;
                        if errno == libc::EEXIST && !pending.joined.is_empty() && !plain {
                            plain = true;
                        } else if let Some(e) = src.explain(sock, w, errno) {
                            return Err(Failure {
                                line: tag as usize,
                                err: e,
                            });
                        } else if !src.widen(w, errno) {
                            return Err(Failure {
                                line: tag as usize,
                                err: Error::Refused(describe(&pending, seq, errno)),
                            });
                        }
                    }
                    None => {
                        stats.conflicts += 1;
                        attempt += 1;
                    }
                }
            }
            Err(e) => {
                reverse.undo(&mut st.model);
                restore_presence(st, &present0);
                st.ipset.places = places0.clone();
                for key in &touched {
                    src.invalidate(key.0, key.1);
                }
                return Err(at0(Error::Unconfirmed(e.to_string())));
            }
        }
    }
}

/// The tables a restore names (those it may change).
fn named_tables(w: &Write, job: &Restore) -> Vec<(Family, TableKind)> {
    crate::scope::restore_tables(&job.input, job.table)
        .into_iter()
        .map(|k| (w.family, k))
        .collect()
}

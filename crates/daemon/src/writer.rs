//! The one writer: every write of every client goes through here, in
//! arrival order — committed by the writer thread, or inline by the
//! client's connection thread when nothing is queued or in flight (which
//! saves two thread hand-offs per write for one client at a time). While a
//! commit is in flight new writes queue; the next
//! group takes all of them (up to [`crate::Config::max_group`]) and
//! commits them as one kernel transaction, because each commit costs the
//! kernel O(chains in the namespace) no matter how small it is.
//!
//! Contract: a write is answered only after the kernel committed it (or
//! refused it); a write that fails — in the model or in the kernel — leaves
//! nothing behind, and the other writes of its group still commit.

use crate::metrics::Metrics;
use crate::warm::{Warm, KINDS};
use crate::Shared;
use iptables::exec::{restore_with, RestoreOpts};
use iptables::parse::Parsed;
use iptables::Error;
use keeper::session::{errno_err, kernel_err};
use nft::Socket;
use ruleset::{Family, Ruleset, TableKind};
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// What a write does.
pub enum Work {
    /// iptables commands applied as one unit (a command line: one; typed
    /// operations: all or none).
    Cmds(Vec<Parsed>),
    /// An iptables-restore payload (committed alone, in one transaction).
    Restore {
        input: String,
        noflush: bool,
        counters: bool,
        test: bool,
        table: Option<TableKind>,
    },
    /// Nothing: only bring the model up to date (a read that found tables
    /// changed by someone else waits for this).
    Sync,
}

/// One queued write and where to answer it.
pub struct Write {
    pub family: Family,
    pub prog: String,
    pub work: Work,
    /// Peer description for the log (`uid=0 pid=42`).
    pub who: String,
    /// The request in one line, for the log.
    pub what: String,
    pub reply: mpsc::Sender<Done>,
    pub queued: Instant,
}

/// The answer to a write.
#[derive(Debug, Default)]
pub struct Done {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
    /// Per command of a typed-operations write: 0 or the exit code, and
    /// iptables' message.
    pub results: Vec<(i32, String)>,
}

/// The queue between the connections and the writer.
#[derive(Default)]
pub struct Queue {
    q: Mutex<VecDeque<Write>>,
    cv: Condvar,
    /// Writes the writer thread has taken and not yet answered: an inline
    /// commit must not overtake them (arrival order).
    in_hand: AtomicUsize,
}

impl Queue {
    pub fn push(&self, w: Write) {
        self.q
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(w);
        self.cv.notify_one();
    }

    /// Waits for at least one write, then takes up to `max` of them.
    fn take(&self, max: usize) -> Vec<Write> {
        let mut q = self.q.lock().unwrap_or_else(|e| e.into_inner());
        while q.is_empty() {
            q = self.cv.wait(q).unwrap_or_else(|e| e.into_inner());
        }
        let n = q.len().min(max.max(1));
        self.in_hand.fetch_add(n, Ordering::SeqCst);
        q.drain(..n).collect()
    }

    /// Nothing queued and nothing taken but unanswered.
    fn idle(&self) -> bool {
        let q = self.q.lock().unwrap_or_else(|e| e.into_inner());
        q.is_empty() && self.in_hand.load(Ordering::SeqCst) == 0
    }

    pub fn len(&self) -> usize {
        self.q.lock().map(|q| q.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Attempts of one group before its writes fail as "changed concurrently".
const ATTEMPTS: usize = 8;

/// The writer thread's loop. Never returns.
pub fn run(sh: &Shared) -> ! {
    loop {
        let group = sh.queue.take(sh.cfg.max_group);
        let n = group.len();
        // Let readers that queued behind the last commit in first: reads
        // never wait behind more than one commit.
        sh.let_readers_in();
        let mut sock = sh.kernel_socket();
        process(sh, &mut sock, group);
        sh.queue.in_hand.fetch_sub(n, Ordering::SeqCst);
    }
}

/// Commit `w` on the calling thread if no write is queued or in flight,
/// saving the two thread hand-offs of the queue (the common case of one
/// client at a time), and return `None`; otherwise hand it back for the
/// queue. Either way the answer goes to `w.reply`. Under load the socket
/// is busy or the queue is not empty, so writes still fold into groups.
pub fn try_inline(sh: &Shared, w: Write) -> Option<Write> {
    let Some(mut sock) = sh.try_kernel_socket() else {
        return Some(w);
    };
    if !sh.queue.idle() {
        return Some(w);
    }
    process(sh, &mut sock, vec![w]);
    None
}

/// Commit one group: runs of commands as one transaction each, restores
/// alone, in arrival order.
fn process(sh: &Shared, sock: &mut Socket, group: Vec<Write>) {
    let mut cmds = Vec::new();
    for w in group {
        match w.work {
            Work::Cmds(_) | Work::Sync => cmds.push(w),
            Work::Restore { .. } => {
                commit_cmds(sh, sock, std::mem::take(&mut cmds));
                restore(sh, sock, w);
            }
        }
    }
    commit_cmds(sh, sock, cmds);
}

/// Bring the model to the kernel's current generation: drain the events
/// up to it, then re-read the tables someone else changed. Unless `force`,
/// trusts the model without asking the kernel when the events drained show
/// nothing since (see [`crate::coherence::Coherence::quiet_since`]).
fn sync(sh: &Shared, warm: &mut Warm, sock: &mut Socket, force: bool) -> Result<(), Error> {
    sh.coherence.drain(&sh.metrics);
    if !force && warm.genid != 0 && sh.coherence.quiet_since(warm.genid) {
        return Ok(());
    }
    let g = sock.gen().map_err(kernel_err)?.id;
    let mut stale = sh.coherence.take_stale();
    // Everything is re-read anyway when events were lost: no need to wait
    // for a NEWGEN that may have been among them.
    if g != warm.genid && !stale.all {
        if !sh
            .coherence
            .wait_seen(g, Duration::from_secs(2), &sh.metrics)
        {
            stale.all = true;
        }
        let more = sh.coherence.take_stale();
        stale.all |= more.all;
        stale.tables.extend(more.tables);
    }
    let targets: Vec<(Family, TableKind)> = if stale.all {
        [Family::Ipv4, Family::Ipv6]
            .into_iter()
            .flat_map(|f| KINDS.map(|k| (f, k)))
            .collect()
    } else {
        stale.tables.into_iter().collect()
    };
    for (f, k) in targets {
        let t0 = Instant::now();
        warm.resync(sock, f, k).map_err(kernel_err)?;
        sh.metrics.resyncs.inc();
        crate::log::line(&format!(
            "event=resync family={} table={} us={}",
            fam_name(f),
            k.name(),
            t0.elapsed().as_micros()
        ));
    }
    warm.genid = g;
    Ok(())
}

pub fn fam_name(f: Family) -> &'static str {
    match f {
        Family::Ipv4 => "ip",
        _ => "ip6",
    }
}

/// Tables a write touches.
fn kinds_of(w: &Write) -> Vec<TableKind> {
    let mut v: Vec<TableKind> = match &w.work {
        Work::Cmds(c) => c.iter().map(|p| p.table).collect(),
        _ => Vec::new(),
    };
    v.sort_by_key(|k| k.name());
    v.dedup();
    v
}

/// Apply `writes` to the model and the kernel as one transaction.
fn commit_cmds(sh: &Shared, sock: &mut Socket, writes: Vec<Write>) {
    if writes.is_empty() {
        return;
    }
    let n = writes.len();
    let started = Instant::now();
    // Final answers: set for writes the kernel refused (they are left out
    // of later attempts) and, at the end, for all.
    let mut fin: Vec<Option<Result<String, Error>>> = (0..n).map(|_| None).collect();
    let mut outcome: Vec<Option<Result<String, Error>>> = (0..n).map(|_| None).collect();
    let mut guard = sh.write_lock();
    let warm: &mut Warm = &mut guard;
    let mut committed = false;
    for attempt in 0..ATTEMPTS {
        if let Err(e) = sync(sh, warm, sock, attempt > 0) {
            for f in fin.iter_mut().filter(|f| f.is_none()) {
                *f = Some(Err(e.clone()));
            }
            break;
        }
        let genid = warm.genid;
        warm.v4.ap.rebatch(nft::Batch::new(0, None));
        warm.v6.ap.rebatch(nft::Batch::new(0, None));
        // Which tables exist: a write may create one; if the batch is
        // abandoned the kernel still lacks it.
        let present0 = (warm.v4.ap.present.clone(), warm.v6.ap.present.clone());
        let mut batch = sock.batch(Some(genid));
        let mut touched: HashSet<(Family, TableKind)> = HashSet::new();
        for (i, w) in writes.iter().enumerate() {
            outcome[i] = None;
            if fin[i].is_some() {
                continue;
            }
            let Work::Cmds(cmds) = &w.work else {
                outcome[i] = Some(Ok(String::new()));
                continue;
            };
            let fs = warm.fam_mut(w.family);
            fs.ap.batch = std::mem::replace(&mut batch, nft::Batch::new(0, None));
            fs.ap.tag = i as nft::Tag;
            let mark = fs.ap.mark();
            let mut sps = Vec::new();
            for k in kinds_of(w) {
                let t = fs.table_mut(k);
                t.begin();
                sps.push((k, t.savepoint().expect("transaction open")));
                touched.insert((w.family, k));
            }
            let mut out = String::new();
            let mut r = Ok(());
            for p in cmds {
                let crate::warm::FamState { tables, ap, .. } = &mut *fs;
                let family = w.family;
                let t = tables
                    .entry(p.table)
                    .or_insert_with(|| ruleset::Table::new(family, p.table));
                r = ap.run(p.table, t, p.clone(), &mut out);
                if r.is_err() {
                    break;
                }
            }
            if let Err(e) = r {
                for (k, sp) in sps {
                    fs.table_mut(k).rollback_to(sp);
                }
                fs.ap.truncate(mark);
                outcome[i] = Some(Err(e));
            } else {
                outcome[i] = Some(Ok(out));
            }
            batch = std::mem::replace(&mut fs.ap.batch, nft::Batch::new(0, None));
        }
        let end_model = |warm: &mut Warm, keep: bool| {
            for (f, k) in &touched {
                let t = warm.fam_mut(*f).table_mut(*k);
                if keep {
                    t.commit();
                } else {
                    t.rollback();
                }
            }
        };
        if batch.is_empty() {
            end_model(warm, true);
            committed = true;
            break;
        }
        let t0 = Instant::now();
        let rep = sock.commit(&mut batch);
        sh.metrics.commit_latency.observe(t0.elapsed());
        match rep {
            Ok(rep) if rep.outcome.is_ok() => {
                end_model(warm, true);
                for fs in [&mut warm.v4, &mut warm.v6] {
                    let missing = fs.ap.learn(&rep.outcome.echoes);
                    if missing > 0 || rep.overrun {
                        for (f, k) in touched.iter().filter(|(f, _)| *f == fs.family) {
                            sh.coherence.mark(*f, *k);
                        }
                    }
                }
                warm.genid = genid.wrapping_add(1);
                sh.metrics.commits.inc();
                sh.metrics.batch_writes.observe_count(n as u64);
                committed = true;
                break;
            }
            Ok(rep) => {
                end_model(warm, false);
                (warm.v4.ap.present, warm.v6.ap.present) = present0;
                mark_side_effects(sh, warm);
                let e = rep.outcome.errors.first();
                match e.and_then(|e| e.tag.map(|t| (t, e.code))) {
                    // A message of one write refused: that write fails,
                    // the others are replayed on the (rolled back) model.
                    Some((tag, code)) if (tag as usize) < n => {
                        fin[tag as usize] = Some(Err(errno_err(-code)));
                    }
                    // The batch as a whole (generation changed, or no
                    // verdict): replay after syncing.
                    _ => sh.metrics.conflicts.inc(),
                }
            }
            Err(e) => {
                // Sent or not, the fate is unknown: re-read what we touched
                // and tell every writer.
                end_model(warm, false);
                (warm.v4.ap.present, warm.v6.ap.present) = present0;
                for (f, k) in &touched {
                    sh.coherence.mark(*f, *k);
                }
                let msg = Error::other(format!(
                    "netlink: {e}; the change may or may not be in the kernel"
                ));
                for f in fin.iter_mut().filter(|f| f.is_none()) {
                    *f = Some(Err(msg.clone()));
                }
                break;
            }
        }
    }
    if !committed {
        let busy = errno_err(11);
        for (i, f) in fin.iter_mut().enumerate() {
            if f.is_none() {
                *f = Some(
                    outcome[i]
                        .take()
                        .filter(|r| r.is_err())
                        .unwrap_or(Err(busy.clone())),
                );
            }
        }
    }
    drop(guard);
    for (i, w) in writes.into_iter().enumerate() {
        let r = fin[i]
            .take()
            .or_else(|| outcome[i].take())
            .unwrap_or(Ok(String::new()));
        answer(sh, w, r, started);
    }
}

/// Side effects of an abandoned batch the model rollback can't undo.
fn mark_side_effects(sh: &Shared, warm: &mut Warm) {
    for fs in [&mut warm.v4, &mut warm.v6] {
        for k in fs.ap.side_effects.drain() {
            sh.coherence.mark(fs.family, k);
        }
    }
}

fn answer(sh: &Shared, w: Write, r: Result<String, Error>, started: Instant) {
    let mut d = Done::default();
    let cmds = match &w.work {
        Work::Cmds(c) => c.len(),
        _ => 0,
    };
    match r {
        Ok(out) => {
            d.stdout = out;
            d.results = vec![(0, String::new()); cmds];
        }
        Err(e) => {
            d.stderr = e.render(&w.prog, None);
            d.code = e.exit_code();
            d.results = vec![(d.code, d.stderr.trim_end().to_string()); cmds];
        }
    }
    finish(sh, w, d, started);
}

fn finish(sh: &Shared, w: Write, d: Done, started: Instant) {
    if !matches!(w.work, Work::Sync) {
        sh.metrics.count_write(&w.work, d.code);
    }
    // --quiet drops the per-write line, never a failed write's.
    if !matches!(w.work, Work::Sync) && (!sh.cfg.quiet || d.code != 0) {
        crate::log::line(&format!(
            "event=write {} family={} what={:?} exit={} queued_us={} us={}",
            w.who,
            fam_name(w.family),
            w.what,
            d.code,
            started.duration_since(w.queued).as_micros(),
            w.queued.elapsed().as_micros()
        ));
    }
    // The client may have gone; its write stands.
    let _ = w.reply.send(d);
}

/// An iptables-restore payload: alone in its transaction.
fn restore(sh: &Shared, sock: &mut Socket, w: Write) {
    let started = Instant::now();
    let Work::Restore {
        input,
        noflush,
        counters,
        test,
        table,
    } = &w.work
    else {
        return;
    };
    let o = RestoreOpts {
        family: w.family,
        noflush: *noflush,
        counters: *counters,
        test: *test,
        table: *table,
        prog: &w.prog,
    };
    let mut guard = sh.write_lock();
    let warm: &mut Warm = &mut guard;
    let mut d = Done::default();
    if let Err(e) = sync(sh, warm, sock, true) {
        d.stderr = e.render(&w.prog, None);
        d.code = e.exit_code();
        drop(guard);
        return finish(sh, w, d, started);
    }
    let genid = warm.genid;
    let kinds: Vec<TableKind> =
        keeper::scope::restore_scopes(input, w.family, o.noflush, o.table, o.prog)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
    let fs = warm.fam_mut(w.family);
    fs.ap.rebatch(sock.batch(Some(genid)));
    let mut rs: Ruleset<iptables::Rule> = Ruleset::new();
    for k in &kinds {
        let t = std::mem::replace(fs.table_mut(*k), ruleset::Table::new(w.family, *k));
        rs.replace_table(t);
    }
    let mut r = restore_with(&mut rs, input, &o, &mut fs.ap);
    if r.is_ok() && !o.test {
        // Appends the restore deferred, runs compiled (keeper::runs).
        if let Err(err) = fs.ap.finish(&rs) {
            r = Err(iptables::exec::RestoreError { line: 0, err });
        }
    }
    for k in &kinds {
        let t = std::mem::replace(
            rs.table_mut(w.family, *k),
            ruleset::Table::new(w.family, *k),
        );
        fs.tables.insert(*k, t);
    }
    let result = match r {
        Err(e) => Err((e.render(&w.prog), e.exit_code())),
        // --test: parsed and checked; the model took it, the kernel not.
        Ok(_) if o.test => Err((String::new(), 0)),
        Ok(_) => {
            let mut batch = std::mem::replace(&mut fs.ap.batch, nft::Batch::new(0, None));
            let t0 = Instant::now();
            let rep = if batch.is_empty() {
                Ok(Default::default())
            } else {
                sock.commit(&mut batch)
            };
            sh.metrics.commit_latency.observe(t0.elapsed());
            match rep {
                Ok(rep) if batch.is_empty() || rep.outcome.is_ok() => {
                    let missing = fs.ap.learn(&rep.outcome.echoes);
                    if missing > 0 || rep.overrun {
                        for k in &kinds {
                            sh.coherence.mark(w.family, *k);
                        }
                    }
                    if !batch.is_empty() {
                        warm.genid = genid.wrapping_add(1);
                        sh.metrics.commits.inc();
                    }
                    sh.metrics.batch_writes.observe_count(1);
                    Ok(())
                }
                Ok(rep) => {
                    let code = rep.outcome.errors.first().map(|e| -e.code).unwrap_or(11);
                    let e = errno_err(code);
                    Err((
                        iptables::exec::RestoreError {
                            line: 0,
                            err: e.clone(),
                        }
                        .render(&w.prog),
                        e.exit_code(),
                    ))
                }
                Err(e) => {
                    let e = kernel_err(e);
                    Err((e.render(&w.prog, None), e.exit_code()))
                }
            }
        }
    };
    if let Err((text, code)) = result {
        // The model took (part of) the input the kernel does not have, or
        // a --test run: the touched tables are re-read before next use.
        for k in &kinds {
            sh.coherence.mark(w.family, *k);
        }
        d.stderr = text;
        d.code = code;
    }
    drop(guard);
    finish(sh, w, d, started);
}

impl Metrics {
    fn count_write(&self, w: &Work, code: i32) {
        let kind = match w {
            Work::Cmds(c) if c.len() == 1 => crate::metrics::op_kind(&c[0].command),
            Work::Cmds(_) => "ops",
            Work::Restore { .. } => "restore",
            Work::Sync => "sync",
        };
        self.ops(kind, code == 0);
    }
}

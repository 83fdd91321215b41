//! The one writer: every write of every client goes through here, in
//! arrival order — committed by the writer thread, or inline by the
//! client's connection thread when nothing is queued or in flight (which
//! saves two thread hand-offs per write for one client at a time). While a
//! commit is in flight new writes queue; the next group takes all of them
//! (up to [`crate::Config::max_group`]) and commits them through the
//! transaction core (`keeper::txn`) as one kernel transaction, because each
//! commit costs the kernel O(chains in the namespace) no matter how small
//! it is.
//!
//! Contract: a write is answered only after the kernel committed it (or
//! refused it); a write that fails — in the model or in the kernel — leaves
//! nothing behind, and the other writes of its group still commit (see
//! `keeper::txn`).

use crate::warm::{fam_name, Warm};
use crate::Shared;
use keeper::plan::PlanOpts;
use keeper::txn::{self, Done, Work};
use nft::Socket;
use ruleset::Family;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};
use std::time::Instant;

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

/// How the daemon writes: handles learnt from echoes, appends placed by
/// the whole model.
pub fn plan_opts(sh: &Shared) -> PlanOpts {
    PlanOpts {
        echo: true,
        compile: sh.cfg.settings.compile,
        whole_model: true,
        plain_appends: false,
    }
}

/// Commit one group through the transaction core and answer each write.
fn process(sh: &Shared, sock: &mut Socket, group: Vec<Write>) {
    let started = Instant::now();
    let mut metas = Vec::with_capacity(group.len());
    let mut writes = Vec::with_capacity(group.len());
    for w in group {
        writes.push(txn::Write {
            family: w.family,
            prog: w.prog,
            work: w.work,
        });
        metas.push((w.who, w.what, w.reply, w.queued));
    }
    let mut stats = txn::Stats::default();
    let big = writes.iter().any(|w| match &w.work {
        Work::Ipset(job) => job.input.as_ref().is_some_and(|i| i.len() > TRIM_INPUT),
        Work::Restore(r) => r.input.len() > TRIM_INPUT,
        _ => false,
    });
    let (done, garbage) = {
        let mut guard = sh.write_lock();
        let mut src = Warm { sh };
        let done = txn::apply(
            sock,
            &mut guard,
            &mut src,
            plan_opts(sh),
            &writes,
            &mut stats,
        );
        // ipsets are read per write (see `Warm::prepare`): what this group
        // read goes now, unless it only read static sets, which answer the
        // next reads while the kernel stays at this generation.
        let reads = writes.iter().all(|w| match &w.work {
            Work::Ipset(job) => keeper::ipset::kept::reads_only(job),
            _ => false,
        });
        let st = &mut *guard;
        if stats.commits == 0 && reads && keeper::ipset::kept::all_static(&st.ipset, &st.model) {
            st.ipset.kept_at = Some(st.genid);
        } else {
            st.ipset = keeper::ipset::Sets::default();
        }
        (done, st.garbage())
    };

    let m = &sh.metrics;
    if stats.commits > 0 {
        m.commit_latency.observe(stats.commit_time);
        for _ in 0..stats.commits {
            m.commits.inc();
        }
        m.batch_writes.observe_count(writes.len() as u64);
    }
    for _ in 0..stats.conflicts {
        m.conflicts.inc();
    }
    for ((w, d), (who, what, reply, queued)) in writes.iter().zip(done).zip(metas) {
        let code = exit_code(&d);
        if !matches!(w.work, Work::Sync) {
            let ok = succeeded(&w.work, code);
            m.ops(op_kind(&w.work), ok);
            // --quiet drops the per-write line, never a failed write's.
            if !sh.cfg.quiet || !ok {
                crate::log::line(&format!(
                    "event=write {who} family={} what={what:?} exit={code} queued_us={} us={}",
                    fam_name(w.family),
                    started.duration_since(queued).as_micros(),
                    queued.elapsed().as_micros()
                ));
            }
        }
        // The client may have gone; its write stands.
        let _ = reply.send(d);
    }
    // Freed after the replies, off this thread: what a flush removed can
    // be 50k rules (~2 ms to free), and an inline write's client is
    // answered only once this thread returns.
    sh.reap(Box::new(move || {
        drop(garbage);
        drop(writes);
        if big {
            crate::give_back_memory();
        }
    }));
}

/// A group with a restore payload larger than this (bytes) hands the
/// heap it freed back to the system afterwards: a million-member `ipset
/// restore` builds ~1.5 GB of transient model and batch, which the
/// allocator would otherwise keep for the daemon's lifetime.
const TRIM_INPUT: usize = 1 << 20;

/// Whether `work` that exited with `code` did what it was asked: `ipset
/// test`'s 1 is its answer "not a member", not a failure (fail2ban asks
/// it all the time).
fn succeeded(work: &Work, code: i32) -> bool {
    match work {
        Work::Ipset(job) if code == 1 => {
            let words: Vec<&str> = job.args.iter().map(String::as_str).collect();
            matches!(
                ipset::parse::verb(&words),
                Some((ipset::parse::Cmd::Test, _))
            )
        }
        _ => code == 0,
    }
}

/// The exit code iptables would give for `d`.
pub fn exit_code(d: &Done) -> i32 {
    match d {
        Done::Cmds(Err(e)) | Done::Sync(Err(e)) => e.to_iptables().exit_code(),
        Done::Restore(Err(f)) => f.to_restore_error().exit_code(),
        Done::Ipset(o) => o.code,
        _ => 0,
    }
}

fn op_kind(w: &Work) -> &'static str {
    match w {
        Work::Cmds(c) if c.len() == 1 => crate::metrics::op_kind(&c[0].command),
        Work::Cmds(_) => "ops",
        Work::Restore(_) => "restore",
        Work::Sync => "sync",
        Work::Ipset(_) => "ipset",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipset_test_that_answers_no_succeeded() {
        let ipset = |line: &str| {
            Work::Ipset(keeper::ipset::Job {
                args: line.split_whitespace().map(str::to_string).collect(),
                input: None,
            })
        };
        // (work, exit code, succeeded)
        let cases = [
            (ipset("test s 10.0.0.1"), 1, true),
            (ipset("-T s 10.0.0.1"), 1, true),
            (ipset("-q test s 10.0.0.1"), 1, true),
            (ipset("test s 10.0.0.1"), 0, true),
            (ipset("test s 10.0.0.1"), 2, false),
            (ipset("add s 10.0.0.1"), 1, false),
            (ipset("add s 10.0.0.1"), 0, true),
            (Work::Sync, 1, false),
        ];
        for (i, (w, code, want)) in cases.into_iter().enumerate() {
            assert_eq!(succeeded(&w, code), want, "case {i}: exit {code}");
        }
    }
}

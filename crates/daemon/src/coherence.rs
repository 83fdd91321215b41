//! Coherence with the kernel: an nftables event socket tells which of our
//! tables someone else changed (nft, another nfkeeper process, a restarted
//! daemon), so the writer re-reads exactly those before it uses them. Our
//! own changes are recognised by the netlink port id of the writer's
//! socket, which the kernel puts in every notification.
//!
//! No thread waits on the socket. The kernel queues notifications on it
//! when a transaction commits; they are read without blocking and folded
//! in ([`Coherence::drain`]) by whoever needs them next: the writer before
//! it decides whether the model may be trusted, a read before it lists the
//! model, and a slow timer ([`tick`]) while no request comes, so the queue
//! cannot fill up and foreign changes are logged within a tick. A commit
//! of ours thus wakes nobody (waking an idle thread per commit cost tens
//! of µs on the critical path of every write).
//!
//! Ordering: each committed transaction ends with a NEWGEN notification
//! carrying the new generation id; once the NEWGEN of generation G has
//! been drained, every change up to G is flagged. The writer, finding the
//! kernel at G, drains until it has seen that before trusting the model
//! ([`Coherence::wait_seen`]). Events are read and folded under one lock,
//! so they are folded in the kernel's order whoever drains.

use crate::metrics::Metrics;
use nft::{EventSocket, Socket};
use ruleset::{Family, TableKind};
use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often [`tick`] drains while no request does.
pub const TICK: Duration = Duration::from_millis(250);

/// Tables to re-read.
#[derive(Default, Debug)]
pub struct Stale {
    /// Events were lost (or none can be received): re-read everything.
    pub all: bool,
    pub tables: HashSet<(Family, TableKind)>,
}

#[derive(Default)]
struct State {
    stale: Stale,
    /// The newest generation whose NEWGEN has been drained.
    seen_gen: Option<u32>,
    /// The event socket is open (else nothing is ever "seen").
    watching: bool,
    /// Port id of the writer's socket: its notifications are ours.
    our_portid: u32,
    /// Tables changed by someone else since the last NEWGEN.
    pending: Vec<(Family, TableKind)>,
}

/// Lock order: `events` before `st` (draining holds both; everything else
/// takes only `st`, briefly).
#[derive(Default)]
pub struct Coherence {
    st: Mutex<State>,
    /// The non-blocking event socket, `None` if not watching. Whoever holds
    /// it reads and folds in what it read before letting go.
    events: Mutex<Option<EventSocket>>,
}

/// Our table `name` in nftables family `fam`, if it is one.
fn ours(fam: u8, name: &str) -> Option<(Family, TableKind)> {
    let family = match fam {
        2 => Family::Ipv4,
        10 => Family::Ipv6,
        _ => return None,
    };
    let kind = name.strip_prefix("nfkeeper_")?;
    TableKind::from_name(kind).map(|k| (family, k))
}

impl Coherence {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn events(&self) -> MutexGuard<'_, Option<EventSocket>> {
        self.events.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Set before [`Coherence::watch`] and before any commit.
    pub fn set_our_portid(&self, p: u32) {
        self.lock().our_portid = p;
    }

    /// Subscribe to nftables events of the calling thread's network
    /// namespace. Call it before the model is read, so that a change after
    /// the read is seen. False (logged) if the socket can't be opened: the
    /// daemon still works, re-reading every table whenever the generation
    /// moved.
    pub fn watch(&self) -> bool {
        self.watch_with(EventSocket::open())
    }

    /// [`Coherence::watch`] on a given event socket (or its opening error).
    pub fn watch_with(&self, es: Result<EventSocket, nft::Error>) -> bool {
        match es.and_then(|es| es.set_nonblocking().map(|()| es)) {
            Ok(es) => {
                *self.events() = Some(es);
                self.lock().watching = true;
                true
            }
            Err(e) => {
                crate::log::line(&format!(
                    "event=warning what=\"no nftables events ({e}); every foreign commit re-reads all tables\""
                ));
                false
            }
        }
    }

    /// Read everything queued on the event socket, without blocking, and
    /// fold it in: foreign changes of our tables become stale at their
    /// NEWGEN (and are logged and counted), lost events make everything
    /// stale. Costs one non-blocking receive when nothing is queued; a
    /// no-op when not watching.
    pub fn drain(&self, m: &Metrics) {
        if let Some(es) = self.events().as_mut() {
            self.read(es, m, None);
        }
    }

    /// One read, then everything still queued: first waits up to `wait`
    /// for something to arrive (`None`: not at all). False if the socket
    /// failed (then everything is stale).
    fn read(&self, es: &mut EventSocket, m: &Metrics, wait: Option<Duration>) -> bool {
        let mut r = match wait {
            Some(t) => es.recv(Some(t)),
            None => es.try_recv(),
        };
        loop {
            match r {
                Ok(evs) if evs.is_empty() => return true,
                Ok(evs) => {
                    if evs.iter().any(|e| e.overrun) {
                        m.resyncs_lost_events.inc();
                        self.lost_events();
                    }
                    self.absorb(&evs, m);
                }
                Err(e) => {
                    crate::log::line(&format!("event=warning what=\"events: {e}\""));
                    self.lost_events();
                    return false;
                }
            }
            r = es.try_recv();
        }
    }

    /// Flag one table for re-reading.
    pub fn mark(&self, f: Family, k: TableKind) {
        self.lock().stale.tables.insert((f, k));
    }

    /// Whether anything is flagged (as of the last drain).
    pub fn has_stale(&self) -> bool {
        let s = self.lock();
        s.stale.all || !s.stale.tables.is_empty()
    }

    pub fn take_stale(&self) -> Stale {
        std::mem::take(&mut self.lock().stale)
    }

    /// Whether the model at generation `g` may be trusted without asking
    /// the kernel: events are watched, nothing is flagged stale, and no
    /// generation after `g` has been drained. The caller drains first; a
    /// change whose events are still in flight is caught by the kernel
    /// instead (the commit carries `g`).
    pub fn quiet_since(&self, g: u32) -> bool {
        let s = self.lock();
        s.watching
            && s.stale.tables.is_empty()
            && !s.stale.all
            && s.seen_gen.is_none_or(|seen| g.wrapping_sub(seen) < 1 << 31)
    }

    fn seen(&self, g: u32) -> bool {
        // Generation ids wrap; "seen ≥ g" within half the range.
        self.lock()
            .seen_gen
            .is_some_and(|seen| seen.wrapping_sub(g) < 1 << 31)
    }

    /// Drain until generation `g` (or a later one) has been seen, waiting
    /// for the socket between attempts. False on timeout, on a socket
    /// error or when not watching: the caller must then assume every
    /// table changed.
    pub fn wait_seen(&self, g: u32, timeout: Duration, m: &Metrics) -> bool {
        let deadline = Instant::now() + timeout;
        let mut guard = self.events();
        let Some(es) = guard.as_mut() else {
            return false;
        };
        let mut wait = None;
        loop {
            if !self.read(es, m, wait) {
                return false;
            }
            if self.seen(g) {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            wait = Some(left);
        }
    }

    /// Fold one batch of events, in the order the kernel queued them.
    fn absorb(&self, events: &[nft::events::Event], m: &Metrics) {
        let mut s = self.lock();
        for e in events {
            if e.msg == nft::msg::NEWGEN {
                let foreign = e.portid != s.our_portid && !s.pending.is_empty();
                if foreign {
                    let who = match (&e.proc_name, e.proc_pid) {
                        (Some(n), Some(p)) => format!("{n}[{p}]"),
                        (None, Some(p)) => format!("pid {p}"),
                        _ => "unknown".to_string(),
                    };
                    let tables: Vec<String> = s
                        .pending
                        .iter()
                        .map(|(f, k)| {
                            format!("{} nfkeeper_{}", crate::warm::fam_name(*f), k.name())
                        })
                        .collect();
                    m.foreign_changes.inc();
                    crate::log::line(&format!(
                        "event=foreign_change by={who:?} tables={:?} genid={}",
                        tables.join(","),
                        e.genid.unwrap_or(0)
                    ));
                }
                let pending = std::mem::take(&mut s.pending);
                s.stale.tables.extend(pending);
                if let Some(g) = e.genid {
                    s.seen_gen = Some(g);
                }
                continue;
            }
            if e.portid == s.our_portid && s.our_portid != 0 {
                continue;
            }
            if let Some(t) = e.table.as_deref().and_then(|n| ours(e.family, n)) {
                if !s.pending.contains(&t) {
                    s.pending.push(t);
                }
            }
        }
    }

    /// Before a big commit of ours: fold in what is queued, then stop
    /// listening, so that the kernel builds no notification of each of its
    /// objects (a million-element set would cost more in notifications
    /// than in the commit). True if paused; then [`Coherence::resume`]
    /// must follow the commit. False (still listening) when not watching
    /// or the socket cannot leave its group.
    pub fn pause(&self, m: &Metrics) -> bool {
        let mut guard = self.events();
        let Some(es) = guard.as_mut() else {
            return false;
        };
        if !self.read(es, m, None) {
            return false;
        }
        es.leave().is_ok()
    }

    /// After a paused commit: listen again, then ask the kernel which
    /// generation it is at. `expect` is the generation the commit left
    /// (`None`: unknown); one before it is a commit the kernel found
    /// nothing to do in (it then keeps its generation). Any other
    /// generation means someone else committed while nobody listened:
    /// every table is stale, as after lost events. Errors read as lost
    /// events too. Returns the generation when nothing was lost.
    ///
    /// A batch of ours that changed nothing while exactly one foreign
    /// commit landed would also read as `expect`: callers pause only for
    /// batches that change something (`Pending::bulk` is set by deletes
    /// of chains the model holds rules of, or of unknown content).
    pub fn resume(&self, sock: &mut Socket, expect: Option<u32>, m: &Metrics) -> Option<u32> {
        let rejoined = self.events().as_mut().is_some_and(|es| es.rejoin().is_ok());
        let now = sock.gen().ok().map(|g| g.id);
        let ours = |n: u32| expect.is_some_and(|e| n == e || n == e.wrapping_sub(1));
        match now {
            Some(n) if rejoined && ours(n) => Some(n),
            _ => {
                m.resyncs_lost_events.inc();
                self.lost_events();
                None
            }
        }
    }

    fn lost_events(&self) {
        let mut s = self.lock();
        s.stale.all = true;
        s.seen_gen = None;
    }
}

/// The timer thread's body: drain every `every`, forever, so the socket's
/// queue cannot fill up while no request drains it, and foreign changes
/// are logged within a tick. It sleeps in between rather than waiting on
/// the socket, so commits don't wake it.
pub fn tick(c: &Coherence, m: &Metrics, every: Duration) -> ! {
    loop {
        std::thread::sleep(every);
        c.drain(m);
    }
}

#[cfg(test)]
mod tests {
    //! Against a real kernel, each test in a fresh network namespace
    //! (skipped when not root). No thread drains here: everything is seen
    //! only when asked for.
    use super::*;
    use nft::batch::Placement;
    use nft::{Chain, Expr, Rule, Socket, Table, Verdict};

    const F: nft::Family = nft::Family::Ipv4;
    const T: &str = "nfkeeper_filter";
    const FILTER: (Family, TableKind) = (Family::Ipv4, TableKind::Filter);

    fn commit(s: &mut Socket, rules: usize, table: &str) -> u32 {
        let mut b = s.batch(None);
        b.add(&Table::new(F, table), 0);
        b.add(&Chain::new(F, table, "INPUT"), 0);
        for i in 0..rules {
            let r = Rule::new(
                F,
                table,
                "INPUT",
                vec![Expr::counter(), Expr::verdict(Verdict::Accept)],
            );
            b.add_rule(&r, Placement::Append, false, i as nft::Tag);
        }
        let rep = s.commit(&mut b).unwrap();
        assert!(rep.outcome.is_ok(), "{rep:?}");
        s.gen().unwrap().id
    }

    fn watched(ours: &Socket) -> Coherence {
        let c = Coherence::default();
        c.set_our_portid(ours.portid());
        assert!(c.watch());
        c
    }

    #[test]
    fn drain_ignores_ours_and_flags_foreign() {
        testkit::in_netns(|| {
            let m = Metrics::default();
            let mut ours = Socket::open().unwrap();
            let mut other = Socket::open().unwrap();
            let c = watched(&ours);
            let g1 = commit(&mut ours, 1, T);
            // Nothing is read until someone drains.
            assert!(!c.seen(g1));
            c.drain(&m);
            assert!(c.seen(g1) && !c.has_stale());
            assert!(c.quiet_since(g1));
            assert!(!c.quiet_since(g1.wrapping_sub(1)));
            assert!(c.wait_seen(g1, Duration::ZERO, &m));

            // Someone else changes our table and one that is not ours.
            commit(&mut other, 0, "not_ours");
            let g2 = commit(&mut other, 2, T);
            assert!(!c.has_stale(), "flagged before any drain");
            c.drain(&m);
            assert!(c.seen(g2) && !c.quiet_since(g1));
            let st = c.take_stale();
            assert!(!st.all);
            assert_eq!(st.tables, HashSet::from([FILTER]));
            assert_eq!(m.foreign_changes.get(), 1);
            assert!(c.quiet_since(g2));

            // A generation nobody committed: times out, after the timeout.
            let t0 = Instant::now();
            assert!(!c.wait_seen(g2.wrapping_add(1), Duration::from_millis(50), &m));
            assert!(t0.elapsed() >= Duration::from_millis(50));

            // A commit that lands while waiting: wait_seen polls the socket.
            let t = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(30));
                commit(&mut other, 1, T)
            });
            assert!(c.wait_seen(g2.wrapping_add(1), Duration::from_secs(5), &m));
            assert_eq!(t.join().unwrap(), g2.wrapping_add(1));
            assert_eq!(c.take_stale().tables, HashSet::from([FILTER]));
            assert_eq!(m.foreign_changes.get(), 2);
            assert_eq!(m.resyncs_lost_events.get(), 0);
        });
    }

    #[test]
    fn lost_events_make_everything_stale() {
        testkit::in_netns(|| {
            let m = Metrics::default();
            let ours = Socket::open().unwrap();
            let mut other = Socket::open().unwrap();
            let c = Coherence::default();
            c.set_our_portid(ours.portid());
            assert!(c.watch_with(EventSocket::with_rcvbuf(1)));
            let g = commit(&mut other, 500, T);
            c.drain(&m);
            assert!(c.take_stale().all);
            assert!(m.resyncs_lost_events.get() >= 1);
            // Back in step with the next commit drained whole.
            let g2 = commit(&mut other, 1, T);
            assert!(c.wait_seen(g2, Duration::from_secs(5), &m));
            assert!(c.seen(g) && !c.take_stale().all);
        });
    }

    /// A paused commit of ours is trusted without its events when the
    /// generation is the one it left; another writer's commit during the
    /// pause, unseen, makes everything stale.
    #[test]
    fn paused_commits_check_the_generation() {
        testkit::in_netns(|| {
            let m = Metrics::default();
            let mut ours = Socket::open().unwrap();
            let mut other = Socket::open().unwrap();
            let c = watched(&ours);
            let g0 = commit(&mut ours, 1, T);
            assert!(c.pause(&m));
            let g1 = commit(&mut ours, 3, T);
            c.resume(&mut ours, Some(g1), &m);
            c.drain(&m);
            assert!(!c.has_stale() && c.quiet_since(g1), "{g0} {g1}");
            assert_eq!(m.resyncs_lost_events.get(), 0);
            // Someone else commits while we do not listen.
            assert!(c.pause(&m));
            commit(&mut other, 1, T);
            let g3 = commit(&mut ours, 1, T);
            c.resume(&mut ours, Some(g3.wrapping_sub(1)), &m);
            assert!(c.take_stale().all);
            assert_eq!(m.resyncs_lost_events.get(), 1);
            // Its events were never queued: nobody listened.
            c.drain(&m);
            assert_eq!(m.foreign_changes.get(), 0);
            // Listening again: the next foreign commit is seen as usual.
            let g4 = commit(&mut other, 1, T);
            assert!(c.wait_seen(g4, Duration::from_secs(5), &m));
            assert_eq!(c.take_stale().tables, HashSet::from([FILTER]));
        });
    }

    /// A paused batch the kernel finds nothing to do in (a flush of an
    /// empty chain) commits without moving the generation: that is ours,
    /// not lost events (it made every table stale, and the next request
    /// re-read them all).
    #[test]
    fn a_paused_commit_that_changes_nothing_keeps_the_generation() {
        testkit::in_netns(|| {
            let m = Metrics::default();
            let mut ours = Socket::open().unwrap();
            let c = watched(&ours);
            commit(&mut ours, 1, T);
            let mut b = ours.batch(None);
            b.add(&Chain::new(F, T, "EMPTY"), 0);
            ours.commit(&mut b).unwrap();
            let g = ours.gen().unwrap().id;
            c.drain(&m);
            assert!(c.pause(&m));
            let mut b = ours.batch(Some(g));
            b.delete(&Rule::key(F, T, "EMPTY", None), 0);
            let rep = ours.commit(&mut b).unwrap();
            assert!(rep.outcome.is_ok(), "{rep:?}");
            assert_eq!(ours.gen().unwrap().id, g, "the kernel moved on");
            assert_eq!(c.resume(&mut ours, Some(g.wrapping_add(1)), &m), Some(g));
            c.drain(&m);
            assert!(!c.has_stale() && c.quiet_since(g));
            assert_eq!(m.resyncs_lost_events.get(), 0);
        });
    }

    #[test]
    fn not_watching_trusts_nothing() {
        let m = Metrics::default();
        let c = Coherence::default();
        c.drain(&m);
        assert!(!c.quiet_since(1) && !c.has_stale());
        let t0 = Instant::now();
        assert!(!c.wait_seen(1, Duration::from_secs(5), &m));
        assert!(t0.elapsed() < Duration::from_secs(1));
    }
}

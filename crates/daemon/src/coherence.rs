//! Coherence with the kernel: a watcher thread follows nftables events and
//! flags our tables that someone else changed (nft, another nfkeeper
//! process, a restarted daemon) so the writer re-reads exactly those before
//! it uses them. Our own changes are recognised by the netlink port id of
//! the writer's socket, which the kernel puts in every notification.
//!
//! Ordering: each committed transaction ends with a NEWGEN notification
//! carrying the new generation id; once the watcher has seen generation G,
//! every change up to G is flagged. The writer, finding the kernel at G,
//! waits for that before trusting the model ([`Coherence::wait_seen`]).

use crate::metrics::Metrics;
use ruleset::{Family, TableKind};
use std::collections::HashSet;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

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
    /// The newest generation whose NEWGEN the watcher has seen.
    seen_gen: Option<u32>,
    /// The watcher is running (else nothing is ever "seen").
    watching: bool,
    /// The watcher could not subscribe.
    gave_up: bool,
    /// Port id of the writer's socket: its notifications are ours.
    our_portid: u32,
    /// Tables changed by someone else since the last NEWGEN.
    pending: Vec<(Family, TableKind)>,
}

#[derive(Default)]
pub struct Coherence {
    st: Mutex<State>,
    cv: Condvar,
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
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_our_portid(&self, p: u32) {
        self.lock().our_portid = p;
    }

    /// Wait (bounded) until the watcher has subscribed or given up.
    pub fn wait_watching(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut s = self.lock();
        while !s.watching && !s.gave_up {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            s = self
                .cv
                .wait_timeout(s, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Flag one table for re-reading.
    pub fn mark(&self, f: Family, k: TableKind) {
        self.lock().stale.tables.insert((f, k));
    }

    pub fn has_stale(&self) -> bool {
        let s = self.lock();
        s.stale.all || !s.stale.tables.is_empty()
    }

    pub fn take_stale(&self) -> Stale {
        std::mem::take(&mut self.lock().stale)
    }

    /// Whether the model at generation `g` may be trusted without asking
    /// the kernel: the watcher runs, nothing is flagged stale, and it has
    /// seen no generation after `g`. A change whose events are still in
    /// flight is caught by the kernel instead (the commit carries `g`).
    pub fn quiet_since(&self, g: u32) -> bool {
        let s = self.lock();
        s.watching
            && s.stale.tables.is_empty()
            && !s.stale.all
            && s.seen_gen.is_none_or(|seen| g.wrapping_sub(seen) < 1 << 31)
    }

    /// Wait until the watcher has seen generation `g` (or a later one).
    /// False on timeout or when no watcher runs: the caller must then
    /// assume every table changed.
    pub fn wait_seen(&self, g: u32, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut s = self.lock();
        loop {
            if !s.watching {
                return false;
            }
            // Generation ids wrap; "seen ≥ g" within half the range.
            if s.seen_gen
                .is_some_and(|seen| seen.wrapping_sub(g) < 1 << 31)
            {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            s = self
                .cv
                .wait_timeout(s, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Fold one batch of events (see [`watch`]).
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
                            format!("{} nfkeeper_{}", crate::writer::fam_name(*f), k.name())
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
        drop(s);
        self.cv.notify_all();
    }

    fn lost_events(&self) {
        let mut s = self.lock();
        s.stale.all = true;
        s.seen_gen = None;
        drop(s);
        self.cv.notify_all();
    }
}

/// The watcher thread's body: follow events forever. If the event socket
/// can't be opened the daemon still works, re-reading every table
/// whenever the generation moved.
pub fn watch(c: &Coherence, m: &Metrics) {
    let mut es = match nft::events::EventSocket::open() {
        Ok(es) => es,
        Err(e) => {
            crate::log::line(&format!(
                "event=warning what=\"no nftables events ({e}); every foreign commit re-reads all tables\""
            ));
            c.lock().gave_up = true;
            c.cv.notify_all();
            return;
        }
    };
    c.lock().watching = true;
    c.cv.notify_all();
    loop {
        match es.recv(Some(Duration::from_secs(1))) {
            Ok(evs) => {
                if evs.iter().any(|e| e.overrun) {
                    m.resyncs_lost_events.inc();
                    c.lost_events();
                }
                c.absorb(&evs, m);
            }
            Err(e) => {
                crate::log::line(&format!("event=warning what=\"events: {e}\""));
                c.lost_events();
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

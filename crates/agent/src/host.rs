//! One host's reconciliation, synchronous and free of etcd: given what the
//! host should hold (a release and its additions, or nothing), read what
//! the kernel holds in the tables the release names (crate::desired), and
//! apply the difference as one plain restore per family — unless it already holds it (so a restarted agent, or one that
//! missed nothing while etcd was away, never applies twice), the new
//! ruleset does not parse, or it would lock the host out.
//!
//! Drift: the kernel no longer holding what this agent last applied, with
//! the wanted state unchanged. By the group's policy it is re-asserted or
//! reported and left alone.
//!
//! Across families: v4 goes first, then v6; each is one transaction. If v6
//! is refused after v4 went in, v4 is put back to what it held, so a
//! refusal leaves the host as it was; only a crash between the two can
//! leave the families on different releases, which the next start (or
//! check) sees and completes.

use crate::desired::{Desired, Held, Payload};
use crate::kernel::{ApplyError, Kernel};
use crate::layout::{now_ms, DriftPolicy, Status};
use crate::lockout::{self, Probe};
use ruleset::Family;
use std::sync::Arc;

/// What the host should hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Want {
    pub group: String,
    /// 0: nothing (the host is left as it is).
    pub release: i64,
    pub payload: Arc<Payload>,
    pub additions: Payload,
    /// Mod revision of the additions (0: none).
    pub additions_rev: i64,
    pub drift: DriftPolicy,
    /// The group's declared flows, besides the agent's own.
    pub keep_open: Vec<String>,
}

/// Probes that do not depend on the ruleset: the etcd endpoints' (from
/// the routes) and the agent's declared flows.
pub trait ProbeSource: Send {
    fn probes(&self, keep_open: &[String]) -> Result<Vec<Probe>, String>;
}

/// Counters for metrics (monotonic).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    pub applies: u64,
    pub apply_errors: u64,
    pub refusals: u64,
    pub lockouts: u64,
    pub drifts: u64,
    pub checks: u64,
    /// Seconds of the last apply.
    pub last_apply_s: f64,
}

pub struct Host {
    pub name: String,
    kernel: Box<dyn Kernel>,
    probes: Box<dyn ProbeSource>,
    /// Apply even when the lockout check refuses.
    force: bool,
    /// Digest and release of the last successful apply (or of the wanted
    /// state found already held).
    applied: Option<(String, i64, i64)>,
    applied_ms: u64,
    /// The kernel's digest when drift was last counted: a drifted state
    /// seen again (another event, the periodic check) is one drift;
    /// cleared when the kernel is in sync.
    drift_seen: Option<String>,
    /// The last desired state built, by (release, additions revision).
    cache: Option<((i64, i64, usize), Arc<Desired>)>,
    pub counts: Counts,
    pub status: Status,
}

impl Host {
    pub fn new(
        name: &str,
        kernel: Box<dyn Kernel>,
        probes: Box<dyn ProbeSource>,
        force: bool,
    ) -> Host {
        Host {
            name: name.to_string(),
            kernel,
            probes,
            force,
            applied: None,
            applied_ms: 0,
            drift_seen: None,
            cache: None,
            counts: Counts::default(),
            status: Status {
                host: name.to_string(),
                ..Status::default()
            },
        }
    }

    fn held(&mut self) -> Result<Held, String> {
        let v4 = self.kernel.save(Family::Ipv4)?;
        let v6 = self.kernel.save(Family::Ipv6)?;
        Held::parse(&v4, &v6)
    }

    fn desired(&mut self, w: &Want) -> Result<Arc<Desired>, String> {
        let key = (w.release, w.additions_rev, Arc::as_ptr(&w.payload) as usize);
        if let Some((k, d)) = &self.cache {
            if *k == key {
                return Ok(d.clone());
            }
        }
        let d = Arc::new(Desired::build(
            w.release,
            &w.payload,
            &w.additions,
            w.additions_rev,
        )?);
        self.cache = Some((key, d.clone()));
        Ok(d)
    }

    /// Bring the kernel to `want` (see the module doc) and return the
    /// status to report. Never panics on bad input; every failure is the
    /// status's `error`.
    pub fn reconcile(&mut self, want: Option<&Want>) -> Status {
        self.counts.checks += 1;
        let mut st = Status {
            host: self.name.clone(),
            group: want.map(|w| w.group.clone()).unwrap_or_default(),
            revision: self.applied.as_ref().map_or(0, |a| a.1),
            desired: want.map_or(0, |w| w.release),
            additions: self.applied.as_ref().map_or(0, |a| a.2),
            applies: self.counts.applies,
            applied_ms: self.applied_ms,
            time_ms: now_ms(),
            ..Status::default()
        };
        let held = match self.held() {
            Ok(h) => h,
            Err(e) => {
                st.error = format!("reading the kernel: {e}");
                return self.finish(st);
            }
        };
        st.digest = held.digest.clone();
        let Some(w) = want.filter(|w| w.release != 0) else {
            st.in_sync = true;
            return self.finish(st);
        };
        let d = match self.desired(w) {
            Ok(d) => d,
            Err(e) => {
                self.counts.refusals += 1;
                st.error = format!("refused: {e}");
                return self.finish(st);
            }
        };
        st.digest = held.digest_for(&d);
        if st.digest == d.digest {
            self.applied = Some((d.digest.clone(), d.release, d.additions));
            st.revision = d.release;
            st.additions = d.additions;
            st.in_sync = true;
            self.drift_seen = None;
            if self.applied_ms == 0 {
                self.applied_ms = st.time_ms;
                st.applied_ms = st.time_ms;
            }
            return self.finish(st);
        }
        let drift = self.applied.as_ref().is_some_and(|a| a.0 == d.digest);
        if drift {
            if self.drift_seen.as_deref() != Some(st.digest.as_str()) {
                self.counts.drifts += 1;
                self.drift_seen = Some(st.digest.clone());
            }
            st.drift = true;
            if w.drift == DriftPolicy::Report {
                return self.finish(st);
            }
        }
        if let Err(e) = self.lockout(w, &d, &held) {
            self.counts.lockouts += 1;
            st.error = e;
            return self.finish(st);
        }
        let t0 = std::time::Instant::now();
        match self.apply(&d, &held) {
            Ok(()) => {
                self.counts.applies += 1;
                self.counts.last_apply_s = t0.elapsed().as_secs_f64();
                st.applies = self.counts.applies;
            }
            Err(e) => {
                self.counts.apply_errors += 1;
                st.error = e;
            }
        }
        // What the kernel holds now decides, whatever the apply said.
        match self.held() {
            Ok(now) => {
                st.digest = now.digest_for(&d);
                if st.digest == d.digest {
                    self.applied = Some((d.digest.clone(), d.release, d.additions));
                    self.applied_ms = now_ms();
                    st.revision = d.release;
                    st.additions = d.additions;
                    st.applied_ms = self.applied_ms;
                    st.in_sync = true;
                    st.drift = false;
                    st.error.clear();
                } else if st.error.is_empty() {
                    st.error = "the kernel does not hold the ruleset after the apply".into();
                }
            }
            Err(e) if st.error.is_empty() => st.error = format!("reading the kernel: {e}"),
            Err(_) => {}
        }
        self.finish(st)
    }

    fn finish(&mut self, st: Status) -> Status {
        let mut st = st;
        st.mode = self.kernel.mode().to_string();
        self.status = st.clone();
        st
    }

    fn lockout(&self, w: &Want, d: &Desired, held: &Held) -> Result<(), String> {
        let probes = self.probes.probes(&w.keep_open)?;
        match lockout::check(&crate::desired::after_apply(held, d), &probes) {
            Err(e) if !self.force => Err(format!("refused: {e}")),
            _ => Ok(()),
        }
    }

    /// Each family whose canonical text differs, v4 then v6; a refused v6
    /// puts v4 back.
    fn apply(&mut self, d: &Desired, held: &Held) -> Result<(), String> {
        let mut done: Vec<Family> = Vec::new();
        for f in Family::ALL {
            let scope = &d.side(f).scope;
            if d.side(f).canonical(f) == held.side(f).canonical_in(f, scope) {
                continue;
            }
            let text = d.side(f).restore_text(f, scope);
            match self.kernel.restore(f, &text) {
                Ok(()) => done.push(f),
                Err(e) => {
                    for &g in &done {
                        let back = held.side(g).restore_text(g, &d.side(g).scope);
                        let _ = self.kernel.restore(g, &back);
                    }
                    let what = match &e {
                        ApplyError::Refused(_) => "refused by the kernel",
                        ApplyError::Unknown(_) => "apply interrupted",
                    };
                    return Err(format!("{what}: {e}"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

//! The agent's loop: follow the host's keys in etcd, keep the kernel on
//! the desired state (crate::host), report status under a lease.
//!
//! One session per connection to etcd. A session reads the host's view at
//! one revision R — its keys (`P/hosts/HOST/`), its group and the group's
//! rollout in one transaction, then the release it should hold unless
//! cached (releases are immutable) — reconciles, writes its status if it
//! changed, and watches those three keys from R+1. An event on the group
//! or the rollout carries the new document, which is folded in without a
//! read (a change's etcd cost per host: the release, if not cached, and
//! the status); an event on the host's own keys makes it read the view
//! again (it may name another group). A lost connection ends the session; the next one keeps the lease
//! if it is still alive and resumes the watches from R+1 without reading
//! (etcd replays what happened meanwhile; a compacted history means one
//! read), so an etcd restart costs each agent a watch and a keep-alive,
//! and applies nothing.
//!
//! The kernel side runs on a blocking thread; the lease is kept alive by
//! its own task, so a long apply does not let the status expire. Between
//! sessions the agent still answers the kernel's events (drift), and
//! reports what it did when etcd is back.

use crate::desired::Payload;
use crate::etcd::{bounded, payload_of, release, EtcdOpts};
use crate::host::{Host, Want};
use crate::layout::{Group, Keys, Rollout, Status};
use crate::metrics::Etcd as M;
use crate::rollout::release_for;
use etcd_client::{
    Client, EventType, GetOptions, PutOptions, TxnOp, TxnOpResponse, WatchOptions, WatchStream,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// What the agent runs with.
#[derive(Clone, Debug)]
pub struct Config {
    pub host: String,
    pub etcd: EtcdOpts,
    /// Lease time-to-live of the status, seconds.
    pub ttl: i64,
    /// Check the kernel this often even without events.
    pub resync: Duration,
    /// Wait this long after a kernel event for more before reading.
    pub debounce: Duration,
}

/// The host's documents as last read or folded from events.
#[derive(Default)]
struct View {
    additions: Payload,
    additions_rev: i64,
    group: Option<Vec<u8>>,
    rollout: Option<Vec<u8>>,
}

/// The state that outlives sessions.
pub struct Run {
    pub cfg: Config,
    pub keys: Keys,
    pub host: Arc<Mutex<Host>>,
    pub metrics: Arc<M>,
    want: Option<Want>,
    /// The documents the want comes from.
    view: View,
    /// Revision of the last view read (0: none yet): events up to it are
    /// in the view.
    read_rev: i64,
    /// The newest event folded (or `read_rev`): watches resume here. An
    /// event at this revision may come again (on another key of the same
    /// transaction); folding is idempotent.
    rev: i64,
    /// The group the watches follow.
    group: Option<String>,
    releases: HashMap<(String, i64), Arc<Payload>>,
    lease: Option<i64>,
    /// The status last written, with `time_ms` zeroed.
    written: Option<Status>,
}

fn lock(h: &Mutex<Host>) -> std::sync::MutexGuard<'_, Host> {
    h.lock().unwrap_or_else(|e| e.into_inner())
}

impl Run {
    pub fn new(cfg: Config, host: Host, metrics: Arc<M>) -> Run {
        Run {
            keys: cfg.etcd.keys(),
            cfg,
            host: Arc::new(Mutex::new(host)),
            metrics,
            want: None,
            view: View::default(),
            read_rev: 0,
            rev: 0,
            group: None,
            releases: HashMap::new(),
            lease: None,
            written: None,
        }
    }

    /// Reconcile on a blocking thread.
    async fn reconcile(&self) -> Status {
        let h = self.host.clone();
        let w = self.want.clone();
        match tokio::task::spawn_blocking(move || lock(&h).reconcile(w.as_ref())).await {
            Ok(s) => s,
            Err(e) => Status {
                error: format!("reconcile: {e}"),
                ..lock(&self.host).status.clone()
            },
        }
    }

    /// Read the view (see the module doc) at one revision into
    /// `self.view` and `self.rev`, then resolve it.
    async fn read_view(&mut self, c: &mut Client) -> Result<(), String> {
        let t = self.cfg.etcd.command_timeout;
        let hkey = self.keys.host(&self.cfg.host);
        let mut guess = self.group.clone();
        let (kvs, group, rollout, rev) = loop {
            let mut ops = vec![TxnOp::get(
                hkey.as_str(),
                Some(GetOptions::new().with_prefix()),
            )];
            if let Some(g) = &guess {
                ops.push(TxnOp::get(self.keys.group(g), None));
                ops.push(TxnOp::get(self.keys.rollout(g), None));
            }
            M::add(&self.metrics.reads);
            let r = bounded(t, c.txn(etcd_client::Txn::new().and_then(ops))).await?;
            let rev = r.header().map_or(0, |h| h.revision());
            let mut gets = r.op_responses().into_iter().filter_map(|o| match o {
                TxnOpResponse::Get(g) => Some(g),
                _ => None,
            });
            let hostkv = gets.next().map(|mut g| g.take_kvs()).unwrap_or_default();
            let named = hostkv
                .iter()
                .find(|kv| kv.key_str().ok() == Some(&format!("{hkey}group")))
                .map(|kv| String::from_utf8_lossy(kv.value()).trim().to_string())
                .filter(|s| !s.is_empty());
            if named != guess {
                guess = named;
                if guess.is_some() {
                    continue;
                }
            }
            let one = |g: Option<etcd_client::GetResponse>| {
                g.and_then(|g| g.kvs().first().map(|kv| kv.value().to_vec()))
            };
            let group = one(gets.next());
            let rollout = one(gets.next());
            break (hostkv, group, rollout, rev);
        };
        self.rev = rev;
        self.read_rev = rev;
        self.group = guess.clone();
        let additions_rev = kvs
            .iter()
            .filter(|kv| {
                kv.key_str().is_ok_and(|k| {
                    k.ends_with("/v4") || k.ends_with("/v6") || k.ends_with("/ipset")
                })
            })
            .map(|kv| kv.mod_revision())
            .max()
            .unwrap_or(0);
        self.view = View {
            additions: payload_of(&kvs, &hkey),
            additions_rev,
            group: group.map(|b| b.to_vec()),
            rollout: rollout.map(|b| b.to_vec()),
        };
        self.resolve(c).await
    }

    /// Fold a watch event on the group's or the rollout's key into the
    /// view (their documents come with the event: no read needed).
    /// `false` for any other key (the host's own: read it all again).
    fn fold(&mut self, key: &str, value: Option<&[u8]>) -> bool {
        let Some(g) = &self.group else {
            return false;
        };
        if key == self.keys.group(g) {
            self.view.group = value.map(<[u8]>::to_vec);
        } else if key == self.keys.rollout(g) {
            self.view.rollout = value.map(<[u8]>::to_vec);
        } else {
            return false;
        }
        true
    }

    /// The release the view asks for (fetched unless cached) into
    /// `self.want`.
    async fn resolve(&mut self, c: &mut Client) -> Result<(), String> {
        let Some(gname) = self.group.clone() else {
            self.want = None;
            return Ok(());
        };
        let group: Group = match &self.view.group {
            Some(b) => serde_json::from_slice(b).map_err(|e| format!("group {gname}: {e}"))?,
            None => {
                self.want = None;
                return Err(format!("group {gname} does not exist"));
            }
        };
        let rollout: Option<Rollout> = match &self.view.rollout {
            Some(b) => {
                Some(serde_json::from_slice(b).map_err(|e| format!("rollout {gname}: {e}"))?)
            }
            None => None,
        };
        let rel = release_for(&self.cfg.host, &group, rollout.as_ref());
        let payload = if rel == 0 {
            Arc::new(Payload::default())
        } else {
            let key = (group.ruleset.clone(), rel);
            match self.releases.get(&key) {
                Some(p) => p.clone(),
                None => {
                    M::add(&self.metrics.reads);
                    let p = release(c, &self.cfg.etcd, &group.ruleset, rel)
                        .await?
                        .ok_or_else(|| {
                            format!("release {rel} of ruleset {} does not exist", group.ruleset)
                        })?;
                    let p = Arc::new(p);
                    // Releases are immutable; a few cover a rollout and a rollback.
                    if self.releases.len() >= 4 {
                        self.releases.clear();
                    }
                    self.releases.insert(key, p.clone());
                    p
                }
            }
        };
        self.want = Some(Want {
            group: gname,
            release: rel,
            payload,
            additions: self.view.additions.clone(),
            additions_rev: self.view.additions_rev,
            drift: group.drift,
            keep_open: group.keep_open,
        });
        Ok(())
    }

    /// Write `st` under the lease if it differs from what was written.
    async fn report(&mut self, c: &mut Client, st: &Status) -> Result<(), String> {
        let mut cmp = st.clone();
        cmp.time_ms = 0;
        if self.written.as_ref() == Some(&cmp) {
            return Ok(());
        }
        let Some(lease) = self.lease else {
            return Ok(());
        };
        let body = serde_json::to_string(st).map_err(|e| e.to_string())?;
        M::add(&self.metrics.writes);
        bounded(
            self.cfg.etcd.command_timeout,
            c.put(
                self.keys.status(&self.cfg.host),
                body,
                Some(PutOptions::new().with_lease(lease)),
            ),
        )
        .await?;
        self.written = Some(cmp);
        Ok(())
    }

    /// A live lease: the old one if etcd still has it, else a new one
    /// (then the status must be written again).
    async fn lease(
        &mut self,
        c: &mut Client,
    ) -> Result<(etcd_client::LeaseKeeper, etcd_client::LeaseKeepAliveStream), String> {
        let t = self.cfg.etcd.command_timeout;
        if let Some(id) = self.lease {
            // An expired lease answers with TTL 0 or "lease not found";
            // either way a new one is granted below.
            let old = async {
                let (mut k, mut s) = bounded(t, c.lease_keep_alive(id)).await?;
                bounded(t, k.keep_alive()).await?;
                match bounded(t, s.message()).await? {
                    Some(r) if r.ttl() > 0 => Ok(Some((k, s))),
                    _ => Ok::<_, String>(None),
                }
            };
            if let Ok(Some(ks)) = old.await {
                return Ok(ks);
            }
        }
        M::add(&self.metrics.lease_grants);
        let g = bounded(t, c.lease_grant(self.cfg.ttl, None)).await?;
        self.lease = Some(g.id());
        self.written = None;
        bounded(t, c.lease_keep_alive(g.id())).await
    }

    async fn watch(&mut self, c: &mut Client) -> Result<WatchStream, String> {
        let t = self.cfg.etcd.command_timeout;
        let from = WatchOptions::new().with_start_revision(self.rev.max(self.read_rev + 1));
        M::add(&self.metrics.watches);
        let mut w = bounded(
            t,
            c.watch(
                self.keys.host(&self.cfg.host),
                Some(from.clone().with_prefix()),
            ),
        )
        .await?;
        if let Some(g) = &self.group {
            for k in [self.keys.group(g), self.keys.rollout(g)] {
                M::add(&self.metrics.watches);
                bounded(t, w.watch(k, Some(from.clone()))).await?;
            }
        }
        Ok(w)
    }

    /// Read the view, reconcile, report.
    async fn refresh(&mut self, c: &mut Client) -> Result<(), String> {
        let r = self.read_view(c).await;
        self.settle(c, r).await
    }

    /// Reconcile after the view was read or folded (`r`: how resolving
    /// it went) and report.
    async fn settle(&mut self, c: &mut Client, r: Result<(), String>) -> Result<(), String> {
        let mut st = self.reconcile().await;
        if let Err(e) = &r {
            st.error = e.clone();
        }
        self.report(c, &st).await?;
        r.or(Ok(()))
    }

    /// One session; returns why it ended.
    async fn session(&mut self, drift: &mut mpsc::Receiver<()>) -> String {
        let mut c = match self.cfg.etcd.connect().await {
            Ok(c) => c,
            Err(e) => return e,
        };
        let (mut keeper, mut kstream) = match self.lease(&mut c).await {
            Ok(k) => k,
            Err(e) => return format!("lease: {e}"),
        };
        let (lost_tx, mut lost) = mpsc::channel::<String>(1);
        let every = Duration::from_secs((self.cfg.ttl / 3).max(1) as u64);
        let t = self.cfg.etcd.command_timeout;
        let keepalive = tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let ok = match bounded(t, keeper.keep_alive()).await {
                    Ok(()) => {
                        matches!(bounded(t, kstream.message()).await, Ok(Some(r)) if r.ttl() > 0)
                    }
                    Err(_) => false,
                };
                if !ok {
                    let _ = lost_tx
                        .send("the lease expired or etcd went away".into())
                        .await;
                    return;
                }
            }
        });
        let out = self.follow(&mut c, drift, &mut lost).await;
        keepalive.abort();
        out
    }

    async fn follow(
        &mut self,
        c: &mut Client,
        drift: &mut mpsc::Receiver<()>,
        lost: &mut mpsc::Receiver<String>,
    ) -> String {
        self.metrics
            .connected
            .store(1, std::sync::atomic::Ordering::Relaxed);
        let resume = self.rev > 0 && self.written.is_some();
        if !resume {
            if let Err(e) = self.refresh(c).await {
                return e;
            }
        } else {
            let st = lock(&self.host).status.clone();
            if let Err(e) = self.report(c, &st).await {
                return e;
            }
        }
        let mut group = self.group.clone();
        let mut w = match self.watch(c).await {
            Ok(w) => w,
            Err(e) => return e,
        };
        let mut tick = tokio::time::interval(self.cfg.resync);
        tick.tick().await;
        loop {
            tokio::select! {
                m = w.message() => {
                    let mut resp = match m {
                        Ok(Some(r)) => r,
                        Ok(None) => return "the watch ended".into(),
                        Err(e) => return format!("watch: {e}"),
                    };
                    // Everything the stream holds now, so that one
                    // transaction's events on several keys count once.
                    let mut canceled = false;
                    let mut read = false;
                    let mut folded = false;
                    loop {
                        canceled |= resp.canceled();
                        for e in resp.events() {
                            let Some(kv) = e.kv() else { continue };
                            if kv.mod_revision() <= self.read_rev {
                                continue;
                            }
                            M::add(&self.metrics.events);
                            let v = (e.event_type() == EventType::Put).then(|| kv.value());
                            match kv.key_str() {
                                Ok(k) if !read && self.fold(k, v) => folded = true,
                                _ => read = true,
                            }
                            self.rev = self.rev.max(kv.mod_revision());
                        }
                        match tokio::time::timeout(Duration::ZERO, w.message()).await {
                            Ok(Ok(Some(r))) => resp = r,
                            Ok(Ok(None)) => return "the watch ended".into(),
                            Ok(Err(e)) => return format!("watch: {e}"),
                            Err(_) => break,
                        }
                    }
                    let done = if read || canceled {
                        self.refresh(c).await
                    } else if folded {
                        let r = self.resolve(c).await;
                        self.settle(c, r).await
                    } else {
                        Ok(())
                    };
                    if let Err(e) = done {
                        return e;
                    }
                    if canceled || self.group != group {
                        group = self.group.clone();
                        w = match self.watch(c).await {
                            Ok(w) => w,
                            Err(e) => return e,
                        };
                    }
                }
                Some(()) = drift.recv() => {
                    tokio::time::sleep(self.cfg.debounce).await;
                    while drift.try_recv().is_ok() {}
                    let st = self.reconcile().await;
                    if let Err(e) = self.report(c, &st).await {
                        return e;
                    }
                }
                _ = tick.tick() => {
                    let st = self.reconcile().await;
                    if let Err(e) = self.report(c, &st).await {
                        return e;
                    }
                }
                Some(why) = lost.recv() => {
                    return why;
                }
            }
        }
    }

    /// Run until the process ends: sessions, with a capped back-off
    /// between them during which kernel events are still answered.
    pub async fn run(mut self, mut drift: mpsc::Receiver<()>) {
        let mut backoff = Duration::from_millis(100);
        let mut first = true;
        loop {
            if !first {
                M::add(&self.metrics.reconnects);
            }
            first = false;
            let t0 = tokio::time::Instant::now();
            let why = self.session(&mut drift).await;
            self.metrics
                .connected
                .store(0, std::sync::atomic::Ordering::Relaxed);
            eprintln!(
                "nfkeeper-agent: {}: etcd session ended: {why}",
                self.cfg.host
            );
            if t0.elapsed() > Duration::from_secs(10) {
                backoff = Duration::from_millis(100);
            }
            let until = tokio::time::Instant::now() + backoff;
            backoff = (backoff * 2).min(Duration::from_secs(2));
            loop {
                tokio::select! {
                    _ = tokio::time::sleep_until(until) => break,
                    Some(()) = drift.recv() => {
                        tokio::time::sleep(self.cfg.debounce).await;
                        while drift.try_recv().is_ok() {}
                        self.reconcile().await;
                    }
                }
            }
        }
    }
}

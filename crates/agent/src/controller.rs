//! The rollout controller: one per fleet, elected through etcd, advancing
//! running rollouts stage by stage (crate::rollout decides; this module
//! reads and writes).
//!
//! Election: a candidate creates `P/controller` under its own lease if the
//! key does not exist (a transaction on its create revision); the others
//! watch the key and try again when it is deleted — when the leader's
//! lease expires. Any agent can be a candidate (`--controller`), or a
//! dedicated `nfkeeper-agent controller` process.
//!
//! The leader keeps the groups, rollouts, host assignments and statuses in
//! memory (one read, then one watch stream over their four prefixes: its
//! etcd cost per host change is one event, not one read) and evaluates the
//! running rollouts after events and every half second (hold timers).
//! Every write is a transaction conditioned on the mod revision of what it
//! decided from, so an operator's pause or a second leader can never be
//! overwritten by a stale decision.

use crate::etcd::{bounded, EtcdOpts};
use crate::layout::{now_ms, Group, Keys, Rollout, RolloutState, Status};
use crate::rollout::{step, Decision};
use etcd_client::{
    Client, Compare, CompareOp, EventType, GetOptions, PutOptions, Txn, TxnOp, TxnOpResponse,
    WatchOptions,
};
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::mpsc;

/// What the leader knows, each document with its mod revision.
#[derive(Default)]
pub struct World {
    pub groups: HashMap<String, (Group, i64)>,
    pub rollouts: HashMap<String, (Rollout, i64)>,
    /// Host → group.
    pub members: HashMap<String, String>,
    pub statuses: HashMap<String, Status>,
}

impl World {
    /// Fold in one key's new value (`None`: deleted). Unparsable
    /// documents count as absent.
    pub fn set(&mut self, keys: &Keys, key: &str, value: Option<&[u8]>, modrev: i64) {
        if let Some(g) = Keys::leaf(key, &keys.groups()) {
            match value.and_then(|v| serde_json::from_slice(v).ok()) {
                Some(d) => self.groups.insert(g.into(), (d, modrev)),
                None => self.groups.remove(g),
            };
        } else if let Some(g) = Keys::leaf(key, &keys.rollouts()) {
            match value.and_then(|v| serde_json::from_slice(v).ok()) {
                Some(d) => self.rollouts.insert(g.into(), (d, modrev)),
                None => self.rollouts.remove(g),
            };
        } else if let Some(h) = Keys::leaf(key, &keys.statuses()) {
            match value.and_then(|v| serde_json::from_slice(v).ok()) {
                Some(d) => self.statuses.insert(h.into(), d),
                None => self.statuses.remove(h),
            };
        } else if let Some((h, "group")) = keys.host_of(key) {
            match value.map(|v| String::from_utf8_lossy(v).trim().to_string()) {
                Some(g) if !g.is_empty() => self.members.insert(h.into(), g),
                _ => self.members.remove(h),
            };
        }
    }

    /// The group's members with their live status (a status that names
    /// another group does not count).
    pub fn members_of(&self, g: &str) -> Vec<(&str, Option<&Status>)> {
        let mut v: Vec<(&str, Option<&Status>)> = self
            .members
            .iter()
            .filter(|(_, mg)| mg.as_str() == g)
            .map(|(h, _)| (h.as_str(), self.statuses.get(h).filter(|s| s.group == g)))
            .collect();
        v.sort_by_key(|(h, _)| *h);
        v
    }

    /// The decision for group `g`'s rollout, if it is running.
    pub fn decide(&self, g: &str, now: u64) -> Option<Decision> {
        let (r, _) = self.rollouts.get(g)?;
        let (grp, _) = self.groups.get(g)?;
        if r.state != RolloutState::Running {
            return None;
        }
        Some(step(r, &self.members_of(g), grp.hold, now))
    }
}

/// The history key of a finished rollout (ordered by start).
pub fn history_key(keys: &Keys, g: &str, r: &Rollout) -> String {
    format!("{}{:013}-{:016x}", keys.history(g), r.started_ms, r.id)
}

/// Write the decision for group `g`; `Ok(false)` if the documents changed
/// meanwhile (the next evaluation sees the new ones).
pub async fn apply_decision(
    c: &mut Client,
    o: &EtcdOpts,
    w: &World,
    g: &str,
    d: &Decision,
) -> Result<bool, String> {
    let keys = o.keys();
    let (Some((r, rmod)), Some((grp, gmod))) = (w.rollouts.get(g), w.groups.get(g)) else {
        return Ok(false);
    };
    let now = now_ms();
    let mut r = r.clone();
    r.updated_ms = now;
    let rkey = keys.rollout(g);
    let when = vec![
        Compare::mod_revision(rkey.as_str(), CompareOp::Equal, *rmod),
        Compare::mod_revision(keys.group(g), CompareOp::Equal, *gmod),
    ];
    let ops = match d {
        Decision::Wait(_) => return Ok(true),
        Decision::Admit {
            stage,
            admit_below,
            admitted,
        } => {
            r.stage = *stage;
            r.admit_below = Some(*admit_below);
            r.admitted = *admitted;
            r.stage_ms = now;
            vec![TxnOp::put(rkey.as_str(), json(&r)?, None)]
        }
        Decision::Fail(why) => {
            r.state = RolloutState::Failed;
            r.reason = why.clone();
            vec![TxnOp::put(rkey.as_str(), json(&r)?, None)]
        }
        Decision::Done => {
            r.state = RolloutState::Done;
            let mut grp = grp.clone();
            grp.release = r.to;
            vec![
                TxnOp::put(keys.group(g), json(&grp)?, None),
                TxnOp::delete(rkey.as_str(), None),
                TxnOp::put(history_key(&keys, g, &r), json(&r)?, None),
            ]
        }
    };
    let resp = bounded(
        o.command_timeout,
        c.txn(Txn::new().when(when).and_then(ops)),
    )
    .await?;
    Ok(resp.succeeded())
}

pub fn json<T: serde::Serialize>(v: &T) -> Result<String, String> {
    serde_json::to_string(v).map_err(|e| e.to_string())
}

/// Run as a candidate forever (reconnecting as needed).
pub async fn run(o: EtcdOpts, name: String, ttl: i64) {
    loop {
        let why = campaign(&o, &name, ttl).await;
        eprintln!("nfkeeper-agent: controller {name}: {why}");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn campaign(o: &EtcdOpts, name: &str, ttl: i64) -> String {
    let keys = o.keys();
    let t = o.command_timeout;
    let mut c = match o.connect().await {
        Ok(c) => c,
        Err(e) => return e,
    };
    let lease = match bounded(t, c.lease_grant(ttl, None)).await {
        Ok(l) => l.id(),
        Err(e) => return e,
    };
    let (mut keeper, mut ks) = match bounded(t, c.lease_keep_alive(lease)).await {
        Ok(k) => k,
        Err(e) => return e,
    };
    let (lost_tx, mut lost) = mpsc::channel::<()>(1);
    let every = Duration::from_secs((ttl / 3).max(1) as u64);
    let ka = tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let ok = bounded(t, keeper.keep_alive()).await.is_ok()
                && matches!(bounded(t, ks.message()).await, Ok(Some(r)) if r.ttl() > 0);
            if !ok {
                let _ = lost_tx.send(()).await;
                return;
            }
        }
    });
    let why = loop {
        let key = keys.controller();
        let txn = Txn::new()
            .when(vec![Compare::create_revision(
                key.as_str(),
                CompareOp::Equal,
                0,
            )])
            .and_then(vec![TxnOp::put(
                key.as_str(),
                name,
                Some(PutOptions::new().with_lease(lease)),
            )]);
        let r = match bounded(t, c.txn(txn)).await {
            Ok(r) => r,
            Err(e) => break e,
        };
        if r.succeeded() {
            eprintln!("nfkeeper-agent: controller {name}: leading");
            break lead(&mut c, o, &mut lost).await;
        }
        let rev = r.header().map_or(0, |h| h.revision());
        let mut w = match bounded(
            t,
            c.watch(
                key.as_str(),
                Some(WatchOptions::new().with_start_revision(rev + 1)),
            ),
        )
        .await
        {
            Ok(w) => w,
            Err(e) => break e,
        };
        let gone = loop {
            tokio::select! {
                m = w.message() => match m {
                    Ok(Some(resp)) if resp.events().iter().any(|e| e.event_type() == EventType::Delete) => break Ok(()),
                    Ok(Some(resp)) if resp.canceled() => break Ok(()),
                    Ok(Some(_)) => {}
                    Ok(None) => break Err("the watch ended".to_string()),
                    Err(e) => break Err(e.to_string()),
                },
                Some(()) = lost.recv() => break Err("the lease expired".into()),
            }
        };
        if let Err(e) = gone {
            break e;
        }
    };
    ka.abort();
    let _ = bounded(t, c.lease_revoke(lease)).await;
    why
}

/// Lead until the lease or the connection is lost.
async fn lead(c: &mut Client, o: &EtcdOpts, lost: &mut mpsc::Receiver<()>) -> String {
    let keys = o.keys();
    let t = o.command_timeout;
    let dirs = [
        keys.groups(),
        keys.rollouts(),
        keys.hosts(),
        keys.statuses(),
    ];
    let ops: Vec<TxnOp> = dirs
        .iter()
        .map(|d| TxnOp::get(d.as_str(), Some(GetOptions::new().with_prefix())))
        .collect();
    let r = match bounded(t, c.txn(Txn::new().and_then(ops))).await {
        Ok(r) => r,
        Err(e) => return e,
    };
    let rev = r.header().map_or(0, |h| h.revision());
    let mut world = World::default();
    for op in r.op_responses() {
        if let TxnOpResponse::Get(g) = op {
            for kv in g.kvs() {
                if let Ok(k) = kv.key_str() {
                    world.set(&keys, k, Some(kv.value()), kv.mod_revision());
                }
            }
        }
    }
    let from = WatchOptions::new()
        .with_start_revision(rev + 1)
        .with_prefix();
    let mut w = match bounded(t, c.watch(dirs[0].as_str(), Some(from.clone()))).await {
        Ok(w) => w,
        Err(e) => return e,
    };
    for d in &dirs[1..] {
        if let Err(e) = bounded(t, w.watch(d.as_str(), Some(from.clone()))).await {
            return e;
        }
    }
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    loop {
        tokio::select! {
            m = w.message() => {
                let resp = match m {
                    Ok(Some(r)) => r,
                    Ok(None) => return "the watch ended".into(),
                    Err(e) => return e.to_string(),
                };
                if resp.canceled() {
                    return format!("watch canceled: {}", resp.cancel_reason());
                }
                for e in resp.events() {
                    let Some(kv) = e.kv() else { continue };
                    let Ok(k) = kv.key_str() else { continue };
                    let v = (e.event_type() == EventType::Put).then(|| kv.value());
                    world.set(&keys, k, v, kv.mod_revision());
                }
            }
            _ = tick.tick() => {}
            Some(()) = lost.recv() => return "the lease expired".into(),
        }
        let now = now_ms();
        let groups: Vec<String> = world.rollouts.keys().cloned().collect();
        for g in groups {
            let Some(d) = world.decide(&g, now) else {
                continue;
            };
            if matches!(d, Decision::Wait(_)) {
                continue;
            }
            eprintln!("nfkeeper-agent: controller: group {g}: {d:?}");
            if let Err(e) = apply_decision(c, o, &world, &g, &d).await {
                return e;
            }
            // The watch brings the result; do not decide again on the
            // old documents meanwhile.
            world.rollouts.remove(&g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn world_folds_keys() {
        let k = Keys::new("/n");
        let mut w = World::default();
        w.set(
            &k,
            "/n/groups/web",
            Some(br#"{"ruleset":"web","release":5}"#),
            3,
        );
        w.set(&k, "/n/hosts/h1/group", Some(b"web\n"), 4);
        w.set(&k, "/n/hosts/h2/group", Some(b"web"), 4);
        w.set(&k, "/n/hosts/h3/group", Some(b"db"), 4);
        w.set(&k, "/n/hosts/h1/v4", Some(b"*filter\nCOMMIT\n"), 4);
        w.set(&k, "/n/status/h1", Some(br#"{"host":"h1","group":"web","revision":5,"desired":5,"digest":"","in_sync":true,"applied_ms":1,"time_ms":1,"applies":1}"#), 6);
        w.set(&k, "/n/status/h2", Some(br#"{"host":"h2","group":"db","revision":5,"desired":5,"digest":"","in_sync":true,"applied_ms":1,"time_ms":1,"applies":1}"#), 6);
        w.set(&k, "/n/groups/bad", Some(b"{"), 7);
        assert_eq!(w.groups["web"].0.release, 5);
        assert!(!w.groups.contains_key("bad"));
        let m = w.members_of("web");
        assert_eq!(m.len(), 2);
        assert!(m[0].1.is_some(), "h1 reports for web");
        assert!(m[1].1.is_none(), "h2 reports for another group");
        w.set(&k, "/n/hosts/h1/group", None, 8);
        assert_eq!(w.members_of("web").len(), 1);
        w.set(&k, "/n/status/h1", None, 9);
        assert!(!w.statuses.contains_key("h1"));
        assert_eq!(w.decide("web", 0), None, "no rollout");
    }
}

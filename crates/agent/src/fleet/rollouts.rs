//! `fleet rollout` and `fleet rollback`: the commands that start or end
//! rollouts (the controller advances them).

use super::{fail, group, random_id, rollout_of, txn, unchanged, Fail, Flags};
use crate::controller::{history_key, json};
use crate::desired::{Desired, Payload};
use crate::etcd::{bounded, payload_of, EtcdOpts};
use crate::layout::{now_ms, Rollout, RolloutState};
use crate::rollout::{active, stages};
use etcd_client::{Client, Compare, CompareOp, GetOptions, TxnOp};

pub(super) async fn start_rollout(
    c: &mut Client,
    o: &EtcdOpts,
    g: &str,
    f: &Flags,
) -> Result<String, Fail> {
    let keys = o.keys();
    let (grp, gmod) = group(c, o, g).await?;
    let head = keys.ruleset(&grp.ruleset);
    let r = bounded(
        o.command_timeout,
        c.get(head.as_str(), Some(GetOptions::new().with_prefix())),
    )
    .await
    .map_err(fail)?;
    let rev = r
        .kvs()
        .iter()
        .map(|kv| kv.mod_revision())
        .max()
        .unwrap_or(0);
    if rev == 0 {
        return Err(fail(format!(
            "ruleset {} has nothing under {head}",
            grp.ruleset
        )));
    }
    let payload: Payload = payload_of(r.kvs(), &head);
    if !f.has("--no-check") {
        Desired::build(rev, &payload, &Payload::default(), 0)
            .map_err(|e| fail(format!("ruleset {}: {e}", grp.ruleset)))?;
    }
    let old = rollout_of(c, o, g).await?;
    if old.as_ref().is_some_and(|(r, _)| active(r) && r.to == rev) {
        return Err(fail(format!(
            "release {rev} is already rolling out to group {g}"
        )));
    }
    if grp.release == rev && old.as_ref().is_none_or(|(r, _)| !active(r)) {
        return Err(fail(format!("group {g} already holds release {rev}")));
    }
    let now = now_ms();
    let r = Rollout {
        id: random_id(),
        ruleset: grp.ruleset.clone(),
        from: grp.release,
        to: rev,
        state: RolloutState::Running,
        stages: stages(
            f.num("--canary")?.unwrap_or(grp.canary),
            f.num("--step")?.unwrap_or(grp.step),
        ),
        stage: 0,
        admit_below: None,
        admitted: 0,
        started_ms: now,
        stage_ms: now,
        updated_ms: now,
        reason: String::new(),
    };
    let rkey = keys.rollout(g);
    let mut when = vec![
        unchanged(&keys.group(g), gmod),
        unchanged(&rkey, old.as_ref().map_or(0, |x| x.1)),
    ];
    let mut ops = Vec::new();
    let rel = keys.release(&grp.ruleset, rev);
    if bounded(
        o.command_timeout,
        c.get(
            rel.as_str(),
            Some(GetOptions::new().with_prefix().with_count_only()),
        ),
    )
    .await
    .map_err(fail)?
    .count()
        == 0
    {
        for (fam, text) in [
            ("v4", &payload.v4),
            ("v6", &payload.v6),
            ("ipset", &payload.ipset),
        ] {
            if !text.is_empty() {
                let k = format!("{rel}{fam}");
                when.push(Compare::create_revision(k.as_str(), CompareOp::Equal, 0));
                ops.push(TxnOp::put(k, text.as_str(), None));
            }
        }
    }
    if let Some((mut old, _)) = old.filter(|(r, _)| active(r)) {
        old.state = RolloutState::Aborted;
        old.reason = format!("superseded by release {rev}");
        old.updated_ms = now;
        ops.push(TxnOp::put(
            history_key(&keys, g, &old),
            json(&old).map_err(fail)?,
            None,
        ));
    }
    ops.push(TxnOp::put(rkey.as_str(), json(&r).map_err(fail)?, None));
    txn(c, o, when, ops).await?;
    Ok(format!(
        "group {g}: rolling out release {rev} of ruleset {} (from {}), stages {:?}%\n",
        grp.ruleset, grp.release, r.stages
    ))
}

pub(super) async fn rollback(
    c: &mut Client,
    o: &EtcdOpts,
    g: &str,
    now_all: bool,
) -> Result<String, Fail> {
    let keys = o.keys();
    let (mut grp, gmod) = group(c, o, g).await?;
    let rkey = keys.rollout(g);
    if let Some((mut r, m)) = rollout_of(c, o, g).await?.filter(|(r, _)| active(r)) {
        r.state = RolloutState::Aborted;
        r.reason = "rolled back by an operator".into();
        r.updated_ms = now_ms();
        txn(
            c,
            o,
            vec![unchanged(&rkey, m)],
            vec![
                TxnOp::delete(rkey.as_str(), None),
                TxnOp::put(history_key(&keys, g, &r), json(&r).map_err(fail)?, None),
            ],
        )
        .await?;
        return Ok(format!(
            "group {g}: rollout to release {} aborted; hosts return to release {}\n",
            r.to, r.from
        ));
    }
    // The release before the current one: the last finished rollout to it.
    let dir = keys.history(g);
    let h = bounded(
        o.command_timeout,
        c.get(dir.as_str(), Some(GetOptions::new().with_prefix())),
    )
    .await
    .map_err(fail)?;
    let prev = h
        .kvs()
        .iter()
        .rev()
        .filter_map(|kv| serde_json::from_slice::<Rollout>(kv.value()).ok())
        .find(|r| r.state == RolloutState::Done && r.to == grp.release && r.from != 0)
        .map(|r| r.from)
        .ok_or_else(|| fail(format!("group {g}: no earlier release to roll back to")))?;
    if now_all {
        let now = now_ms();
        let rec = Rollout {
            id: random_id(),
            ruleset: grp.ruleset.clone(),
            from: grp.release,
            to: prev,
            state: RolloutState::Done,
            stages: vec![100],
            stage: 0,
            admit_below: Some(u64::MAX),
            admitted: 0,
            started_ms: now,
            stage_ms: now,
            updated_ms: now,
            reason: "rolled back at once by an operator".into(),
        };
        grp.release = prev;
        let gk = keys.group(g);
        txn(
            c,
            o,
            vec![unchanged(&gk, gmod), unchanged(&rkey, 0)],
            vec![
                TxnOp::put(gk.as_str(), json(&grp).map_err(fail)?, None),
                TxnOp::put(history_key(&keys, g, &rec), json(&rec).map_err(fail)?, None),
            ],
        )
        .await?;
        return Ok(format!("group {g}: back to release {prev} on every host\n"));
    }
    let now = now_ms();
    let r = Rollout {
        id: random_id(),
        ruleset: grp.ruleset.clone(),
        from: grp.release,
        to: prev,
        state: RolloutState::Running,
        stages: stages(grp.canary, grp.step),
        stage: 0,
        admit_below: None,
        admitted: 0,
        started_ms: now,
        stage_ms: now,
        updated_ms: now,
        reason: "rollback".into(),
    };
    txn(
        c,
        o,
        vec![unchanged(&keys.group(g), gmod), unchanged(&rkey, 0)],
        vec![TxnOp::put(rkey.as_str(), json(&r).map_err(fail)?, None)],
    )
    .await?;
    Ok(format!(
        "group {g}: rolling back to release {prev}, stages {:?}%\n",
        r.stages
    ))
}

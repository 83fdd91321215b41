//! Rollouts as pure functions: which release a host should hold, and what
//! the controller does next given the group's hosts and their statuses.
//!
//! Admission without a host list: each host has a rank, a hash of the
//! rollout id and its name ([`rank`]); a stage admits the hosts whose rank
//! is at most the rollout's `admit_below`, which the controller sets to
//! the k-th smallest rank of the group's live hosts (k = the stage's share,
//! at least one). Every agent decides for itself from a document of a few
//! hundred bytes, whatever the group's size, and admission only grows.
//!
//! A stage is complete when every admitted live host reports the new
//! release applied and healthy (in sync, no error) and the last of them has
//! been so for the group's `hold` seconds; the first admitted host that
//! reports an error on the new release fails the rollout (it stops where
//! it is). Hosts without a live status (dead, partitioned) neither block
//! nor count; they converge when they come back.

use crate::layout::{Group, Rollout, RolloutState, Status};
use sha2::{Digest, Sha256};

/// A host's admission rank in rollout `id`.
pub fn rank(host: &str, id: u64) -> u64 {
    let mut h = Sha256::new();
    h.update(id.to_le_bytes());
    h.update(host.as_bytes());
    let d = h.finalize();
    u64::from_be_bytes(d[..8].try_into().expect("sha256 is 32 bytes"))
}

/// Cumulative shares of the stages: the canary share, then `step` more
/// each stage, ending at 100 (percent; 0 canary or step counts as 1).
pub fn stages(canary: u32, step: u32) -> Vec<u32> {
    let mut v = vec![canary.clamp(1, 100)];
    while *v.last().expect("not empty") < 100 {
        let next = v.last().expect("not empty") + step.max(1);
        v.push(next.min(100));
    }
    v
}

/// Whether a rollout still decides what hosts hold.
pub fn active(r: &Rollout) -> bool {
    matches!(
        r.state,
        RolloutState::Running | RolloutState::Paused | RolloutState::Failed
    )
}

/// Whether `host` is admitted to `r`.
pub fn admitted(host: &str, r: &Rollout) -> bool {
    r.admit_below.is_some_and(|t| rank(host, r.id) <= t)
}

/// The release `host` of group `g` should hold (0: none; leave the host
/// as it is).
pub fn release_for(host: &str, g: &Group, r: Option<&Rollout>) -> i64 {
    match r {
        Some(r) if active(r) && r.ruleset == g.ruleset => {
            if admitted(host, r) {
                r.to
            } else {
                r.from
            }
        }
        _ => g.release,
    }
}

/// What the controller does with a running rollout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Nothing yet; why (for `fleet status`).
    Wait(String),
    /// Enter `stage`: admit hosts of rank at most `admit_below`
    /// (`admitted` of them now).
    Admit {
        stage: usize,
        admit_below: u64,
        admitted: usize,
    },
    /// Stop: the first error seen (`host: message`).
    Fail(String),
    /// Every stage complete.
    Done,
}

/// The threshold that admits `share` percent of `ranks` (sorted), at
/// least one host and never fewer than `floor` admits already.
fn threshold(ranks: &[u64], share: u32, floor: Option<u64>) -> (u64, usize) {
    let n = ranks.len();
    let k = (n * share as usize).div_ceil(100).clamp(1, n);
    let t = ranks[k - 1].max(floor.unwrap_or(0));
    (t, ranks.iter().filter(|&&r| r <= t).count())
}

/// The next step of running rollout `r`, given the group's members (host
/// name and live status, if any) and the time (Unix ms).
pub fn step(
    r: &Rollout,
    members: &[(&str, Option<&Status>)],
    hold_s: u64,
    now_ms: u64,
) -> Decision {
    let mut live: Vec<(&str, &Status)> = members
        .iter()
        .filter_map(|&(h, s)| s.map(|s| (h, s)))
        .collect();
    if live.is_empty() {
        return Decision::Wait("no live host in the group".into());
    }
    live.sort_by_key(|(h, _)| rank(h, r.id));
    let ranks: Vec<u64> = live.iter().map(|(h, _)| rank(h, r.id)).collect();
    let Some(below) = r.admit_below else {
        let (t, k) = threshold(&ranks, r.stages[0], None);
        return Decision::Admit {
            stage: 0,
            admit_below: t,
            admitted: k,
        };
    };
    let mut pending = 0;
    let mut total = 0;
    let mut last_ok = 0;
    for (h, s) in live.iter().filter(|(h, _)| rank(h, r.id) <= below) {
        total += 1;
        if s.desired == r.to && !s.error.is_empty() {
            return Decision::Fail(format!("{h}: {}", s.error));
        }
        if s.healthy_on(r.to) {
            last_ok = last_ok.max(s.applied_ms);
        } else {
            pending += 1;
        }
    }
    if pending > 0 {
        return Decision::Wait(format!(
            "{} of {total} admitted hosts on release {}",
            total - pending,
            r.to
        ));
    }
    let ready_at = last_ok + hold_s * 1000;
    if now_ms < ready_at {
        return Decision::Wait(format!(
            "holding {} s more",
            (ready_at - now_ms).div_ceil(1000)
        ));
    }
    if r.stage + 1 >= r.stages.len() {
        return Decision::Done;
    }
    let (t, k) = threshold(&ranks, r.stages[r.stage + 1], Some(below));
    Decision::Admit {
        stage: r.stage + 1,
        admit_below: t,
        admitted: k,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rollout() -> Rollout {
        Rollout {
            id: 42,
            ruleset: "web".into(),
            from: 10,
            to: 20,
            state: RolloutState::Running,
            stages: stages(10, 45),
            stage: 0,
            admit_below: None,
            admitted: 0,
            started_ms: 0,
            stage_ms: 0,
            updated_ms: 0,
            reason: String::new(),
        }
    }

    fn status(rev: i64, desired: i64, err: &str, at: u64) -> Status {
        Status {
            revision: rev,
            desired,
            in_sync: err.is_empty(),
            error: err.into(),
            applied_ms: at,
            ..Status::default()
        }
    }

    #[test]
    fn stage_shares() {
        assert_eq!(stages(10, 45), vec![10, 55, 100]);
        assert_eq!(stages(100, 0), vec![100]);
        assert_eq!(stages(0, 0).len(), 100);
        assert_eq!(stages(25, 25), vec![25, 50, 75, 100]);
    }

    #[test]
    fn release_by_admission() {
        let mut g = Group::new("web");
        g.release = 10;
        let mut r = rollout();
        assert_eq!(release_for("h1", &g, Some(&r)), 10);
        r.admit_below = Some(u64::MAX);
        assert_eq!(release_for("h1", &g, Some(&r)), 20);
        r.admit_below = Some(rank("h1", 42) - 1);
        assert_eq!(release_for("h1", &g, Some(&r)), 10);
        r.admit_below = Some(u64::MAX);
        for (state, want) in [
            (RolloutState::Paused, 20),
            (RolloutState::Failed, 20),
            (RolloutState::Aborted, 10),
            (RolloutState::Done, 10),
        ] {
            r.state = state;
            assert_eq!(release_for("h1", &g, Some(&r)), want, "{state:?}");
        }
        r.state = RolloutState::Running;
        r.ruleset = "db".into();
        assert_eq!(release_for("h1", &g, Some(&r)), 10);
        assert_eq!(release_for("h1", &g, None), 10);
    }

    #[test]
    fn a_rollout_through_its_stages() {
        let names: Vec<String> = (0..20).map(|i| format!("h{i}")).collect();
        let mut r = rollout();
        let mut st: Vec<Status> = names.iter().map(|_| status(10, 10, "", 1)).collect();
        let members = |st: &[Status]| -> Vec<(String, Status)> {
            names.iter().cloned().zip(st.iter().cloned()).collect()
        };
        let view = |m: &[(String, Status)]| -> Vec<(String, Option<Status>)> {
            m.iter()
                .map(|(h, s)| (h.clone(), Some(s.clone())))
                .collect()
        };
        let mut stage_sizes = Vec::new();
        for round in 0..10 {
            let m = view(&members(&st));
            let refs: Vec<(&str, Option<&Status>)> =
                m.iter().map(|(h, s)| (h.as_str(), s.as_ref())).collect();
            match step(&r, &refs, 0, 1000) {
                Decision::Admit {
                    stage,
                    admit_below,
                    admitted: k,
                } => {
                    r.stage = stage;
                    r.admit_below = Some(admit_below);
                    stage_sizes.push(k);
                    // The admitted hosts apply.
                    for (i, h) in names.iter().enumerate() {
                        if admitted(h, &r) {
                            st[i] = status(20, 20, "", 500 + round);
                        }
                    }
                }
                Decision::Done => break,
                d => panic!("unexpected {d:?}"),
            }
        }
        assert_eq!(stage_sizes, vec![2, 11, 20]);
        assert!(st.iter().all(|s| s.revision == 20));
    }

    #[test]
    fn waits_holds_fails_and_ignores_the_dead() {
        let mut r = rollout();
        r.admit_below = Some(u64::MAX);
        r.stage = r.stages.len() - 1;
        let ok = status(20, 20, "", 1_000);
        let behind = status(10, 20, "", 0);
        let broken = status(10, 20, "lockout: etcd 198.18.0.1:2379", 0);
        let stale_err = status(10, 10, "old error", 0);
        type Case<'a> = (Vec<(&'a str, Option<&'a Status>)>, u64, u64, Decision);
        let cases: Vec<Case> = vec![
            (
                vec![("a", Some(&ok)), ("b", Some(&behind))],
                0,
                5_000,
                Decision::Wait("1 of 2 admitted hosts on release 20".into()),
            ),
            (
                vec![("a", Some(&ok)), ("b", Some(&broken))],
                0,
                5_000,
                Decision::Fail("b: lockout: etcd 198.18.0.1:2379".into()),
            ),
            (
                vec![("a", Some(&ok)), ("b", Some(&stale_err))],
                0,
                5_000,
                Decision::Wait("1 of 2 admitted hosts on release 20".into()),
            ),
            (
                vec![("a", Some(&ok)), ("b", None)],
                3,
                2_500,
                Decision::Wait("holding 2 s more".into()),
            ),
            (
                vec![("a", Some(&ok)), ("b", None)],
                0,
                2_500,
                Decision::Done,
            ),
            (
                vec![("a", None)],
                0,
                2_500,
                Decision::Wait("no live host in the group".into()),
            ),
        ];
        for (members, hold, now, want) in cases {
            assert_eq!(step(&r, &members, hold, now), want, "{members:?}");
        }
    }
}

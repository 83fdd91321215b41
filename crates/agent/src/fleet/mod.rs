//! `nfkeeper-agent fleet ...` (`nfkeeper fleet ...`): the operators'
//! commands. They read and write etcd only; hosts act on what they find
//! there. Exit codes: 0 done, 1 refused or failed (the message says why),
//! 2 usage.

use crate::controller::{json, World};
use crate::etcd::{bounded, EtcdOpts};
use crate::layout::{now_ms, valid_name, DriftPolicy, Group, Rollout, RolloutState};
use etcd_client::{Client, Compare, CompareOp, GetOptions, SortOrder, SortTarget, Txn, TxnOp};
use std::fmt::Write as _;

mod rollouts;

use rollouts::{rollback, start_rollout};

pub const USAGE: &str = "\
usage: nfkeeper fleet [ETCD OPTIONS] COMMAND ...

  status [GROUP]                     groups, rollouts and every host's status
  rollout GROUP [--canary PCT] [--step PCT] [--hold SECS] [--no-check]
                                     snapshot the group's ruleset into a release and roll it
                                     out: canary share first, then STEP percent more per stage
  pause GROUP | resume GROUP         hold a running rollout where it is, or go on
  rollback GROUP [--now]             abort the rollout under way (hosts return to the release
                                     before it); without one, roll back to the previous
                                     release (--now: every host at once)
  history GROUP                      finished, failed and aborted rollouts
  set-ruleset NAME [--v4 FILE] [--v6 FILE]
                                     write a ruleset's head (iptables-save text; - is stdin)
  set-group GROUP --ruleset NAME [--drift reassert|report] [--canary PCT] [--step PCT]
            [--hold SECS] [--keep-open 'TRACE OPTIONS']...
  assign HOST GROUP                  put a host in a group
  set-additions HOST [--v4 FILE] [--v6 FILE]
                                     the host's own rules, on top of its group's (empty: none)

ETCD OPTIONS (as etcdctl's, also from ETCDCTL_*): --endpoints A,B --cacert F --cert F
  --key F --user NAME[:PW] --password PW --dial-timeout D --command-timeout D
  --prefix P (default /nfkeeper)";

/// A conditional write found its documents changed (by the controller,
/// most often); the command is decided again from fresh reads.
const CONFLICT: &str = "changed by someone else meanwhile; try again";

/// A command's failure: the exit code and the message.
type Fail = (i32, String);

fn fail(msg: impl Into<String>) -> Fail {
    (1, msg.into())
}

fn usage(msg: impl Into<String>) -> Fail {
    (2, msg.into())
}

/// Run `args` (after `fleet`); prints to stdout, returns the exit code.
pub async fn main(mut o: EtcdOpts, args: &[String]) -> i32 {
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (k, v) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        if rest.is_empty() && k.starts_with("--") && k != "--help" {
            let v = match v.or_else(|| it.next().cloned()) {
                Some(v) => v,
                None => {
                    eprintln!("nfkeeper fleet: {k} needs a value");
                    return 2;
                }
            };
            match o.set(&k, &v) {
                Ok(true) => continue,
                Ok(false) => {
                    eprintln!("nfkeeper fleet: unknown option {k}\n{USAGE}");
                    return 2;
                }
                Err(e) => {
                    eprintln!("nfkeeper fleet: {k}: {e}");
                    return 2;
                }
            }
        }
        rest.push(a.clone());
    }
    if rest.is_empty() || rest[0] == "--help" || rest[0] == "-h" {
        println!("{USAGE}");
        return if rest.is_empty() { 2 } else { 0 };
    }
    let mut c = match o.connect().await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("nfkeeper fleet: {e}");
            return 1;
        }
    };
    let mut res = command(&mut c, &o, &rest).await;
    for _ in 0..10 {
        match &res {
            Err((1, m)) if m == CONFLICT => {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                res = command(&mut c, &o, &rest).await;
            }
            _ => break,
        }
    }
    match res {
        Ok(out) => {
            print!("{out}");
            0
        }
        Err((code, msg)) => {
            eprintln!("nfkeeper fleet: {msg}");
            if code == 2 {
                eprintln!("Try `nfkeeper fleet --help' for more information.");
            }
            code
        }
    }
}

/// Flags of a subcommand: `--name value` pairs (repeatable) and operands.
struct Flags {
    pairs: Vec<(String, String)>,
    bare: Vec<String>,
    operands: Vec<String>,
}

fn flags(args: &[String], with_value: &[&str], bare: &[&str]) -> Result<Flags, Fail> {
    let mut f = Flags {
        pairs: Vec::new(),
        bare: Vec::new(),
        operands: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if with_value.contains(&a.as_str()) {
            let v = it
                .next()
                .ok_or_else(|| usage(format!("{a} needs a value")))?;
            f.pairs.push((a.clone(), v.clone()));
        } else if bare.contains(&a.as_str()) {
            f.bare.push(a.clone());
        } else if a.starts_with("--") {
            return Err(usage(format!("unknown option {a}")));
        } else {
            f.operands.push(a.clone());
        }
    }
    Ok(f)
}

impl Flags {
    fn get(&self, k: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    }
    fn all(&self, k: &str) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .collect()
    }
    fn num<T: std::str::FromStr>(&self, k: &str) -> Result<Option<T>, Fail> {
        self.get(k)
            .map(|v| {
                v.parse()
                    .map_err(|_| usage(format!("{k}: not a number: {v}")))
            })
            .transpose()
    }
    fn has(&self, k: &str) -> bool {
        self.bare.iter().any(|b| b == k)
    }
    fn names(&self, n: usize, what: &str) -> Result<Vec<String>, Fail> {
        if self.operands.len() != n {
            return Err(usage(format!("expected {what}")));
        }
        for s in &self.operands {
            if !valid_name(s) {
                return Err(usage(format!(
                    "invalid name {s:?} (letters, digits, . _ -)"
                )));
            }
        }
        Ok(self.operands.clone())
    }
}

fn read_input(path: &str) -> Result<String, Fail> {
    if path == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| fail(e.to_string()))?;
        return Ok(s);
    }
    std::fs::read_to_string(path).map_err(|e| fail(format!("{path}: {e}")))
}

async fn get_one(c: &mut Client, o: &EtcdOpts, key: &str) -> Result<Option<(Vec<u8>, i64)>, Fail> {
    let r = bounded(o.command_timeout, c.get(key, None))
        .await
        .map_err(fail)?;
    Ok(r.kvs()
        .first()
        .map(|kv| (kv.value().to_vec(), kv.mod_revision())))
}

async fn group(c: &mut Client, o: &EtcdOpts, g: &str) -> Result<(Group, i64), Fail> {
    let (b, m) = get_one(c, o, &o.keys().group(g))
        .await?
        .ok_or_else(|| fail(format!("group {g} does not exist")))?;
    let grp = serde_json::from_slice(&b).map_err(|e| fail(format!("group {g}: {e}")))?;
    Ok((grp, m))
}

async fn rollout_of(c: &mut Client, o: &EtcdOpts, g: &str) -> Result<Option<(Rollout, i64)>, Fail> {
    match get_one(c, o, &o.keys().rollout(g)).await? {
        Some((b, m)) => Ok(Some((
            serde_json::from_slice(&b).map_err(|e| fail(format!("rollout {g}: {e}")))?,
            m,
        ))),
        None => Ok(None),
    }
}

async fn txn(
    c: &mut Client,
    o: &EtcdOpts,
    when: Vec<Compare>,
    ops: Vec<TxnOp>,
) -> Result<(), Fail> {
    let r = bounded(
        o.command_timeout,
        c.txn(Txn::new().when(when).and_then(ops)),
    )
    .await
    .map_err(fail)?;
    if !r.succeeded() {
        return Err(fail(CONFLICT));
    }
    Ok(())
}

/// A compare that holds while `key` is at mod revision `m` (0: absent).
fn unchanged(key: &str, m: i64) -> Compare {
    Compare::mod_revision(key, CompareOp::Equal, m)
}

fn random_id() -> u64 {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(now_ms().to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(format!("{:?}", std::time::Instant::now()).as_bytes());
    u64::from_le_bytes(h.finalize()[..8].try_into().expect("32 bytes"))
}

async fn command(c: &mut Client, o: &EtcdOpts, args: &[String]) -> Result<String, Fail> {
    let keys = o.keys();
    let rest = &args[1..];
    match args[0].as_str() {
        "status" => status(c, o, &flags(rest, &[], &[])?.operands).await,
        "rollout" => {
            let f = flags(rest, &["--canary", "--step", "--hold"], &["--no-check"])?;
            let g = &f.names(1, "GROUP")?[0];
            start_rollout(c, o, g, &f).await
        }
        cmd @ ("pause" | "resume") => {
            let f = flags(rest, &[], &[])?;
            let g = &f.names(1, "GROUP")?[0];
            let (mut r, m) = rollout_of(c, o, g)
                .await?
                .ok_or_else(|| fail(format!("group {g} has no rollout under way")))?;
            let (from, to) = if cmd == "pause" {
                (RolloutState::Running, RolloutState::Paused)
            } else {
                (RolloutState::Paused, RolloutState::Running)
            };
            if r.state != from {
                return Err(fail(format!(
                    "the rollout of group {g} is {}, not {}",
                    state_name(r.state),
                    state_name(from)
                )));
            }
            r.state = to;
            r.updated_ms = now_ms();
            r.reason = format!("{cmd}d by an operator");
            let k = keys.rollout(g);
            txn(
                c,
                o,
                vec![unchanged(&k, m)],
                vec![TxnOp::put(k.as_str(), json(&r).map_err(fail)?, None)],
            )
            .await?;
            Ok(format!("group {g}: rollout to release {} {cmd}d\n", r.to))
        }
        "rollback" => {
            let f = flags(rest, &[], &["--now"])?;
            let g = &f.names(1, "GROUP")?[0];
            rollback(c, o, g, f.has("--now")).await
        }
        "history" => {
            let f = flags(rest, &[], &[])?;
            let g = &f.names(1, "GROUP")?[0];
            let dir = keys.history(g);
            let r = bounded(
                o.command_timeout,
                c.get(
                    dir.as_str(),
                    Some(
                        GetOptions::new()
                            .with_prefix()
                            .with_sort(SortTarget::Key, SortOrder::Ascend),
                    ),
                ),
            )
            .await
            .map_err(fail)?;
            let mut out = String::new();
            for kv in r.kvs() {
                if let Ok(h) = serde_json::from_slice::<Rollout>(kv.value()) {
                    let _ = writeln!(
                        out,
                        "{} {} -> {} {} stage {}/{} {}",
                        h.started_ms,
                        h.from,
                        h.to,
                        state_name(h.state),
                        h.stage + 1,
                        h.stages.len(),
                        h.reason
                    );
                }
            }
            Ok(out)
        }
        "set-ruleset" => {
            let f = flags(rest, &["--v4", "--v6", "--ipset"], &[])?;
            let name = &f.names(1, "NAME")?[0];
            let dir = keys.ruleset(name);
            let mut ops = Vec::new();
            for fam in ["v4", "v6", "ipset"] {
                if let Some(p) = f.get(&format!("--{fam}")) {
                    let text = read_input(p)?;
                    ops.push(match text.is_empty() {
                        true => TxnOp::delete(format!("{dir}{fam}"), None),
                        false => TxnOp::put(format!("{dir}{fam}"), text, None),
                    });
                }
            }
            if ops.is_empty() {
                return Err(usage("set-ruleset needs --v4 or --v6"));
            }
            txn(c, o, vec![], ops).await?;
            Ok(String::new())
        }
        "set-group" => {
            let f = flags(
                rest,
                &[
                    "--ruleset",
                    "--drift",
                    "--canary",
                    "--step",
                    "--hold",
                    "--keep-open",
                ],
                &[],
            )?;
            let g = &f.names(1, "GROUP")?[0];
            let k = keys.group(g);
            let old = get_one(c, o, &k).await?;
            let (mut grp, m) = match &old {
                Some((b, m)) => (
                    serde_json::from_slice(b).map_err(|e| fail(format!("group {g}: {e}")))?,
                    *m,
                ),
                None => {
                    let rs = f
                        .get("--ruleset")
                        .ok_or_else(|| usage("a new group needs --ruleset"))?;
                    (Group::new(rs), 0)
                }
            };
            if let Some(rs) = f.get("--ruleset") {
                if !valid_name(rs) {
                    return Err(usage(format!("invalid ruleset name {rs:?}")));
                }
                if rs != grp.ruleset {
                    grp.ruleset = rs.into();
                    grp.release = 0;
                }
            }
            grp.drift = match f.get("--drift") {
                Some("reassert") => DriftPolicy::Reassert,
                Some("report") => DriftPolicy::Report,
                Some(v) => return Err(usage(format!("--drift: reassert or report, not {v}"))),
                None => grp.drift,
            };
            grp.canary = f.num("--canary")?.unwrap_or(grp.canary);
            grp.step = f.num("--step")?.unwrap_or(grp.step);
            grp.hold = f.num("--hold")?.unwrap_or(grp.hold);
            let ko = f.all("--keep-open");
            if !ko.is_empty() {
                for s in &ko {
                    crate::lockout::flow_probes(s).map_err(usage)?;
                }
                grp.keep_open = ko;
            }
            txn(
                c,
                o,
                vec![unchanged(&k, m)],
                vec![TxnOp::put(k.as_str(), json(&grp).map_err(fail)?, None)],
            )
            .await?;
            Ok(String::new())
        }
        "assign" => {
            let f = flags(rest, &[], &[])?;
            let n = f.names(2, "HOST GROUP")?;
            txn(
                c,
                o,
                vec![],
                vec![TxnOp::put(
                    format!("{}group", keys.host(&n[0])),
                    n[1].as_str(),
                    None,
                )],
            )
            .await?;
            Ok(String::new())
        }
        "set-additions" => {
            let f = flags(rest, &["--v4", "--v6"], &[])?;
            let h = &f.names(1, "HOST")?[0];
            let mut ops = Vec::new();
            for fam in ["v4", "v6"] {
                if let Some(p) = f.get(&format!("--{fam}")) {
                    let text = read_input(p)?;
                    let key = format!("{}{fam}", keys.host(h));
                    ops.push(match text.is_empty() {
                        true => TxnOp::delete(key, None),
                        false => TxnOp::put(key, text, None),
                    });
                }
            }
            txn(c, o, vec![], ops).await?;
            Ok(String::new())
        }
        other => Err(usage(format!("unknown command {other}"))),
    }
}

fn state_name(s: RolloutState) -> &'static str {
    match s {
        RolloutState::Running => "running",
        RolloutState::Paused => "paused",
        RolloutState::Failed => "failed",
        RolloutState::Done => "done",
        RolloutState::Aborted => "aborted",
    }
}

fn drift_name(d: DriftPolicy) -> &'static str {
    match d {
        DriftPolicy::Reassert => "reassert",
        DriftPolicy::Report => "report",
    }
}

/// `fleet status [GROUP]`.
async fn status(c: &mut Client, o: &EtcdOpts, only: &[String]) -> Result<String, Fail> {
    let keys = o.keys();
    let mut w = World::default();
    for d in [
        keys.groups(),
        keys.rollouts(),
        keys.hosts(),
        keys.statuses(),
    ] {
        let r = bounded(
            o.command_timeout,
            c.get(d.as_str(), Some(GetOptions::new().with_prefix())),
        )
        .await
        .map_err(fail)?;
        for kv in r.kvs() {
            if let Ok(k) = kv.key_str() {
                w.set(&keys, k, Some(kv.value()), kv.mod_revision());
            }
        }
    }
    Ok(render_status(&w, only, now_ms()))
}

/// The status text (pure, for tests).
pub fn render_status(w: &World, only: &[String], now: u64) -> String {
    let mut out = String::new();
    let mut groups: Vec<&String> = w.groups.keys().collect();
    groups.sort();
    for g in groups
        .into_iter()
        .filter(|g| only.is_empty() || only.contains(g))
    {
        let (grp, _) = &w.groups[g];
        let members = w.members_of(g);
        let live = members.iter().filter(|(_, s)| s.is_some()).count();
        let _ = writeln!(
            out,
            "group {g}: ruleset {} release {}, drift {}, {} hosts ({} reporting)",
            grp.ruleset,
            grp.release,
            drift_name(grp.drift),
            members.len(),
            live
        );
        if let Some((r, _)) = w.rollouts.get(g) {
            let why = match w.decide(g, now) {
                Some(crate::rollout::Decision::Wait(why)) => why,
                Some(d) => format!("{d:?}"),
                None => r.reason.clone(),
            };
            let _ = writeln!(
                out,
                "  rollout {} -> {}: {}, stage {}/{} ({}%), {} admitted; {}",
                r.from,
                r.to,
                state_name(r.state),
                r.stage + 1,
                r.stages.len(),
                r.stages.get(r.stage).copied().unwrap_or(0),
                r.admitted,
                why
            );
        }
        for (h, s) in members {
            match s {
                Some(s) => {
                    let state = if !s.error.is_empty() {
                        format!("error: {}", s.error)
                    } else if s.drift {
                        "drift".into()
                    } else if s.in_sync {
                        "in sync".into()
                    } else {
                        "applying".into()
                    };
                    let _ = writeln!(
                        out,
                        "  {h}: release {} (wants {}), {state}, {} applies, {}, seen {} s ago",
                        s.revision,
                        s.desired,
                        s.applies,
                        s.mode,
                        now.saturating_sub(s.time_ms) / 1000
                    );
                }
                None => {
                    let _ = writeln!(out, "  {h}: no status (agent down or cut off)");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Keys;

    #[test]
    fn status_text() {
        let k = Keys::new("/n");
        let mut w = World::default();
        w.set(
            &k,
            "/n/groups/web",
            Some(br#"{"ruleset":"web","release":5}"#),
            3,
        );
        w.set(&k, "/n/hosts/h1/group", Some(b"web"), 4);
        w.set(&k, "/n/hosts/h2/group", Some(b"web"), 4);
        w.set(&k, "/n/status/h1", Some(br#"{"host":"h1","group":"web","revision":5,"desired":5,"digest":"","in_sync":true,"applied_ms":1,"time_ms":1000,"applies":2,"mode":"daemon"}"#), 6);
        let t = render_status(&w, &[], 3000);
        assert_eq!(
            t,
            "group web: ruleset web release 5, drift reassert, 2 hosts (1 reporting)\n  h1: release 5 (wants 5), in sync, 2 applies, daemon, seen 2 s ago\n  h2: no status (agent down or cut off)\n"
        );
        assert_eq!(render_status(&w, &["db".to_string()], 3000), "");
    }

    #[test]
    fn subcommand_flags() {
        let a: Vec<String> = ["web", "--canary", "5", "--no-check"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let f = flags(&a, &["--canary"], &["--no-check"]).unwrap();
        assert_eq!(f.num::<u32>("--canary").unwrap(), Some(5));
        assert!(f.has("--no-check"));
        assert_eq!(f.names(1, "GROUP").unwrap(), vec!["web"]);
        assert_eq!(flags(&a, &[], &[]).err().unwrap().0, 2);
        let bad: Vec<String> = vec!["a/b".into()];
        assert_eq!(
            flags(&bad, &[], &[])
                .unwrap()
                .names(1, "G")
                .err()
                .unwrap()
                .0,
            2
        );
    }
}

//! The key layout in etcd (docs/fleet.md is its specification) and the
//! JSON documents stored under it. Pure: names and (de)serialisation only.
//!
//! ```text
//! P/rulesets/NAME/v4 | v6 | ipset     editable heads (iptables-save / ipset save text)
//! P/releases/NAME/REV/v4 | v6 | ipset immutable snapshots of a head (REV: the head's revision)
//! P/groups/GROUP                      Group (JSON): ruleset, settled release, policies
//! P/rollouts/GROUP                    Rollout (JSON) while one is under way
//! P/history/GROUP/ID                  Rollout (JSON) once finished, failed or aborted
//! P/hosts/HOST/group                  the host's group (plain text)
//! P/hosts/HOST/v4 | v6                per-host additions (restore text, applied --noflush)
//! P/status/HOST                       Status (JSON), under the agent's lease
//! P/controller                        the rollout controller's name, under its lease
//! ```
//!
//! P is the prefix (`/nfkeeper` by default). Host, group and ruleset names
//! are one path segment: [`valid_name`].

use serde::{Deserialize, Serialize};

/// The default key prefix.
pub const DEFAULT_PREFIX: &str = "/nfkeeper";

/// The address families a ruleset carries, by their key names.
pub const FAMILIES: [&str; 2] = ["v4", "v6"];

/// A name usable as one key segment: 1..=253 bytes of `[A-Za-z0-9._-]`,
/// not `.` or `..`.
pub fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Key names under one prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keys {
    prefix: String,
}

impl Keys {
    /// `prefix` without a trailing `/` (one is removed).
    pub fn new(prefix: &str) -> Keys {
        Keys {
            prefix: prefix.trim_end_matches('/').to_string(),
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn ruleset(&self, name: &str) -> String {
        format!("{}/rulesets/{name}/", self.prefix)
    }

    pub fn release(&self, name: &str, rev: i64) -> String {
        format!("{}/releases/{name}/{rev}/", self.prefix)
    }

    pub fn releases(&self, name: &str) -> String {
        format!("{}/releases/{name}/", self.prefix)
    }

    pub fn group(&self, g: &str) -> String {
        format!("{}/groups/{g}", self.prefix)
    }

    pub fn groups(&self) -> String {
        format!("{}/groups/", self.prefix)
    }

    pub fn rollout(&self, g: &str) -> String {
        format!("{}/rollouts/{g}", self.prefix)
    }

    pub fn rollouts(&self) -> String {
        format!("{}/rollouts/", self.prefix)
    }

    pub fn history(&self, g: &str) -> String {
        format!("{}/history/{g}/", self.prefix)
    }

    pub fn host(&self, h: &str) -> String {
        format!("{}/hosts/{h}/", self.prefix)
    }

    pub fn hosts(&self) -> String {
        format!("{}/hosts/", self.prefix)
    }

    pub fn status(&self, h: &str) -> String {
        format!("{}/status/{h}", self.prefix)
    }

    pub fn statuses(&self) -> String {
        format!("{}/status/", self.prefix)
    }

    pub fn controller(&self) -> String {
        format!("{}/controller", self.prefix)
    }

    /// The host of a `P/hosts/HOST/...` key and the rest after it.
    pub fn host_of<'a>(&self, key: &'a str) -> Option<(&'a str, &'a str)> {
        let rest = key.strip_prefix(&self.prefix)?.strip_prefix("/hosts/")?;
        rest.split_once('/')
    }

    /// The last segment of a key under `dir` (`dir` ends with `/`).
    pub fn leaf<'a>(key: &'a str, dir: &str) -> Option<&'a str> {
        key.strip_prefix(dir).filter(|s| !s.contains('/'))
    }
}

/// What to do when the kernel's tables no longer hold what was applied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriftPolicy {
    /// Apply the desired state again.
    #[default]
    Reassert,
    /// Report it (status, metrics, log) and leave it for a human.
    Report,
}

/// A host group: which ruleset its hosts carry and how changes reach them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    pub ruleset: String,
    /// The release every host of the group holds when no rollout is under
    /// way; 0: none yet (hosts are left as they are).
    #[serde(default)]
    pub release: i64,
    #[serde(default)]
    pub drift: DriftPolicy,
    /// Share of hosts, in percent, that get a new release first.
    #[serde(default = "default_canary")]
    pub canary: u32,
    /// Share of hosts, in percent, added by each later stage.
    #[serde(default = "default_step")]
    pub step: u32,
    /// Seconds every admitted host must have been healthy on the new
    /// release before the next stage.
    #[serde(default)]
    pub hold: u64,
    /// Flows that must stay open (`nfkeeper trace` packet options, e.g.
    /// `--hook input -s 10.0.0.1 -p tcp --dport 22`), besides etcd.
    #[serde(default)]
    pub keep_open: Vec<String>,
}

fn default_canary() -> u32 {
    10
}

fn default_step() -> u32 {
    30
}

impl Group {
    pub fn new(ruleset: &str) -> Group {
        Group {
            ruleset: ruleset.to_string(),
            release: 0,
            drift: DriftPolicy::default(),
            canary: default_canary(),
            step: default_step(),
            hold: 0,
            keep_open: Vec::new(),
        }
    }
}

/// Where a rollout stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RolloutState {
    Running,
    Paused,
    /// Stopped at the first error; hosts admitted keep what they have.
    Failed,
    Done,
    /// Rolled back: every host returns to `from`.
    Aborted,
}

/// A release on its way through a group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rollout {
    /// Random; with the host name it orders hosts for admission.
    pub id: u64,
    pub ruleset: String,
    /// The release hosts not yet admitted keep (0: none).
    pub from: i64,
    pub to: i64,
    pub state: RolloutState,
    /// Cumulative shares of hosts (percent), one per stage, ending at 100.
    pub stages: Vec<u32>,
    /// The stage reached (index into `stages`).
    pub stage: usize,
    /// Hosts whose admission hash ([`crate::rollout::rank`]) is at most
    /// this are admitted; `None`: none yet.
    pub admit_below: Option<u64>,
    /// Hosts admitted when the stage was entered.
    #[serde(default)]
    pub admitted: usize,
    /// Unix milliseconds: started, stage entered, last change.
    pub started_ms: u64,
    pub stage_ms: u64,
    pub updated_ms: u64,
    /// Why it failed (host: message), or who paused or aborted it.
    #[serde(default)]
    pub reason: String,
}

/// What an agent reports about its host, under its lease.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    pub host: String,
    pub group: String,
    /// The release the kernel holds (0: none applied by this agent).
    pub revision: i64,
    /// The release the host should hold now.
    pub desired: i64,
    /// Mod revision of the host's additions applied (0: none).
    #[serde(default)]
    pub additions: i64,
    /// `sha256:HEX` of what the kernel holds (canonical save text).
    pub digest: String,
    /// The kernel holds the desired state.
    pub in_sync: bool,
    /// Someone else changed the tables since the last apply.
    #[serde(default)]
    pub drift: bool,
    /// The last apply's error (refusal, lockout, kernel error); empty if
    /// it succeeded.
    #[serde(default)]
    pub error: String,
    /// Unix milliseconds of the last apply and of this report.
    pub applied_ms: u64,
    pub time_ms: u64,
    /// Applies since the agent started.
    pub applies: u64,
    /// How the agent reaches the kernel: "daemon" or "direct".
    #[serde(default)]
    pub mode: String,
}

impl Status {
    /// Healthy on release `rev`: holds it, in sync, no error.
    pub fn healthy_on(&self, rev: i64) -> bool {
        self.revision == rev && self.desired == rev && self.in_sync && self.error.is_empty()
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for (s, ok) in [
            ("web-1", true),
            ("db.eu_2", true),
            ("", false),
            (".", false),
            ("..", false),
            ("a/b", false),
            ("a b", false),
            ("é", false),
        ] {
            assert_eq!(valid_name(s), ok, "{s:?}");
        }
    }

    #[test]
    fn keys() {
        let k = Keys::new("/fleet/");
        assert_eq!(k.group("web"), "/fleet/groups/web");
        assert_eq!(k.release("web", 42), "/fleet/releases/web/42/");
        assert_eq!(k.host("h1"), "/fleet/hosts/h1/");
        assert_eq!(k.host_of("/fleet/hosts/h1/group"), Some(("h1", "group")));
        assert_eq!(k.host_of("/fleet/status/h1"), None);
        assert_eq!(Keys::leaf("/fleet/status/h1", &k.statuses()), Some("h1"));
        assert_eq!(Keys::leaf("/fleet/status/h1/x", &k.statuses()), None);
    }

    #[test]
    fn group_defaults_and_round_trip() {
        let g: Group = serde_json::from_str(r#"{"ruleset":"web"}"#).unwrap();
        assert_eq!(g, Group::new("web"));
        let g2: Group = serde_json::from_str(
            r#"{"ruleset":"web","release":7,"drift":"report","canary":5,"step":50,"hold":3,"keep_open":["-p tcp --dport 22"]}"#,
        )
        .unwrap();
        assert_eq!(g2.drift, DriftPolicy::Report);
        let back: Group = serde_json::from_str(&serde_json::to_string(&g2).unwrap()).unwrap();
        assert_eq!(back, g2);
        assert!(serde_json::from_str::<Group>(r#"{"ruleset":"w","drift":"ignore"}"#).is_err());
    }

    #[test]
    fn health() {
        let s = Status {
            revision: 5,
            desired: 5,
            in_sync: true,
            ..Status::default()
        };
        assert!(s.healthy_on(5));
        assert!(!s.healthy_on(6));
        let bad = Status {
            error: "x".into(),
            ..s.clone()
        };
        assert!(!bad.healthy_on(5));
        let drifted = Status {
            in_sync: false,
            ..s
        };
        assert!(!drifted.healthy_on(5));
    }
}

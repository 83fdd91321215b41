//! How the engine behaves, decided once by the program (its flags and
//! environment) and passed down: library code never reads the environment.

pub use compile::runs::RunOpts;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Compile runs of similar rules into sets and verdict maps (see
    /// `crate::plan::runs`); `None`: every logical rule is its own kernel
    /// rule.
    pub compile: Option<RunOpts>,
    /// How long direct mode keeps re-reading and re-committing when the
    /// ruleset changes under a command that gives no `-w` (iptables-nft
    /// retries such conflicts without a limit; a bound keeps a stuck
    /// ruleset from hanging scripts).
    pub retry_for: Duration,
    /// Keep snapshots of fully read tables for reads without a daemon
    /// (see [`crate::snapshot`]), in [`SNAPSHOT_DIR`].
    pub snapshots: bool,
    /// A direct-mode session hands its netlink socket's last close to the
    /// namespace's closer process when it ends, so that the program's exit
    /// never waits for the kernel's deferred destruction of what it (or
    /// another command of the same burst) deleted (see `nft::linger`).
    /// Only for short-lived programs (the iptables and ipset
    /// personalities); never for the daemon or tests.
    pub close_after_exit: bool,
    /// The program ends with the command (the iptables and ipset
    /// personalities): a command's working state (its model of the tables
    /// read) is left to the process exit instead of being freed piece by
    /// piece (5% of a kube-proxy sync's restore at 5 000 services).
    pub one_shot: bool,
}

/// Where snapshots are kept.
pub const SNAPSHOT_DIR: &str = "/run/nfkeeper/snap";

impl Default for Settings {
    fn default() -> Self {
        Settings {
            compile: Some(RunOpts::default()),
            retry_for: Duration::from_secs(10),
            snapshots: true,
            close_after_exit: false,
            one_shot: false,
        }
    }
}

/// The run compilation a setting names: `off` (none), `runs` (runs of the
/// default minimum length), `runs:N` (N ≥ 2); either with `+numgen`, also
/// kube-proxy's endpoint selection as numgen maps. `None`: not a valid
/// value.
pub fn parse_compile(v: &str) -> Option<Option<RunOpts>> {
    let (v, numgen) = match v.strip_suffix("+numgen") {
        Some(v) => (v, true),
        None => (v, false),
    };
    match v {
        "off" if !numgen => Some(None),
        "runs" => Some(Some(RunOpts {
            numgen,
            ..RunOpts::default()
        })),
        _ => {
            let n: usize = v.strip_prefix("runs:")?.parse().ok()?;
            (n >= 2).then_some(Some(RunOpts { min_len: n, numgen }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_values() {
        let d = RunOpts::default();
        let cases: &[(&str, Option<Option<RunOpts>>)] = &[
            ("off", Some(None)),
            ("runs", Some(Some(d))),
            (
                "runs:4",
                Some(Some(RunOpts {
                    min_len: 4,
                    numgen: false,
                })),
            ),
            (
                "runs:4+numgen",
                Some(Some(RunOpts {
                    min_len: 4,
                    numgen: true,
                })),
            ),
            ("runs+numgen", Some(Some(RunOpts { numgen: true, ..d }))),
            ("off+numgen", None),
            ("runs:1", None),
            ("runs:x", None),
            ("on", None),
        ];
        for (v, want) in cases {
            assert_eq!(parse_compile(v), *want, "{v}");
        }
    }
}

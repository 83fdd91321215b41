//! Reference packet classifier.
//!
//! What it is for: saying what a packet gets, twice — once from the logical
//! (iptables) ruleset with iptables' semantics ([`logical`]), once from the
//! nftables objects nfkeeper compiles that ruleset into ([`compiled`]: an
//! interpreter of the native expressions, sets and verdict maps) — so tests
//! can prove the compiler changes nothing for any packet: same verdict, same
//! logical rule counting the packet. What it is not: a packet filter (it is
//! slow on purpose: clear over fast) or a model of everything the kernel
//! does; a match or expression it does not model is an [`Unsupported`]
//! error, never a guess.
//!
//! Stateful matches (`limit`, `statistic`) have no fixed outcome; both
//! evaluators ask the same [`Choices`] for it, keyed by the logical rule, so
//! every outcome is explored by varying the seed; a random statistic match
//! passes with its own probability over the seeds. A `numgen random mod k`
//! verdict map (kube-proxy's endpoint selection, `compile::runs::numgen`)
//! draws as its members' rules would, one member after the other, so the
//! two evaluations agree packet by packet and the map's choice is uniform. The compiler must keep
//! such rules out of shared kernel objects (a run's one `limit` would be one
//! token bucket for many rules), which is what makes that key sound.

pub mod build;
pub mod compiled;
pub mod describe;
pub mod gen;
pub mod logical;
pub mod packet;

pub use packet::{CtState, Packet, L4};
use ruleset::RuleId;
use std::fmt;

/// The netfilter hooks a packet passes, in the order iptables names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hook {
    Prerouting,
    Input,
    Forward,
    Output,
    Postrouting,
}

impl Hook {
    /// The built-in chain name of this hook.
    pub fn chain(self) -> &'static str {
        match self {
            Hook::Prerouting => "PREROUTING",
            Hook::Input => "INPUT",
            Hook::Forward => "FORWARD",
            Hook::Output => "OUTPUT",
            Hook::Postrouting => "POSTROUTING",
        }
    }
}

/// What the packet finally gets at a hook.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    Accept,
    Drop,
    /// `-j REJECT` (the kernel sends the reply and drops).
    Reject,
    /// Any other terminating target (NAT, …), by its printed name.
    Other(String),
}

/// The result of one evaluation: the verdict, the logical rules whose
/// counters the packet incremented (in evaluation order), and the packet
/// mark afterwards (targets may set it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub verdict: Verdict,
    pub counted: Vec<RuleId>,
    pub mark: u32,
}

/// Something the classifier does not model. Tests generate only what it
/// models; any other case is reported, never guessed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported(pub String);

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the classifier does not model {}", self.0)
    }
}

impl std::error::Error for Unsupported {}

/// Outcomes of stateful matches: whether the `n`th stateful match of
/// logical rule `rule` passes. Deterministic in (seed, rule, n), so the
/// logical and the compiled evaluation see the same outcomes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Choices {
    pub seed: u64,
    /// Every stateful match passes (`Some(true)`) or fails, whatever the
    /// seed (e.g. `nfkeeper trace`).
    pub fixed: Option<bool>,
}

impl Choices {
    /// A coin: limits and nth counters pass or fail.
    pub fn pass(&self, rule: RuleId, n: u32) -> bool {
        if let Some(f) = self.fixed {
            return f;
        }
        self.mix(rule, n) & 1 == 1
    }

    /// The 31-bit random number xt_statistic (and `meta random` masked
    /// with 0x7fffffff) compares with a probability's threshold, for the
    /// `n`th stateful match of `rule`: uniform over the seed, so a
    /// statistic match passes with its own probability. `None` when the
    /// outcomes are fixed.
    pub fn random31(&self, rule: RuleId, n: u32) -> Option<u32> {
        if self.fixed.is_some() {
            return None;
        }
        Some((self.mix(rule, n) >> 33) as u32)
    }

    /// Whether a random-mode statistic match of `rule` with threshold
    /// `val` (probability × 2^31) and inversion `inv` passes.
    pub fn below(&self, rule: RuleId, n: u32, val: u32, inv: bool) -> bool {
        match self.random31(rule, n) {
            Some(r) => (r < val) != inv,
            None => self.fixed == Some(true),
        }
    }

    /// SplitMix64's finaliser over the three inputs: cheap, well mixed.
    fn mix(&self, rule: RuleId, n: u32) -> u64 {
        let mut z = self
            .seed
            .wrapping_add(rule.0.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .wrapping_add(u64::from(n).wrapping_mul(0xbf58_476d_1ce4_e5b9));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

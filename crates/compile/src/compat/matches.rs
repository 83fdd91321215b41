//! Match extensions lowered through nft_compat (see [`super`]).

use super::CompatInfo;
use iptables::ext::Match;
use ruleset::Family;

/// The compat form of match `m` in `family`, if it has one.
pub fn info(m: &Match, family: Family) -> Option<CompatInfo> {
    let _ = (m, family);
    None
}

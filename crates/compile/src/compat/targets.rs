//! Target extensions lowered through nft_compat (see [`super`]).

use super::CompatInfo;
use iptables::ext::TargetExt;
use ruleset::Family;

/// The compat form of target `t` in `family`, if it has one.
pub fn info(t: &TargetExt, family: Family) -> Option<CompatInfo> {
    let _ = (t, family);
    None
}

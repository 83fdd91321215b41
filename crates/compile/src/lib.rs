//! From the logical (iptables) model to native nftables objects.
//!
//! What it is for: deciding what nfkeeper puts in the kernel — one table per
//! (family, iptables table) with base chains on iptables' hooks and
//! priorities (`layout`), the userdata that lets a rule be rebuilt from the
//! kernel alone (`userdata`), and the native expressions of every supported
//! match and target (`lower`). What it is not: it does no I/O (the `nft`
//! crate sends what this produces) and plans no transactions (the keeper does).
//! `runs` compiles runs of similar rules into set lookups and verdict maps.
//! `ipset` maps ipset sets (the `ipset` crate's model) onto nftables sets.
//! `registry` keeps chains that need no kernel chain yet as set elements.
//! `replay` gives `-j CT --helper` its effect after conntrack.
//!
//! A match or target without an exactly equivalent native nftables form
//! runs as the kernel's own xtables extension through nft_compat
//! (`compat`), unless the kernel refuses that in nfkeeper's tables
//! ([`compat::tables`]); then the rule is rejected with
//! [`LowerError::NotNative`] and the reasons, never approximated.
//! docs/compatibility.md lists the form of every extension.

pub mod compat;
pub mod ipset;
pub mod layout;
pub mod lower;
pub mod registry;
pub mod replay;
pub mod runs;
pub mod userdata;

pub use lower::{
    lower_rule, lower_rule_with, rebase_lookups, AnonMap, AnonSet, IpsetInfo, Ipsets, LowerError,
    Lowered, NoIpsets, RuleObject,
};

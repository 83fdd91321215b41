//! Kernel layout: table names, base chains with iptables' hooks, priorities
//! and chain types; the size our hash sets are made with.

use ruleset::{Family, TableKind};

/// Netfilter hook numbers (`enum nf_inet_hooks`).
pub mod hook {
    pub const PRE_ROUTING: u32 = 0;
    pub const LOCAL_IN: u32 = 1;
    pub const FORWARD: u32 = 2;
    pub const LOCAL_OUT: u32 = 3;
    pub const POST_ROUTING: u32 = 4;
}

/// The nftables family of an iptables family.
pub fn nft_family(f: Family) -> nft::Family {
    match f {
        Family::Ipv4 => nft::Family::Ipv4,
        Family::Ipv6 => nft::Family::Ipv6,
    }
}

/// Our table for one iptables table: `nfkeeper_filter`, `nfkeeper_nat`, …
/// (the family is the nftables table family, so ip and ip6 share names).
pub fn table_name(kind: TableKind) -> String {
    format!("nfkeeper_{}", kind.name())
}

/// A base chain as iptables registers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaseChain {
    pub name: &'static str,
    pub hook: u32,
    pub priority: i32,
    /// nftables chain type: "filter", "nat" or "route".
    pub chain_type: &'static str,
}

/// iptables' priorities (NF_IP_PRI_*): raw -300, mangle -150, dnat -100,
/// filter 0, security 50, snat 100.
pub fn base_chains(kind: TableKind) -> &'static [BaseChain] {
    use hook::*;
    const fn b(
        name: &'static str,
        hook: u32,
        priority: i32,
        chain_type: &'static str,
    ) -> BaseChain {
        BaseChain {
            name,
            hook,
            priority,
            chain_type,
        }
    }
    const FILTER: [BaseChain; 3] = [
        b("INPUT", LOCAL_IN, 0, "filter"),
        b("FORWARD", FORWARD, 0, "filter"),
        b("OUTPUT", LOCAL_OUT, 0, "filter"),
    ];
    const NAT: [BaseChain; 4] = [
        b("PREROUTING", PRE_ROUTING, -100, "nat"),
        b("INPUT", LOCAL_IN, 100, "nat"),
        b("OUTPUT", LOCAL_OUT, -100, "nat"),
        b("POSTROUTING", POST_ROUTING, 100, "nat"),
    ];
    const MANGLE: [BaseChain; 5] = [
        b("PREROUTING", PRE_ROUTING, -150, "filter"),
        b("INPUT", LOCAL_IN, -150, "filter"),
        b("FORWARD", FORWARD, -150, "filter"),
        b("OUTPUT", LOCAL_OUT, -150, "route"),
        b("POSTROUTING", POST_ROUTING, -150, "filter"),
    ];
    const RAW: [BaseChain; 2] = [
        b("PREROUTING", PRE_ROUTING, -300, "filter"),
        b("OUTPUT", LOCAL_OUT, -300, "filter"),
    ];
    const SECURITY: [BaseChain; 3] = [
        b("INPUT", LOCAL_IN, 50, "filter"),
        b("FORWARD", FORWARD, 50, "filter"),
        b("OUTPUT", LOCAL_OUT, 50, "filter"),
    ];
    match kind {
        TableKind::Filter => &FILTER,
        TableKind::Nat => &NAT,
        TableKind::Mangle => &MANGLE,
        TableKind::Raw => &RAW,
        TableKind::Security => &SECURITY,
    }
}

/// The base chain of `kind` named `name`, if it is one.
pub fn base_chain(kind: TableKind, name: &str) -> Option<&'static BaseChain> {
    base_chains(kind).iter().find(|c| c.name == name)
}

/// The capacity (`NFTA_SET_DESC_SIZE`) of a hash set made with `elems`
/// elements: room for half as many again, a power of two (at most 2^31).
///
/// Why a size: without one the kernel makes a resizable hash that starts at
/// a few buckets and, while one batch inserts, doubles it again and again,
/// each insert past a doubling searching every table still attached
/// (`rhashtable_insert_slow`); given one it makes a hash of that many
/// buckets once. But the size is also a hard limit: an element beyond it
/// is refused (`ENFILE`), so each user says what happens then
/// ([`crate::registry::capacity`], [`crate::runs::capacity`]). The
/// kernel's buckets cost 8 bytes per 3/4 element of capacity.
pub fn set_capacity(elems: usize) -> u32 {
    let want = elems.saturating_add(elems / 2).min(1 << 31) as u32;
    want.next_power_of_two()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_chain_has_a_hook() {
        for kind in TableKind::ALL {
            let names: Vec<&str> = base_chains(kind).iter().map(|c| c.name).collect();
            assert_eq!(names, kind.builtin_chains(), "{kind:?}");
        }
        assert_eq!(table_name(TableKind::Nat), "nfkeeper_nat");
        assert_eq!(
            base_chain(TableKind::Nat, "POSTROUTING").unwrap().priority,
            100
        );
    }
}

//! `-m cluster` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;

/// `struct xt_cluster_match_info` (rev 0): total_nodes u32 @0, node_mask
/// @4, hash_seed @8, flags @12 (XT_CLUSTER_F_INV 1).
pub fn info(x: &m::cluster::Cluster) -> CompatInfo {
    let mut i = Info::new(16);
    i.u32(0, x.total_nodes)
        .u32(4, x.node_mask)
        .u32(8, x.hash_seed)
        .u32(12, x.inv as u32);
    compat("cluster", 0, i)
}

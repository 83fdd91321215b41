//! `-m cluster`: this node's share of a cluster's connections, by hash
//! (iptables' libxt_cluster). `--cluster-local-node N` is kept as the node
//! mask it stands for (bit N-1), as iptables does.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cluster {
    pub total_nodes: u32,
    pub node_mask: u32,
    pub hash_seed: u32,
    pub inv: bool,
}

const TOTAL: u8 = 0;
const NODE: u8 = 1;
const NODEMASK: u8 = 2;
const SEED: u8 = 3;
/// XT_CLUSTER_NODES_MAX.
pub const NODES_MAX: u64 = 32;

impl Ext for Cluster {
    const NAME: &'static str = "cluster";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("cluster-total-nodes", TOTAL, Arg::Required).mand(),
        OptDef::new("cluster-local-node", NODE, Arg::Required)
            .inv()
            .excl(1 << NODEMASK),
        OptDef::new("cluster-local-nodemask", NODEMASK, Arg::Required)
            .inv()
            .excl(1 << NODE),
        OptDef::new("cluster-hash-seed", SEED, Arg::Required).mand(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Cluster {
            total_nodes: 0,
            node_mask: 0,
            hash_seed: 0,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            TOTAL => self.total_nodes = c.uint(1, NODES_MAX)? as u32,
            NODE => {
                self.node_mask = 1 << (c.uint(1, NODES_MAX)? - 1);
                self.inv |= c.inv;
            }
            NODEMASK => {
                self.node_mask = c.uint(1, NODES_MAX)? as u32;
                self.inv |= c.inv;
            }
            _ => self.hash_seed = c.uint(0, u32::MAX as u64)? as u32,
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        let too_big = (self.node_mask as u64) >= 1u64 << self.total_nodes;
        let all = |local: u8| {
            let want = (1 << TOTAL) | (1 << local) | (1 << SEED);
            seen & want == want
        };
        if all(NODE) {
            if too_big {
                return Err(Error::param(
                    "cluster match: `--cluster-local-node' must be <= `--cluster-total-nodes'",
                ));
            }
            return Ok(());
        }
        if all(NODEMASK) {
            if too_big {
                return Err(Error::param(
                    "cluster match: `--cluster-local-nodemask' too big for `--cluster-total-nodes'",
                ));
            }
            return Ok(());
        }
        if seen & ((1 << NODE) | (1 << NODEMASK)) == 0 {
            return Err(Error::param(
                "cluster match: `--cluster-local-node' or`--cluster-local-nodemask' is missing",
            ));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(
            out,
            "{} --cluster-local-nodemask 0x{:08x} --cluster-total-nodes {} --cluster-hash-seed 0x{:08x}",
            if self.inv { " !" } else { "" },
            self.node_mask,
            self.total_nodes,
            self.hash_seed
        );
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(
            out,
            " cluster {}node_mask=0x{:08x} total_nodes={} hash_seed=0x{:08x}",
            if self.inv { "!" } else { "" },
            self.node_mask,
            self.total_nodes,
            self.hash_seed
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

    #[test]
    fn forms() {
        let cases = [
            (
                "-m cluster --cluster-total-nodes 2 --cluster-local-node 2 --cluster-hash-seed 0xfeedcafe",
                " --cluster-local-nodemask 0x00000002 --cluster-total-nodes 2 --cluster-hash-seed 0xfeedcafe",
                " cluster node_mask=0x00000002 total_nodes=2 hash_seed=0xfeedcafe",
            ),
            (
                "-m cluster --cluster-total-nodes 32 ! --cluster-local-node 32 --cluster-hash-seed 1",
                " ! --cluster-local-nodemask 0x80000000 --cluster-total-nodes 32 --cluster-hash-seed 0x00000001",
                " cluster !node_mask=0x80000000 total_nodes=32 hash_seed=0x00000001",
            ),
            (
                "-m cluster --cluster-local-nodemask 5 --cluster-total-nodes 3 --cluster-hash-seed 0",
                " --cluster-local-nodemask 0x00000005 --cluster-total-nodes 3 --cluster-hash-seed 0x00000000",
                " cluster node_mask=0x00000005 total_nodes=3 hash_seed=0x00000000",
            ),
        ];
        for (args, s, l) in cases {
            assert_eq!(save(args), s, "{args}");
            assert_eq!(list(args, false), l, "{args}");
            assert_eq!(list(args, true), l, "{args} -n");
        }
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m cluster",
                "cluster match: `--cluster-local-node' or`--cluster-local-nodemask' is missing",
            ),
            (
                "-m cluster --cluster-total-nodes 3",
                "cluster match: `--cluster-local-node' or`--cluster-local-nodemask' is missing",
            ),
            (
                "-m cluster --cluster-total-nodes 2 --cluster-local-node 2",
                "cluster: option \"--cluster-hash-seed\" must be specified\n",
            ),
            (
                "-m cluster --cluster-total-nodes 2 --cluster-local-node 3 --cluster-hash-seed 1",
                "cluster match: `--cluster-local-node' must be <= `--cluster-total-nodes'",
            ),
            (
                "-m cluster --cluster-total-nodes 2 --cluster-local-nodemask 4 --cluster-hash-seed 1",
                "cluster match: `--cluster-local-nodemask' too big for `--cluster-total-nodes'",
            ),
            (
                "-m cluster --cluster-total-nodes 33",
                "cluster: bad value for option \"--cluster-total-nodes\", or out of range (1-32).\n",
            ),
            (
                "-m cluster --cluster-total-nodes 2 --cluster-local-node 1 --cluster-local-nodemask 1 --cluster-hash-seed 1",
                "cluster: option \"--cluster-local-node\" cannot be used together with \"--cluster-local-nodemask\".\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

//! kube-proxy at scale (issue 23): its `*nat` table as its iptables mode
//! writes it (`workload::Kube`: per service a KUBE-SERVICES jump, a
//! KUBE-SVC chain choosing one of its endpoints with `-m statistic --mode
//! random --probability`, per endpoint a KUBE-SEP chain that marks and
//! DNATs; KUBE-POSTROUTING's MASQUERADE; comments everywhere), driven as
//! kube-proxy drives it: `iptables-restore --noflush --counters`.
//!
//! - `kube.load`: the first full sync onto an empty table (undone by a
//!   reset between repetitions);
//! - `kube.full`: a full sync onto the same ruleset (what kube-proxy does
//!   after a restart or periodically): every chain declared and rewritten
//!   with the same content;
//! - `kube.partial`: a partial sync, KUBE-SERVICES rewritten whole with the
//!   same content plus one service chain changed (its endpoints listed in
//!   another order); repetition k changes service k;
//! - `kube.endpoint`: a partial sync that adds a fourth endpoint to the
//!   last service (even repetitions) or removes it again (odd ones,
//!   deleting its chain with `-X`).
//!
//! N is the number of services, each with [`ENDPOINTS`] endpoints.
//!
//! nft, as the reference of kube-proxy's nftables mode, runs the same
//! syncs of the same cluster in that mode's shape (`workload::kube_nft`:
//! table `ip kube-proxy`, the `service-ips` verdict map, `numgen` in each
//! service chain) with `nft -f`: load and full sync are the same text
//! (that mode's full sync writes everything), a partial sync only the
//! changed service's chains (there is no KUBE-SERVICES to rewrite; the
//! map's elements stay), a removed endpoint's chain flushed and deleted.
//! Its checks count that table's chains and rules instead.

use super::model::{Check, Dialect, Op, Table};
use super::{Case, Opts, Step};
use workload::Kube;

/// Endpoints per service.
pub const ENDPOINTS: usize = 3;

/// A sync in both forms: `text` for iptables-restore, `nft` for `nft -f`.
fn restore(text: String, nft: String) -> Op {
    Op::RestoreText {
        text,
        noflush: true,
        counters: true,
        nft: Some(nft),
    }
}

/// A check of the iptables form (KUBE-* chains in `nat`).
fn iptables(c: Check) -> Check {
    Check::Only(Dialect::Iptables, Box::new(c))
}

/// A check of the nftables form (table `ip kube-proxy`).
fn nft(c: Check) -> Check {
    Check::Only(Dialect::Nft, Box::new(c))
}

pub fn cases(o: &Opts) -> Vec<Case> {
    let mut v = Vec::new();
    for &n in &o.kube_sizes {
        let k = Kube {
            services: n,
            endpoints: ENDPOINTS,
        };
        let services = || iptables(Check::Rules(Table::Nat, "KUBE-SERVICES".into(), n + 1));
        // Every service's and endpoint's chain is there (`extra` more with
        // an added endpoint); a service chain holds its two rules.
        let chains = move |extra: usize| {
            nft(Check::UserChains(
                Table::KubeProxy,
                k.nft_regular_chains() + extra,
            ))
        };
        let nft_service = |s: usize| {
            nft(Check::Rules(
                Table::KubeProxy,
                Kube::nft_service_chain(s),
                2,
            ))
        };
        v.push(Case {
            suite: "kube",
            n,
            setup: Vec::new(),
            steps: vec![Step::new(
                "kube.load",
                "first full sync onto an empty table",
                move |_| restore(k.full(true), k.nft_full()),
            )
            .undo(|_| Op::Reset)
            .check(services())
            .check(chains(0))
            .check(nft_service(n - 1))],
            reps: o.reps.max(1),
            warmup: o.warmup,
        });
        let changed = Kube::service_chain(0);
        v.push(Case {
            suite: "kube",
            n,
            setup: vec![restore(k.full(true), k.nft_full())],
            steps: vec![
                Step::new("kube.full", "full sync onto the same ruleset", move |_| {
                    restore(k.full(false), k.nft_full())
                })
                .check(services())
                .check(chains(0)),
                Step::new(
                    "kube.partial",
                    "partial sync: KUBE-SERVICES whole + one service changed",
                    move |r| {
                        let (s, first) = (r % n, r / n + 1);
                        restore(k.partial(s, first), k.nft_partial(s, first))
                    },
                )
                .check(services())
                .check(iptables(Check::Rules(Table::Nat, changed, 1 + ENDPOINTS)))
                .check(chains(0))
                .check(nft_service(0)),
                Step::new(
                    "kube.endpoint",
                    "partial sync: one endpoint added to a service, or removed",
                    move |r| {
                        let (from, to) = if r % 2 == 0 {
                            (ENDPOINTS, ENDPOINTS + 1)
                        } else {
                            (ENDPOINTS + 1, ENDPOINTS)
                        };
                        restore(
                            k.endpoints_changed(n - 1, from, to),
                            k.nft_endpoints_changed(n - 1, from, to),
                        )
                    },
                )
                .check(services())
                .check(chains(1))
                .check(nft(Check::Rules(
                    Table::KubeProxy,
                    Kube::nft_endpoint_chain(n - 1, ENDPOINTS),
                    2,
                ))),
            ],
            reps: o.reps.max(1),
            warmup: o.warmup,
        });
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two cases per size; the whole suite at 20 services, two repetitions
    /// (an endpoint added, then removed), with every baseline present:
    /// every step succeeds and passes its checks, nft's too (`nft -f` of
    /// the nftables mode's text, checked on `ip kube-proxy`).
    #[test]
    fn smoke_root() {
        let o = Opts {
            reps: 2,
            kube_sizes: vec![20],
            ..Opts::quick()
        };
        let cs = cases(&o);
        assert_eq!(cs.len(), 2);
        let Some(_serial) = crate::suites::kernel_test() else {
            return;
        };
        let adapters = crate::suites::adapters::present();
        let recs = crate::suites::run(&cs, &adapters, &o);
        assert_eq!(recs.len(), 4 * adapters.len());
        for r in &recs {
            assert_eq!(r.status, crate::suites::Status::Ok, "{r:?}");
        }
    }
}

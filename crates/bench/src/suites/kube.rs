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
//! N is the number of services, each with [`ENDPOINTS`] endpoints. nft has
//! no form of these (it does not read iptables-restore input).

use super::model::{Check, Op, Table};
use super::{Case, Opts, Step};
use workload::Kube;

/// Endpoints per service.
pub const ENDPOINTS: usize = 3;

fn restore(text: String) -> Op {
    Op::RestoreText {
        text,
        noflush: true,
        counters: true,
    }
}

pub fn cases(o: &Opts) -> Vec<Case> {
    let mut v = Vec::new();
    for &n in &o.kube_sizes {
        let k = Kube {
            services: n,
            endpoints: ENDPOINTS,
        };
        let services = || Check::Rules(Table::Nat, "KUBE-SERVICES".into(), n + 1);
        v.push(Case {
            suite: "kube",
            n,
            setup: Vec::new(),
            steps: vec![Step::new(
                "kube.load",
                "first full sync onto an empty table",
                move |_| restore(k.full(true)),
            )
            .undo(|_| Op::Reset)
            .check(services())],
            reps: o.reps.max(1),
            warmup: o.warmup,
        });
        let changed = Kube::service_chain(0);
        v.push(Case {
            suite: "kube",
            n,
            setup: vec![restore(k.full(true))],
            steps: vec![
                Step::new("kube.full", "full sync onto the same ruleset", move |_| {
                    restore(k.full(false))
                })
                .check(services()),
                Step::new(
                    "kube.partial",
                    "partial sync: KUBE-SERVICES whole + one service changed",
                    move |r| restore(k.partial(r % n, r / n + 1)),
                )
                .check(services())
                .check(Check::Rules(Table::Nat, changed, 1 + ENDPOINTS)),
                Step::new(
                    "kube.endpoint",
                    "partial sync: one endpoint added to a service, or removed",
                    move |r| {
                        let (from, to) = if r % 2 == 0 {
                            (ENDPOINTS, ENDPOINTS + 1)
                        } else {
                            (ENDPOINTS + 1, ENDPOINTS)
                        };
                        restore(k.endpoints_changed(n - 1, from, to))
                    },
                )
                .check(services()),
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
    /// (an endpoint added, then removed), with every iptables baseline
    /// present: every step succeeds (nft has no form).
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
            use crate::suites::Status;
            let ok = if r.adapter == "nft" {
                r.status == Status::NoForm
            } else {
                r.status == Status::Ok
            };
            assert!(ok, "{r:?}");
        }
    }
}

//! The iptables-nft user-space study's matrix (Phil Sutter, 2020), numbered
//! as there:
//!
//! - 1.1–1.3 restore of N rules / N chains / 200 chains of N rules each
//!   (undone by a reset between repetitions, so each loads an empty table);
//! - 2.1–2.13 single commands in a ruleset with N rules in filter chain X,
//!   an empty filter chain Y and an empty nat chain X: append, delete the
//!   last rule by spec, insert at the top, append to / delete from Y,
//!   append to / delete from nat X, list the first / last rule, list the
//!   empty chain, flush Y / nat X / X;
//! - 3.1 flush of N chains of one rule each, 4.1 flush of 200 chains × N;
//! - 5.1 one Kubernetes-style add-on (two chains, three rules, two jumps)
//!   by `restore --noflush` onto N of them.
//!
//! Cases of 200 × N rules are skipped when 200·N exceeds `Opts::max_rules`.

use super::model::{Check, Op, Rule, Ruleset, Table, TableSpec, Target};
use super::{Case, Opts, Step};

const F: Table = Table::Filter;
const NAT: Table = Table::Nat;

fn rules(chain: &str, n: usize) -> Vec<Rule> {
    (0..n).map(|i| Rule::cf(chain, i)).collect()
}

fn filter(chains: Vec<String>, rules: Vec<Rule>) -> TableSpec {
    TableSpec {
        table: F,
        chains,
        rules,
    }
}

fn whole(tables: Vec<TableSpec>) -> Op {
    Op::Restore {
        rs: Ruleset { tables },
        noflush: false,
    }
}

fn noflush(tables: Vec<TableSpec>) -> Op {
    Op::Restore {
        rs: Ruleset { tables },
        noflush: true,
    }
}

/// `chains` chains `C000000…` of `per` rules each: (chain names, rules).
pub fn many_chains(chains: usize, per: usize) -> (Vec<String>, Vec<Rule>) {
    let names: Vec<String> = (0..chains).map(|i| format!("C{i:06}")).collect();
    let rs = names.iter().flat_map(|c| rules(c, per)).collect();
    (names, rs)
}

/// The 2.x ruleset: filter X with `n` rules, Y with `y` rules, nat X with
/// `nat` rules.
fn base(n: usize, y: usize, nat: usize) -> Op {
    let mut r = rules("X", n);
    r.extend(rules("Y", y));
    let t = TableSpec {
        table: NAT,
        chains: vec!["X".into()],
        rules: rules("X", nat),
    };
    whole(vec![filter(vec!["X".into(), "Y".into()], r), t])
}

/// Add-on i in the nat table: KUBE-SERVICES jumps to its SVC chain, which
/// jumps to its SEP chain, which DNATs.
pub fn addon(i: usize) -> TableSpec {
    let (svc, sep) = (format!("KUBE-SVC-{i:06}"), format!("KUBE-SEP-{i:06}"));
    let a = workload::cf_addr(i);
    let rule = |chain: &str, dst, dport, target| Rule {
        chain: chain.into(),
        src: None,
        dst,
        tcp: true,
        dport,
        target,
    };
    TableSpec {
        table: NAT,
        chains: vec![svc.clone(), sep.clone()],
        rules: vec![
            rule(
                "KUBE-SERVICES",
                Some([172, 16 + a[1] % 16, a[2], a[3]]),
                Some(80),
                Target::Jump(svc.clone()),
            ),
            rule(&svc, None, None, Target::Jump(sep.clone())),
            rule(&sep, None, None, Target::Dnat([10, 244, a[2], a[3]], 8080)),
        ],
    }
}

/// KUBE-SERVICES (jumped to from PREROUTING) and `n` add-ons, as one table.
pub fn addons(n: usize) -> TableSpec {
    let mut t = TableSpec::new(NAT);
    t.chains.push("KUBE-SERVICES".into());
    t.rules.push(Rule {
        chain: "PREROUTING".into(),
        src: None,
        dst: None,
        tcp: false,
        dport: None,
        target: Target::Jump("KUBE-SERVICES".into()),
    });
    for i in 0..n {
        let a = addon(i);
        t.chains.extend(a.chains);
        t.rules.extend(a.rules);
    }
    t
}

fn case(n: usize, setup: Vec<Op>, step: Step) -> Case {
    Case {
        suite: "ruleset",
        n,
        setup,
        steps: vec![step],
        reps: 1,
        warmup: 0,
    }
}

pub fn cases(o: &Opts) -> Vec<Case> {
    let mut v = Vec::new();
    for &n in &o.sizes {
        let big200 = 200 * n <= o.max_rules;
        v.push(case(
            n,
            vec![],
            Step::new("1.1", "restore N rules", move |_| {
                whole(vec![filter(vec!["X".into()], rules("X", n))])
            })
            .undo(|_| Op::Reset)
            .check(Check::Rules(F, "X".into(), n)),
        ));
        v.push(case(
            n,
            vec![],
            Step::new("1.2", "restore N chains", move |_| {
                whole(vec![filter(many_chains(n, 0).0, vec![])])
            })
            .undo(|_| Op::Reset)
            .check(Check::UserChains(F, n)),
        ));
        if big200 {
            v.push(case(
                n,
                vec![],
                Step::new("1.3", "restore 200 chains × N rules", move |_| {
                    let (c, r) = many_chains(200, n);
                    whole(vec![filter(c, r)])
                })
                .undo(|_| Op::Reset)
                .check(Check::TotalRules(F, 200 * n)),
            ));
        }
        let x = || "X".to_string();
        let y = || "Y".to_string();
        let single: Vec<(Op, Step)> = vec![
            (
                base(n, 0, 0),
                Step::new("2.1", "append to X", move |k| {
                    Op::Append(F, Rule::cf("X", n + k))
                })
                .check(Check::Rules(F, x(), n + 1)),
            ),
            (
                base(n, 0, 0),
                Step::new("2.2", "delete X's last rule by spec", move |k| {
                    Op::Delete(F, Rule::cf("X", n - 1 - k.min(n - 1)))
                })
                .check(Check::Rules(F, x(), n - 1)),
            ),
            (
                base(n, 0, 0),
                Step::new("2.3", "insert at the top of X", move |k| {
                    Op::Insert(F, Rule::cf("X", n + k))
                })
                .check(Check::Rules(F, x(), n + 1)),
            ),
            (
                base(n, 0, 0),
                Step::new("2.4", "append to empty Y", |_| {
                    Op::Append(F, Rule::cf("Y", 0))
                })
                .undo(|_| Op::Flush(F, Some("Y".into())))
                .check(Check::Rules(F, y(), 1)),
            ),
            (
                base(n, 1, 0),
                Step::new("2.5", "delete Y's only rule by spec", |_| {
                    Op::Delete(F, Rule::cf("Y", 0))
                })
                .undo(|_| Op::Append(F, Rule::cf("Y", 0)))
                .check(Check::Rules(F, y(), 0)),
            ),
            (
                base(n, 0, 0),
                Step::new("2.6", "append to nat X", |_| {
                    Op::Append(NAT, Rule::cf("X", 0))
                })
                .undo(|_| Op::Flush(NAT, Some("X".into())))
                .check(Check::Rules(NAT, x(), 1)),
            ),
            (
                base(n, 0, 1),
                Step::new("2.7", "delete nat X's rule by spec", |_| {
                    Op::Delete(NAT, Rule::cf("X", 0))
                })
                .undo(|_| Op::Append(NAT, Rule::cf("X", 0)))
                .check(Check::Rules(NAT, x(), 0)),
            ),
            (
                base(n, 0, 0),
                Step::new("2.8", "list X's first rule", |_| {
                    Op::ListRule(F, "X".into(), 1)
                })
                .check(Check::Shows(1)),
            ),
            (
                base(n, 0, 0),
                Step::new("2.9", "list X's last rule", move |_| {
                    Op::ListRule(F, "X".into(), n)
                })
                .check(Check::Shows(1)),
            ),
            (
                base(n, 0, 0),
                Step::new("2.10", "list empty chain Y", |_| {
                    Op::List(F, Some("Y".into()))
                })
                .check(Check::Shows(0)),
            ),
            (
                base(n, 0, 0),
                Step::new("2.11", "flush empty chain Y", |_| {
                    Op::Flush(F, Some("Y".into()))
                })
                .check(Check::Rules(F, y(), 0)),
            ),
            (
                base(n, 0, 1),
                Step::new("2.12", "flush nat X", |_| Op::Flush(NAT, Some("X".into())))
                    .undo(|_| Op::Append(NAT, Rule::cf("X", 0)))
                    .check(Check::Rules(NAT, x(), 0)),
            ),
            (
                base(n, 0, 0),
                Step::new("2.13", "flush X (N rules)", |_| {
                    Op::Flush(F, Some("X".into()))
                })
                .undo(move |_| noflush(vec![filter(vec![], rules("X", n))]))
                .check(Check::Rules(F, x(), 0)),
            ),
        ];
        for (setup, step) in single {
            v.push(case(n, vec![setup], step));
        }
        let flush_all = |id: &str, name: &str, chains: usize, per: usize| {
            let (c, r) = many_chains(chains, per);
            case(
                n,
                vec![whole(vec![filter(c, r)])],
                Step::new(id, name, |_| Op::Flush(F, None))
                    .undo(move |_| noflush(vec![filter(vec![], many_chains(chains, per).1)]))
                    .check(Check::TotalRules(F, 0)),
            )
        };
        v.push(flush_all(
            "3.1",
            "flush all of N chains (1 rule each)",
            n,
            1,
        ));
        if big200 {
            v.push(flush_all(
                "4.1",
                "flush all of 200 chains × N rules",
                200,
                n,
            ));
        }
        v.push(case(
            n,
            vec![whole(vec![addons(n)])],
            Step::new(
                "5.1",
                "add one k8s add-on (restore --noflush) to N",
                move |k| noflush(vec![addon(n + k)]),
            )
            .check(Check::Chain(NAT, format!("KUBE-SVC-{n:06}"), true))
            .check(Check::Rules(NAT, "KUBE-SERVICES".into(), n + 1)),
        ));
    }
    // Some steps consume the rules they were given (2.2 deletes a
    // different existing rule each repetition): at most N repetitions,
    // warm-up included.
    for c in &mut v {
        c.warmup = o.warmup.min(c.n.saturating_sub(1));
        c.reps = o.fast_reps.min(c.n - c.warmup).max(1);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addon_shape() {
        let t = addon(3);
        let text = Ruleset { tables: vec![t] }.iptables_text(true);
        assert_eq!(
            text,
            "*nat\n:KUBE-SVC-000003 - [0:0]\n:KUBE-SEP-000003 - [0:0]\n\
             -A KUBE-SERVICES -d 172.16.0.4/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-000003\n\
             -A KUBE-SVC-000003 -p tcp -j KUBE-SEP-000003\n\
             -A KUBE-SEP-000003 -p tcp -j DNAT --to-destination 10.244.0.4:8080\nCOMMIT\n"
        );
        let all = addons(10);
        assert_eq!((all.chains.len(), all.rules.len()), (21, 31));
    }

    #[test]
    fn matrix() {
        let o = Opts {
            sizes: vec![10, 1000],
            max_rules: 2000,
            ..Opts::quick()
        };
        let cs = cases(&o);
        let ids = |n| -> Vec<String> {
            cs.iter()
                .filter(|c| c.n == n)
                .map(|c| c.steps[0].id.clone())
                .collect()
        };
        assert_eq!(ids(10).len(), 19);
        assert!(ids(10).contains(&"4.1".to_string()));
        // 200 × 1000 is over the limit: 1.3 and 4.1 are left out.
        assert_eq!(ids(1000).len(), 17);
        assert!(!ids(1000).contains(&"1.3".to_string()));
        let (c, r) = many_chains(3, 2);
        assert_eq!((c.len(), r.len()), (3, 6));
        assert_eq!(r[5].chain, "C000002");
    }

    /// The whole matrix at N=10, one repetition, with every baseline
    /// present (CI's reduced run): every step succeeds or has no form.
    #[test]
    fn smoke_n10_root() {
        let Some(_serial) = crate::suites::kernel_test() else {
            return;
        };
        let o = Opts {
            reps: 1,
            fast_reps: 1,
            sizes: vec![10],
            ..Opts::quick()
        };
        let adapters = crate::suites::adapters::present();
        let recs = crate::suites::run(&cases(&o), &adapters, &o);
        assert_eq!(recs.len(), 19 * adapters.len());
        for r in &recs {
            use crate::suites::Status;
            assert!(matches!(r.status, Status::Ok | Status::NoForm), "{r:?}");
        }
    }
}

//! The Cloud Foundry report's benchmarks.
//!
//! - `cf.append`: N rules `-A FORWARD -s 10.a.b.c/32 -j ACCEPT`, one process
//!   each, into an empty table; the time of the whole loop, and of each call
//!   (`cf.append.call`). Undone by a flush between repetitions.
//! - `cf.big.*`: on FORWARD with `big.0` rules plus `big.1` empty chains
//!   (loaded by restore, untimed), in this order and sharing the namespace:
//!   `-N` (chains NEW0…), `-A` one rule to FORWARD, `-D` that rule by its
//!   spec, `-S` of the table, `-X` of the chains `-N` made. Every repetition
//!   works on its own chain or rule, so the state drifts by at most `reps`
//!   objects and ends where it began.

use super::model::{Check, Op, Rule, Ruleset, Table, TableSpec};
use super::{Case, Opts, Step};

const FWD: &str = "FORWARD";

/// FORWARD with `rules` Cloud Foundry rules and `chains` empty user chains.
pub fn big_ruleset(rules: usize, chains: usize) -> Ruleset {
    let mut t = TableSpec::new(Table::Filter);
    t.chains = (0..chains).map(|i| format!("CF-{i:06}")).collect();
    t.rules = (0..rules).map(|i| Rule::cf(FWD, i)).collect();
    Ruleset { tables: vec![t] }
}

pub fn cases(o: &Opts) -> Vec<Case> {
    let mut v = Vec::new();
    for &n in &o.cf_sizes {
        let mut s = Step::new("cf.append", "append N rules, one process each", move |_| {
            Op::AppendEach(Table::Filter, (0..n).map(|i| Rule::cf(FWD, i)).collect())
        })
        .undo(|_| Op::Flush(Table::Filter, Some(FWD.into())))
        .check(Check::Rules(Table::Filter, FWD.into(), n));
        s.per_call = true;
        v.push(Case {
            suite: "cf",
            n,
            setup: Vec::new(),
            steps: vec![s],
            reps: o.reps.max(1),
            warmup: o.warmup,
        });
    }
    let (rules, chains) = o.big;
    if rules > 0 {
        v.push(big_case(rules, chains, o.fast_reps.max(1), o.warmup));
    }
    v
}

/// `reps` timed repetitions after `warmup` untimed ones: `-A` leaves all of
/// them in FORWARD for `-D` to take back one by one.
fn big_case(rules: usize, chains: usize, reps: usize, warmup: usize) -> Case {
    let runs = reps + warmup;
    let f = Table::Filter;
    let what = format!(
        "{} rules + {} chains",
        crate::fmt_n(rules),
        crate::fmt_n(chains)
    );
    let new = |k: usize| format!("NEW{k}");
    let steps = vec![
        Step::new(
            "cf.big.N",
            format!("{what}: create a chain (-N)"),
            move |k| Op::NewChain(f, new(k)),
        )
        .check(Check::Chain(f, new(0), true)),
        Step::new(
            "cf.big.A",
            format!("{what}: append one rule to FORWARD (-A)"),
            move |k| Op::Append(f, Rule::cf(FWD, rules + k)),
        )
        .check(Check::Rules(f, FWD.into(), rules + 1)),
        Step::new(
            "cf.big.D",
            format!("{what}: delete that rule by spec (-D)"),
            move |k| Op::Delete(f, Rule::cf(FWD, rules + k)),
        )
        .check(Check::Rules(f, FWD.into(), rules + runs - 1)),
        Step::new(
            "cf.big.S",
            format!("{what}: list the table (-S)"),
            move |_| Op::List(f, None),
        )
        .check(Check::ShowsAtLeast(rules)),
        Step::new(
            "cf.big.X",
            format!("{what}: delete a chain (-X)"),
            move |k| Op::DeleteChain(f, new(k)),
        )
        .check(Check::Chain(f, new(0), false)),
    ];
    Case {
        suite: "cf",
        n: rules,
        setup: vec![Op::Restore {
            rs: big_ruleset(rules, chains),
            noflush: false,
        }],
        steps,
        reps,
        warmup,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let rs = big_ruleset(3, 2);
        assert_eq!(
            rs.iptables_text(false),
            "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:CF-000000 - [0:0]\n:CF-000001 - [0:0]\n-A FORWARD -s 10.0.0.1/32 -j ACCEPT\n-A FORWARD -s 10.0.0.2/32 -j ACCEPT\n-A FORWARD -s 10.0.0.3/32 -j ACCEPT\nCOMMIT\n"
        );
        let o = Opts {
            cf_sizes: vec![10, 20],
            big: (100, 200),
            reps: 2,
            fast_reps: 2,
            ..Opts::quick()
        };
        let cs = cases(&o);
        assert_eq!(cs.len(), 3);
        assert_eq!(cs[1].n, 20);
        match (cs[1].steps[0].op)(0) {
            Op::AppendEach(_, rules) => assert_eq!(rules.len(), 20),
            other => panic!("{other:?}"),
        }
        let big = &cs[2];
        let ids: Vec<&str> = big.steps.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            ids,
            ["cf.big.N", "cf.big.A", "cf.big.D", "cf.big.S", "cf.big.X"]
        );
        // -A and -D of repetition k work on the same, new, rule.
        assert_eq!(
            (big.steps[1].op)(1),
            Op::Append(Table::Filter, Rule::cf(FWD, 101))
        );
        assert_eq!(
            (big.steps[2].op)(1),
            Op::Delete(Table::Filter, Rule::cf(FWD, 101))
        );
        assert_eq!(
            big.steps[2].checks,
            [Check::Rules(Table::Filter, FWD.into(), 101)]
        );
        // A warm-up repetition adds one more rule for -D's check to count.
        let warm = cases(&Opts { warmup: 1, ..o });
        assert_eq!((warm[2].reps, warm[2].warmup), (2, 1));
        assert_eq!(
            warm[2].steps[2].checks,
            [Check::Rules(Table::Filter, FWD.into(), 102)]
        );
    }

    /// The suite at N=10, one repetition after one warm-up, with every
    /// baseline present: every step succeeds (or has no form in that
    /// tool), and the warm-up is not among the samples.
    #[test]
    fn smoke_n10_root() {
        let Some(_serial) = crate::suites::kernel_test() else {
            return;
        };
        let o = Opts {
            reps: 1,
            fast_reps: 2,
            cf_sizes: vec![10],
            big: (10, 20),
            warmup: 1,
            ..Opts::quick()
        };
        let adapters = crate::suites::adapters::present();
        if adapters.is_empty() {
            eprintln!("skipped: no baseline tool installed");
            return;
        }
        let recs = crate::suites::run(&cases(&o), &adapters, &o);
        assert_eq!(
            recs.iter().filter(|r| !r.case.ends_with(".call")).count(),
            6 * adapters.len()
        );
        for r in &recs {
            use crate::suites::Status;
            assert!(matches!(r.status, Status::Ok | Status::NoForm), "{r:?}");
            if r.status == Status::Ok {
                assert!(r.samples.iter().all(|&s| s > 0.0), "{r:?}");
                let want = match r.case.as_str() {
                    "cf.append" => 1,
                    "cf.append.call" => 10,
                    _ => 2,
                };
                assert_eq!(r.samples.len(), want, "{r:?}");
            }
        }
        let calls = recs.iter().find(|r| r.case == "cf.append.call").unwrap();
        assert_eq!(calls.samples.len(), 10);
    }
}

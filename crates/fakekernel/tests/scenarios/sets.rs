//! Sets and elements: named and anonymous sets, set ids, bindings, verdict maps, intervals, per-element expressions, element requests.

use super::*;
use crate::common::{step, Step};
use nft::batch::Placement;
use nft::chain::hook;
use nft::expr::reg;
use nft::netlink::NLM_F_DUMP;
use nft::set::{flags, DATA_TYPE_VERDICT};
use nft::setelem::F_INTERVAL_END;
use nft::{msg, Chain, Data, Expr, Rule, Set, SetElem, SetElems, Table, Verdict};

pub fn sets() -> Vec<Step> {
    vec![
        step(
            "table, chains",
            batch(|b| {
                b.add(&Table::new(F, T), 0);
                b.add(&base_chain("in", hook::LOCAL_IN), 0);
                b.add(&Chain::new(F, T, "c"), 0);
            }),
        ),
        step(
            "named set with a counter per element, elements, lookup",
            batch(|b| {
                let s = Set {
                    userdata: Some(b"set ud".to_vec()),
                    exprs: vec![Expr::counter()],
                    ..set4("s", 1, 0)
                };
                b.create_echo(&s, 1);
                let mut e1 = SetElem::key(&addr(1));
                e1.userdata = Some(b"one".to_vec());
                let mut e2 = SetElem::key(&addr(2));
                e2.exprs = vec![Expr::Counter {
                    bytes: 3,
                    packets: 4,
                }];
                b.add(&elems("s", vec![e1, e2]), 2);
                b.add_rule(
                    &rule("in", lookup("s", None, None)),
                    Placement::Append,
                    true,
                    3,
                );
            }),
        ),
        step(
            "an element again: the same is no change, with EXCL it exists",
            batch(|b| {
                b.add(&elems("s", vec![SetElem::key(&addr(2))]), 1);
            }),
        ),
        step(
            "an element with EXCL",
            batch(|b| {
                b.create(&elems("s", vec![SetElem::key(&addr(2))]), 1);
            }),
        ),
        step(
            "delete a missing element, then a present one",
            batch(|b| {
                b.delete(&elems("s", vec![SetElem::key(&addr(9))]), 1);
                b.delete(&elems("s", vec![SetElem::key(&addr(1))]), 2);
            }),
        ),
        step(
            "delete an element",
            batch(|b| {
                b.delete(&elems("s", vec![SetElem::key(&addr(1))]), 1);
            }),
        ),
        step(
            "a bound set cannot go; a key of the wrong length",
            batch(|b| {
                b.delete(&Set::new(F, T, "s"), 1);
                b.add(&elems("s", vec![SetElem::key(&[1, 2])]), 2);
            }),
        ),
        step(
            "anonymous set by set id, bound to an echoed rule",
            batch(|b| {
                let s = Set {
                    size: Some(2),
                    ..set4("__set%d", 7, flags::ANONYMOUS | flags::CONSTANT)
                };
                b.add(&s, 1);
                b.add(
                    &SetElems {
                        set_id: Some(7),
                        ..elems(
                            "__set%d",
                            vec![SetElem::key(&addr(5)), SetElem::key(&addr(6))],
                        )
                    },
                    2,
                );
                b.add_rule(
                    &rule("c", lookup("__set%d", Some(7), None)),
                    Placement::Append,
                    true,
                    3,
                );
            }),
        ),
        step(
            "delete the rule: its anonymous set goes too",
            batch(|b| {
                b.delete(&Rule::key(F, T, "c", Some(6)), 1);
            }),
        ),
        step(
            "an anonymous set nothing binds",
            batch(|b| {
                b.add(&set4("__set%d", 8, flags::ANONYMOUS | flags::CONSTANT), 1);
            }),
        ),
        step(
            "verdict map with jumps; the chain is used",
            batch(|b| {
                let m = Set {
                    data_type: Some(DATA_TYPE_VERDICT),
                    ..set4("m", 3, flags::MAP)
                };
                b.add(&m, 1);
                let mut e = SetElem::key(&addr(1));
                e.data = Some(Data::Verdict(Verdict::Jump("c".into())));
                let mut g = SetElem::key(&addr(2));
                g.data = Some(Data::Verdict(Verdict::Goto("c".into())));
                let mut a = SetElem::key(&addr(3));
                a.data = Some(Data::Verdict(Verdict::Accept));
                b.add(&elems("m", vec![e, g, a]), 2);
                b.add_rule(
                    &rule("in", lookup("m", None, Some(reg::VERDICT))),
                    Placement::Append,
                    false,
                    3,
                );
            }),
        ),
        step(
            "a chain a map jumps to cannot go",
            batch(|b| {
                b.delete(&Chain::new(F, T, "c"), 1);
            }),
        ),
        step(
            "map element to a base chain, to a missing chain",
            batch(|b| {
                let mut e = SetElem::key(&addr(7));
                e.data = Some(Data::Verdict(Verdict::Jump("in".into())));
                b.add(&elems("m", vec![e]), 1);
                let mut e = SetElem::key(&addr(8));
                e.data = Some(Data::Verdict(Verdict::Jump("nope".into())));
                b.add(&elems("m", vec![e]), 2);
            }),
        ),
        step(
            "interval set with counters: ranges and their ends; size in ranges",
            batch(|b| {
                let s = Set {
                    size: Some(2),
                    exprs: vec![Expr::counter()],
                    ..set4("r", 4, flags::INTERVAL)
                };
                b.add(&s, 1);
                let mut end1 = SetElem::key(&addr(10));
                end1.flags = Some(F_INTERVAL_END);
                let mut end2 = SetElem::key(&addr(30));
                end2.flags = Some(F_INTERVAL_END);
                b.add(
                    &elems(
                        "r",
                        vec![SetElem::key(&addr(1)), end1, SetElem::key(&addr(20)), end2],
                    ),
                    2,
                );
            }),
        ),
        step(
            "a full set",
            batch(|b| {
                b.add(
                    &Set {
                        size: Some(1),
                        ..set4("full", 5, 0)
                    },
                    1,
                );
                b.add(
                    &elems("full", vec![SetElem::key(&addr(1)), SetElem::key(&addr(2))]),
                    2,
                );
            }),
        ),
        step(
            "get one element",
            request(msg::GETSETELEM, 0, elems("s", vec![SetElem::key(&addr(2))])),
        ),
        step(
            "get a missing element",
            request(msg::GETSETELEM, 0, elems("s", vec![SetElem::key(&addr(9))])),
        ),
        step(
            "get a range's element by a key inside",
            request(msg::GETSETELEM, 0, elems("r", vec![SetElem::key(&addr(5))])),
        ),
        step(
            "dump elements",
            request(msg::GETSETELEM, NLM_F_DUMP, elems("m", vec![])),
        ),
        step(
            "dump elements of a missing set",
            request(msg::GETSETELEM, NLM_F_DUMP, elems("nope", vec![])),
        ),
        step(
            "dump sets of a missing table",
            request(msg::GETSET, NLM_F_DUMP, Set::new(F, "nope", "")),
        ),
        step(
            "flush a set's elements",
            batch(|b| {
                b.delete(&elems("r", vec![]), 1);
            }),
        ),
        step(
            "delete the set",
            batch(|b| {
                b.delete(&Rule::key(F, T, "in", None), 1);
                b.delete(&Set::new(F, T, "s"), 2);
            }),
        ),
    ]
}

//! Batch-local chain ids, `DESTROY*` requests, deletions that take
//! anonymous sets along, element and timeout refusals, and dumps large
//! enough to span datagrams.

use super::*;
use crate::common::{step, Step};
use nft::batch::Placement;
use nft::chain::hook;
use nft::set::flags;
use nft::setelem::F_INTERVAL_END;
use nft::{msg, Chain, Rule, Set, SetElem, SetElems, Table};

/// `NFT_MSG_DESTROYRULE`, `DESTROYSET`, `DESTROYSETELEM`.
const DESTROY_RULE: u16 = 28;
const DESTROY_SET: u16 = 29;
const DESTROY_SETELEM: u16 = 30;

pub fn more() -> Vec<Step> {
    vec![
        step(
            "a chain by id and rules into it by chain id",
            batch(|b| {
                b.add(&Table::new(F, T), 0);
                b.add(&base_chain("in", hook::LOCAL_IN), 0);
                b.add(
                    &Chain {
                        id: Some(5),
                        ..Chain::new(F, T, "byid")
                    },
                    1,
                );
                let r = Rule {
                    chain: String::new(),
                    chain_id: Some(5),
                    ..accept(b"via id")
                };
                b.add_rule(&r, Placement::Append, true, 2);
                let r = Rule {
                    chain: String::new(),
                    chain_id: Some(6),
                    ..accept(b"bad id")
                };
                b.add_rule(&r, Placement::Append, false, 3);
            }),
        ),
        step(
            "the same without the bad id",
            batch(|b| {
                b.add(&Table::new(F, T), 0);
                b.add(&base_chain("in", hook::LOCAL_IN), 0);
                b.add(
                    &Chain {
                        id: Some(5),
                        ..Chain::new(F, T, "byid")
                    },
                    1,
                );
                let r = Rule {
                    chain: String::new(),
                    chain_id: Some(5),
                    ..accept(b"via id")
                };
                b.add_rule(&r, Placement::Append, true, 2);
            }),
        ),
        step(
            "an anonymous interval set bound to a rule, a named one",
            batch(|b| {
                let anon = Set {
                    size: Some(1),
                    ..set4(
                        "__set%d",
                        1,
                        flags::ANONYMOUS | flags::CONSTANT | flags::INTERVAL,
                    )
                };
                b.add(&anon, 1);
                let mut end = SetElem::key(&addr(20));
                end.flags = Some(F_INTERVAL_END);
                let l = SetElems {
                    set_id: Some(1),
                    ..elems("__set%d", vec![SetElem::key(&addr(10)), end])
                };
                b.add(&l, 2);
                b.add_rule(
                    &rule("byid", lookup("__set%d", Some(1), None)),
                    Placement::Append,
                    false,
                    3,
                );
                b.add(&set4("named", 2, flags::INTERVAL), 4);
                let mut end = SetElem::key(&addr(40));
                end.flags = Some(F_INTERVAL_END);
                b.add(&elems("named", vec![SetElem::key(&addr(30)), end]), 5);
            }),
        ),
        step(
            "an interval's end alone, a timeout where sets have none",
            batch(|b| {
                let mut end = SetElem::key(&addr(40));
                end.flags = Some(F_INTERVAL_END);
                b.delete(&elems("named", vec![end]), 1);
                let mut t = SetElem::key(&addr(50));
                t.timeout = Some(1000);
                b.add(&elems("named", vec![t]), 2);
            }),
        ),
        step("destroy what is there and what is not", |seq, _| {
            let mut b = nft::Batch::new(seq, None);
            let mut end = SetElem::key(&addr(40));
            end.flags = Some(F_INTERVAL_END);
            b.push(DESTROY_SETELEM, 0, &elems("named", vec![end.clone()]), 1);
            b.push(DESTROY_SETELEM, 0, &elems("named", vec![end]), 2);
            b.push(DESTROY_RULE, 0, &Rule::key(F, T, "byid", Some(99)), 3);
            b.push(DESTROY_SET, 0, &Set::new(F, T, "nope"), 4);
            b.finish().to_vec()
        }),
        step(
            "many rules: a dump over several datagrams",
            batch(|b| {
                for i in 0..300u32 {
                    let r = Rule {
                        userdata: Some(format!("rule number {i} with some text").into_bytes()),
                        ..rule("in", lookup("named", None, None))
                    };
                    b.add_rule(&r, Placement::Append, false, i);
                }
            }),
        ),
        step(
            "dump every rule of the family",
            request(
                msg::GETRULE,
                nft::netlink::NLM_F_DUMP,
                Rule::key(F, "", "", None),
            ),
        ),
        step(
            "delete the table: the anonymous set goes with its rule",
            batch(|b| {
                b.delete(&Table::new(F, T), 1);
            }),
        ),
    ]
}

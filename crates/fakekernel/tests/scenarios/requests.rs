//! Dumps, single gets and requests outside a batch.

use super::*;
use crate::common::{step, Step};
use nft::batch::Placement;
use nft::chain::hook;
use nft::netlink::{
    NLM_F_ACK, NLM_F_APPEND, NLM_F_CREATE, NLM_F_DUMP, NLM_F_ECHO, NLM_F_EXCL, NLM_F_NONREC,
    NLM_F_REPLACE,
};
use nft::{msg, Batch, Chain, Family, Rule, Set, Table};

pub fn requests() -> Vec<Step> {
    vec![
        step(
            "two tables",
            batch(|b| {
                b.add(&Table::new(F, T), 0);
                b.add(&base_chain("in", hook::LOCAL_IN), 0);
                b.add(&Chain::new(F, T, "c"), 0);
                b.add_rule(&accept(b"a"), Placement::Append, false, 0);
                b.add_rule(&accept(b"b"), Placement::Append, false, 0);
                b.add(&Table::new(F, "u"), 0);
                b.add(&Chain::new(F, "u", "c"), 0);
                b.add(&Table::new(Family::Ipv6, T), 0);
            }),
        ),
        step(
            "dump chains with a table filter",
            request(msg::GETCHAIN, NLM_F_DUMP, Chain::new(F, T, "")),
        ),
        step(
            "dump rules of a table",
            request(msg::GETRULE, NLM_F_DUMP, Rule::key(F, T, "", None)),
        ),
        step(
            "dump rules of a missing chain",
            request(msg::GETRULE, NLM_F_DUMP, Rule::key(F, T, "nope", None)),
        ),
        step(
            "dump rules of a missing table",
            request(msg::GETRULE, NLM_F_DUMP, Rule::key(F, "nope", "c", None)),
        ),
        step(
            "dump tables of every family",
            request(msg::GETTABLE, NLM_F_DUMP, Table::new(Family::Unspec, "")),
        ),
        step("get a table", request(msg::GETTABLE, 0, Table::new(F, T))),
        step(
            "get a missing table",
            request(msg::GETTABLE, NLM_F_ACK, Table::new(F, "nope")),
        ),
        step(
            "get a chain",
            request(msg::GETCHAIN, NLM_F_ACK, Chain::new(F, T, "c")),
        ),
        step(
            "get a rule",
            request(msg::GETRULE, 0, Rule::key(F, T, "c", Some(4))),
        ),
        step(
            "get a rule without handle",
            request(msg::GETRULE, 0, Rule::key(F, T, "c", None)),
        ),
        step(
            "get a set of a missing table",
            request(msg::GETSET, 0, Set::new(F, "nope", "s")),
        ),
        step(
            "a change outside a batch",
            request(
                msg::NEWCHAIN,
                NLM_F_CREATE | NLM_F_ACK,
                Chain::new(F, T, "x"),
            ),
        ),
        step(
            "the generation",
            request(msg::GETGEN, 0, nft::Gen::default()),
        ),
        step(
            "rule placement flags without create, replace without handle",
            |seq, _| {
                let mut b = Batch::new(seq, None);
                b.push(msg::NEWRULE, NLM_F_REPLACE | NLM_F_CREATE, &accept(b"x"), 1);
                b.push(msg::NEWRULE, NLM_F_APPEND, &accept(b"y"), 2);
                b.push(
                    msg::NEWRULE,
                    NLM_F_CREATE | NLM_F_EXCL,
                    &Rule {
                        handle: Some(4),
                        ..accept(b"z")
                    },
                    3,
                );
                b.push(
                    msg::NEWRULE,
                    NLM_F_CREATE,
                    &Rule {
                        handle: Some(4),
                        ..accept(b"z")
                    },
                    4,
                );
                b.finish().to_vec()
            },
        ),
        step(
            "echo of a deleted rule and a non-recursive table delete",
            |seq, _| {
                let mut b = Batch::new(seq, None);
                b.push(msg::DELRULE, NLM_F_ECHO, &Rule::key(F, T, "c", Some(4)), 1);
                b.push(msg::DELTABLE, NLM_F_NONREC, &Table::new(F, "u"), 2);
                b.push(msg::DELCHAIN, NLM_F_NONREC, &Chain::new(F, "u", "c"), 3);
                b.push(
                    msg::DELTABLE,
                    NLM_F_NONREC | NLM_F_APPEND,
                    &Table::new(F, "u"),
                    4,
                );
                b.finish().to_vec()
            },
        ),
    ]
}

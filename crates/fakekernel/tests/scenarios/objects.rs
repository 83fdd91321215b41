//! Tables, chains and rules: creation, placement, replacement, deletion, renames, policies, use counts, batches and their errors, ACKs, the generation.

use super::*;
use crate::common::{step, with_flags, Step};
use nft::batch::Placement;
use nft::chain::{hook, POLICY_DROP};
use nft::netlink::{NLM_F_ACK, NLM_F_CREATE};
use nft::{msg, Batch, Chain, Rule, Table};

pub fn objects() -> Vec<Step> {
    vec![
        step(
            "table, base chain with counters and userdata, user chains (echoed)",
            batch(|b| {
                b.add(&Table::new(F, T), 0);
                let mut input = base_chain("in", hook::LOCAL_IN);
                input.counters = Some((0, 0));
                input.userdata = Some(b"builtin".to_vec());
                b.create_echo(&input, 1);
                b.create_echo(&Chain::new(F, T, "c"), 2);
                b.create_echo(&Chain::new(F, T, "d"), 3);
            }),
        ),
        step(
            "append, insert by position and position id, rule ids",
            batch(|b| {
                b.add_rule(
                    &Rule {
                        chain: "in".into(),
                        ..accept(b"r1")
                    },
                    Placement::Append,
                    true,
                    1,
                );
                b.add_rule(
                    &Rule {
                        id: Some(1),
                        ..jump("in", "c")
                    },
                    Placement::Append,
                    true,
                    2,
                );
                b.add_rule(
                    &Rule {
                        position_id: Some(1),
                        ..accept(b"r3")
                    }
                    .clone_into_chain("in"),
                    Placement::Insert,
                    false,
                    3,
                );
                b.add_rule(&accept(b"c1"), Placement::Append, true, 4);
                b.add_rule(
                    &Rule {
                        position: Some(4),
                        ..accept(b"r5")
                    }
                    .clone_into_chain("in"),
                    Placement::Append,
                    true,
                    5,
                );
            }),
        ),
        step(
            "replace by handle (echoed), add and delete by rule id",
            batch(|b| {
                b.add_rule(
                    &Rule {
                        handle: Some(4),
                        ..accept(b"r1b")
                    }
                    .clone_into_chain("in"),
                    Placement::Replace,
                    true,
                    1,
                );
                b.add_rule(
                    &Rule {
                        id: Some(9),
                        ..accept(b"gone")
                    },
                    Placement::Append,
                    false,
                    2,
                );
                b.delete(
                    &Rule {
                        id: Some(9),
                        ..Rule::key(F, T, "c", None)
                    },
                    3,
                );
            }),
        ),
        step(
            "errors do not stop the batch; the first decides",
            batch(|b| {
                b.create(&Table::new(F, T), 1);
                b.add(&Chain::new(F, T, "e"), 2);
                b.delete(&Chain::new(F, T, "missing"), 3);
                b.add_rule(&jump("e", "missing"), Placement::Append, false, 4);
                b.push(msg::NEWRULE, NLM_F_ACK, &accept(b"nocreate"), 5);
                b.add_rule(
                    &accept(b"ok").clone_into_chain("e"),
                    Placement::Append,
                    false,
                    6,
                );
                b.push(msg::NEWCHAIN, NLM_F_ACK, &Chain::new(F, T, "f"), 7);
                b.add_rule(&jump("e", "in"), Placement::Append, false, 8);
                b.add(
                    &Chain {
                        policy: Some(POLICY_DROP),
                        ..Chain::new(F, T, "c")
                    },
                    9,
                );
                b.delete(&Rule::key(F, T, "in", Some(99)), 10);
            }),
        ),
        step(
            "chain in use: non-recursive delete, referenced delete",
            batch(|b| {
                b.delete_nonrec(&Chain::new(F, T, "c"), 1);
                b.delete(&Chain::new(F, T, "c"), 2);
                b.delete(&Rule::key(F, T, "in", Some(4)), 3);
            }),
        ),
        step(
            "unreference, flush and delete a chain in one batch",
            batch(|b| {
                b.delete(&Rule::key(F, T, "in", Some(5)), 1);
                b.delete(&Rule::key(F, T, "c", None), 2);
                b.delete_nonrec(&Chain::new(F, T, "c"), 3);
            }),
        ),
        step(
            "rename by handle; the new name is not usable in the same batch",
            batch(|b| {
                b.add(
                    &Chain {
                        handle: Some(3),
                        ..Chain::new(F, T, "d2")
                    },
                    1,
                );
                b.add_rule(&jump("in", "d2"), Placement::Append, false, 2);
            }),
        ),
        step(
            "rename by handle",
            batch(|b| {
                b.add(
                    &Chain {
                        handle: Some(3),
                        ..Chain::new(F, T, "d2")
                    },
                    1,
                );
            }),
        ),
        step(
            "rename to an existing name",
            batch(|b| {
                b.add(
                    &Chain {
                        handle: Some(3),
                        ..Chain::new(F, T, "in")
                    },
                    1,
                );
            }),
        ),
        step(
            "jump to the renamed chain; policy and counters update",
            batch(|b| {
                b.add_rule(&jump("in", "d2"), Placement::Append, true, 1);
                let mut input = base_chain("in", hook::LOCAL_IN);
                input.policy = Some(POLICY_DROP);
                input.counters = Some((100, 7));
                b.add(&input, 2);
                b.add(
                    &Chain {
                        policy: Some(POLICY_DROP),
                        ..Chain::new(F, T, "d2")
                    },
                    3,
                );
            }),
        ),
        step("generation mismatch", |seq, genid| {
            let mut b = Batch::new(seq, Some(genid.wrapping_add(5)));
            b.add(&Chain::new(F, T, "g"), 1);
            b.finish().to_vec()
        }),
        step("generation 0 is no check", |seq, _| {
            let mut b = Batch::new(seq, Some(0));
            b.add(&Chain::new(F, T, "g"), 1);
            b.finish().to_vec()
        }),
        step("the current generation", |seq, genid| {
            let mut b = Batch::new(seq, Some(genid));
            b.add(&Chain::new(F, T, "h"), 1);
            b.finish().to_vec()
        }),
        step(
            "no change: existing table and chain without EXCL",
            batch(|b| {
                b.add(&Table::new(F, T), 1);
                b.add(&Chain::new(F, T, "h"), 2);
            }),
        ),
        step("empty batch", batch(|_| {})),
        step(
            "ACK flags on begin, messages and end (committed)",
            |seq, _| {
                let mut b = Batch::new(seq, None);
                b.push(
                    msg::NEWCHAIN,
                    NLM_F_CREATE | NLM_F_ACK,
                    &Chain::new(F, T, "i"),
                    1,
                );
                b.add(&Chain::new(F, T, "j"), 2);
                with_flags(b.finish().to_vec(), NLM_F_ACK, 0)
            },
        ),
        step("ACK flags on a failing batch", |seq, _| {
            let mut b = Batch::new(seq, None);
            b.push(
                msg::NEWCHAIN,
                NLM_F_CREATE | NLM_F_ACK,
                &Chain::new(F, T, "k"),
                1,
            );
            b.delete(&Chain::new(F, T, "nope"), 2);
            b.push(
                msg::NEWCHAIN,
                NLM_F_CREATE | NLM_F_ACK,
                &Chain::new(F, T, "l"),
                3,
            );
            with_flags(b.finish().to_vec(), NLM_F_ACK, 0)
        }),
        step(
            "flush every chain of the table",
            batch(|b| {
                b.delete(&Rule::key(F, T, "", None), 1);
            }),
        ),
        step(
            "destroy what is absent; non-recursive table delete",
            |seq, _| {
                let mut b = Batch::new(seq, None);
                b.push(26, 0, &Table::new(F, "nope"), 1);
                b.push(27, 0, &Chain::new(F, T, "nope"), 2);
                b.delete_nonrec(&Table::new(F, T), 3);
                b.finish().to_vec()
            },
        ),
        step(
            "delete the table with everything",
            batch(|b| {
                b.add_rule(&jump("in", "d2"), Placement::Append, false, 1);
                b.delete(&Table::new(F, T), 2);
            }),
        ),
    ]
}

//! Jump validation: depth, loops, verdict maps.

use super::*;
use crate::common::{step, Step};
use nft::batch::Placement;
use nft::chain::hook;
use nft::expr::reg;
use nft::set::{flags, DATA_TYPE_VERDICT};
use nft::{Chain, Data, Set, SetElem, Table, Verdict};

pub fn validation() -> Vec<Step> {
    vec![
        step(
            "table, base chain, chains c1..c17",
            batch(|b| {
                b.add(&Table::new(F, T), 0);
                b.add(&base_chain("in", hook::LOCAL_IN), 0);
                for i in 1..=17 {
                    b.add(&Chain::new(F, T, &format!("c{i}")), 0);
                }
            }),
        ),
        step(
            "jumps c1 -> .. -> c15 and in -> c1: 15 levels",
            batch(|b| {
                for i in 1..15 {
                    b.add_rule(
                        &jump(&format!("c{i}"), &format!("c{}", i + 1)),
                        Placement::Append,
                        false,
                        i,
                    );
                }
                b.add_rule(&jump("in", "c1"), Placement::Append, false, 20);
            }),
        ),
        step(
            "c15 -> c16 makes 16 levels; what later rules report",
            batch(|b| {
                b.add_rule(
                    &accept(b"before").clone_into_chain("c3"),
                    Placement::Append,
                    false,
                    1,
                );
                b.add_rule(&jump("c15", "c16"), Placement::Append, false, 2);
                b.add_rule(
                    &accept(b"after").clone_into_chain("c17"),
                    Placement::Append,
                    false,
                    3,
                );
                b.add(&Chain::new(F, T, "x"), 4);
            }),
        ),
        step(
            "a cycle no base chain reaches",
            batch(|b| {
                b.add_rule(&jump("c16", "c17"), Placement::Append, false, 1);
                b.add_rule(&jump("c17", "c16"), Placement::Append, false, 2);
                b.add_rule(&jump("c17", "c17"), Placement::Append, false, 3);
            }),
        ),
        step(
            "reaching the cycle",
            batch(|b| {
                b.add_rule(&jump("in", "c16"), Placement::Append, false, 1);
            }),
        ),
        step(
            "a loop through a verdict map",
            batch(|b| {
                b.add(
                    &Set {
                        data_type: Some(DATA_TYPE_VERDICT),
                        ..set4("m", 1, flags::MAP)
                    },
                    1,
                );
                let mut e = SetElem::key(&addr(1));
                e.data = Some(Data::Verdict(Verdict::Jump("c1".into())));
                b.add(&elems("m", vec![e]), 2);
                b.add_rule(
                    &rule("c2", lookup("m", None, Some(reg::VERDICT))),
                    Placement::Append,
                    false,
                    3,
                );
            }),
        ),
    ]
}

//! Address sets (issue 19): `nfkeeper ipset` (native nftables sets) against
//! the ipset tool (the kernel's ipset subsystem) and nft (a native set
//! written by hand), on a `hash:ip` set of N members (`ipset.*` steps; the
//! set forms are in [`super::sets`]):
//!
//! - `ipset.restore`: a set of N members created in one restore (undone by
//!   destroying it);
//! - `ipset.list`: the whole set of N members printed;
//! - `ipset.add`: one process per member added to the set of N
//!   (fail2ban's pattern), [`ADDS`] per repetition, also per call; undone
//!   by deleting them (one process each, untimed);
//! - `ipset.test`: one member looked up;
//! - `ipset.list.name`: the set names only.
//!
//! The packet path of `-m set` rules is the packet suite's scenario c.

use super::model::Check;
use super::sets::SetOp;
use super::{Case, Opts, Step};

/// Members added per repetition of `ipset.add` (one process each).
pub const ADDS: usize = 20;
const SET: &str = "big";
const FRESH: &str = "fresh";

fn op(s: SetOp) -> super::model::Op {
    super::model::Op::Set(s)
}

pub fn cases(o: &Opts) -> Vec<Case> {
    let mut v = Vec::new();
    for &n in &o.ipset_sizes {
        let big = || SET.to_string();
        v.push(Case {
            suite: "ipset",
            n,
            setup: vec![op(SetOp::Restore { set: big(), n })],
            steps: vec![
                Step::new(
                    "ipset.restore",
                    "create a set of N members in one restore",
                    move |_| {
                        op(SetOp::Restore {
                            set: FRESH.into(),
                            n,
                        })
                    },
                )
                .undo(|_| op(SetOp::Destroy { set: FRESH.into() }))
                .check(Check::Members(FRESH.into(), n)),
                Step::new("ipset.list", "list the set of N members", move |_| {
                    op(SetOp::List { set: big() })
                }),
            ],
            reps: o.reps.max(1),
            warmup: o.warmup,
        });
        // Repetition r adds members n + r*ADDS .. n + (r+1)*ADDS.
        let added = move |r: usize| (n + r * ADDS..n + (r + 1) * ADDS).collect::<Vec<_>>();
        let mut add = Step::new(
            "ipset.add",
            format!("add {ADDS} members to the set of N, one process each"),
            move |r| {
                op(SetOp::AddEach {
                    set: big(),
                    members: added(r),
                })
            },
        )
        .undo(move |r| {
            op(SetOp::DelEach {
                set: big(),
                members: added(r),
            })
        })
        .check(Check::Members(SET.into(), n + ADDS));
        add.per_call = true;
        v.push(Case {
            suite: "ipset",
            n,
            setup: vec![op(SetOp::Restore { set: big(), n })],
            steps: vec![
                add,
                Step::new("ipset.test", "test one member of the set of N", move |_| {
                    op(SetOp::Test {
                        set: big(),
                        m: n / 2,
                    })
                }),
                Step::new("ipset.list.name", "list the set names", |_| {
                    op(SetOp::ListNames)
                }),
            ],
            reps: o.fast_reps.max(1),
            warmup: o.warmup,
        });
    }
    v
}

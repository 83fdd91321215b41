//! The fake kernel's behaviours through nft's socket API (no root needed):
//! errors per message, generations, handles, rule placement, use counts,
//! dumps. The same facts are checked against the real kernel by the
//! differential test; these keep them checked where it cannot run.

use fakekernel::Kernel;
use nft::batch::Placement;
use nft::chain::{hook, POLICY_ACCEPT};
use nft::expr::{base, reg};
use nft::netlink::{NLM_F_CREATE, NLM_F_EXCL};
use nft::set::{flags, DATA_TYPE_VERDICT};
use nft::{
    msg, Batch, Chain, Data, Expr, Family, Rule, Set, SetElem, SetElems, Socket, Table, Verdict,
};

const F: Family = Family::Ipv4;
const T: &str = "t";

fn accept(chain: &str, tag: u8) -> Rule {
    Rule {
        userdata: Some(vec![tag]),
        ..Rule::new(
            F,
            T,
            chain,
            vec![Expr::counter(), Expr::verdict(Verdict::Accept)],
        )
    }
}

fn jump(from: &str, to: &str) -> Rule {
    Rule::new(F, T, from, vec![Expr::verdict(Verdict::Jump(to.into()))])
}

fn set(name: &str, id: u32, f: u32) -> Set {
    Set {
        flags: Some(f),
        key_type: Some(7),
        key_len: Some(4),
        id: Some(id),
        ..Set::new(F, T, name)
    }
}

fn lookup(chain: &str, set: &str, dreg: Option<u32>) -> Rule {
    Rule::new(
        F,
        T,
        chain,
        vec![
            Expr::load(base::NETWORK, 12, 4),
            Expr::Lookup {
                set: set.into(),
                set_id: None,
                sreg: reg::R1,
                dreg,
                flags: None,
            },
        ],
    )
}

/// Table `t` with base chain `in`, user chains `a` and `b`, `in` jumping
/// to `a` and `a` holding a rule; a set `s` looked up from `b`.
fn setup(s: &mut Socket) {
    let mut b = s.batch(None);
    b.add(&Table::new(F, T), 0);
    b.add(
        &Chain::base(F, T, "in", "filter", hook::LOCAL_IN, 0, POLICY_ACCEPT),
        0,
    );
    b.add(&Chain::new(F, T, "a"), 0);
    b.add(&Chain::new(F, T, "b"), 0);
    b.add_rule(&jump("in", "a"), Placement::Append, false, 0);
    b.add_rule(&accept("a", 1), Placement::Append, false, 0);
    b.add(&set("s", 1, 0), 0);
    b.add(
        &SetElems::new(F, T, "s", vec![SetElem::key(&[10, 0, 0, 1])]),
        0,
    );
    b.add_rule(&lookup("b", "s", None), Placement::Append, false, 0);
    assert!(s.commit(&mut b).unwrap().outcome.is_ok());
}

type Build = fn(&mut Batch);
/// The errors of a batch: (tag, errno), in order.
type Errors = Vec<(Option<u32>, i32)>;

/// (what, batch, its errors; the batch is aborted)
fn refusals() -> Vec<(&'static str, Build, Errors)> {
    vec![
        (
            "create an existing table",
            |b| {
                b.create(&Table::new(F, T), 1);
            },
            vec![(Some(1), 17)],
        ),
        (
            "create an existing chain",
            |b| {
                b.create(&Chain::new(F, T, "a"), 1);
            },
            vec![(Some(1), 17)],
        ),
        (
            "create an existing element",
            |b| {
                b.create(
                    &SetElems::new(F, T, "s", vec![SetElem::key(&[10, 0, 0, 1])]),
                    1,
                );
            },
            vec![(Some(1), 17)],
        ),
        (
            "delete a missing chain, rule, element",
            |b| {
                b.delete(&Chain::new(F, T, "nope"), 1);
                b.delete(&Rule::key(F, T, "a", Some(99)), 2);
                b.delete(
                    &SetElems::new(F, T, "s", vec![SetElem::key(&[1, 1, 1, 1])]),
                    3,
                );
            },
            vec![(Some(1), 2), (Some(2), 2), (Some(3), 2)],
        ),
        (
            "a chain with rules, non-recursively",
            |b| {
                b.delete_nonrec(&Chain::new(F, T, "a"), 1);
            },
            vec![(Some(1), 16)],
        ),
        (
            "a chain jumped to",
            |b| {
                b.delete(&Chain::new(F, T, "a"), 1);
            },
            vec![(Some(1), 16)],
        ),
        (
            "a bound set",
            |b| {
                b.delete(&Set::new(F, T, "s"), 1);
            },
            vec![(Some(1), 16)],
        ),
        (
            "a table with objects, non-recursively",
            |b| {
                b.delete_nonrec(&Table::new(F, T), 1);
            },
            vec![(Some(1), 16)],
        ),
        (
            "a set without id",
            |b| {
                b.add(
                    &Set {
                        id: None,
                        ..set("x", 9, 0)
                    },
                    1,
                );
            },
            vec![(Some(1), 22)],
        ),
        (
            "a rule without NLM_F_CREATE",
            |b| {
                b.push(msg::NEWRULE, 0, &accept("a", 2), 1);
            },
            vec![(Some(1), 22)],
        ),
        (
            "an anonymous set nothing binds (the first message takes it)",
            |b| {
                b.add(&Chain::new(F, T, "c"), 1);
                b.add(&set("__set%d", 8, flags::ANONYMOUS | flags::CONSTANT), 2);
            },
            vec![(Some(1), 22)],
        ),
        (
            "a policy on a user chain",
            |b| {
                b.add(
                    &Chain {
                        policy: Some(0),
                        ..Chain::new(F, T, "a")
                    },
                    1,
                );
            },
            vec![(Some(1), 95)],
        ),
        (
            "a jump to a base chain",
            |b| {
                b.add_rule(&jump("a", "in"), Placement::Append, false, 1);
            },
            vec![(Some(1), 95)],
        ),
        (
            "a jump to a missing chain",
            |b| {
                b.add_rule(&jump("a", "nope"), Placement::Append, false, 1);
            },
            vec![(Some(1), 2)],
        ),
        (
            "a loop reachable from a base chain, and what follows in the table",
            |b| {
                b.add_rule(&jump("a", "b"), Placement::Append, false, 1);
                b.add_rule(&jump("b", "a"), Placement::Append, false, 2);
                b.add_rule(&accept("b", 3), Placement::Append, false, 3);
            },
            vec![(Some(2), 31), (Some(3), 31)],
        ),
        (
            "masquerade in a filter chain",
            |b| {
                let m = Expr::Masq {
                    flags: None,
                    reg_proto_min: None,
                    reg_proto_max: None,
                };
                b.add_rule(&Rule::new(F, T, "in", vec![m]), Placement::Append, false, 1);
            },
            vec![(Some(1), 95)],
        ),
        (
            "a full set",
            |b| {
                b.add(
                    &Set {
                        size: Some(1),
                        ..set("full", 5, 0)
                    },
                    1,
                );
                b.add(
                    &SetElems::new(
                        F,
                        T,
                        "full",
                        vec![SetElem::key(&[1, 0, 0, 1]), SetElem::key(&[1, 0, 0, 2])],
                    ),
                    2,
                );
            },
            vec![(Some(2), 23)],
        ),
        (
            "errors go on after the first",
            |b| {
                b.add(&Chain::new(F, T, "c"), 1);
                b.add_rule(&accept("nope", 1), Placement::Append, false, 2);
                b.add_rule(&accept("c", 2), Placement::Append, false, 3);
                b.push(
                    msg::NEWCHAIN,
                    NLM_F_CREATE | NLM_F_EXCL,
                    &Chain::new(F, T, "c"),
                    4,
                );
            },
            vec![(Some(2), 2), (Some(4), 17)],
        ),
    ]
}

#[test]
fn refusals_abort_and_report_per_message() {
    for (what, build, want) in refusals() {
        let k = Kernel::new();
        let mut s = k.socket();
        setup(&mut s);
        let (before, gen) = (k.text(), k.genid());
        let mut b = s.batch(None);
        build(&mut b);
        let out = s.commit(&mut b).unwrap().outcome;
        let got: Vec<_> = out.errors.iter().map(|e| (e.tag, -e.code)).collect();
        assert_eq!(got, want, "{what}");
        assert!(!out.committed, "{what}");
        assert_eq!(k.text(), before, "{what}: state changed");
        assert_eq!(k.genid(), gen, "{what}: generation moved");
    }
}

#[test]
fn generation_check_and_moves() {
    let k = Kernel::new();
    let mut s = k.socket();
    assert_eq!(s.gen().unwrap().id, 1);
    setup(&mut s);
    assert_eq!(k.genid(), 2);
    // A stale generation: ERESTART on the begin message (no tag).
    let mut b = s.batch(Some(1));
    b.add(&Chain::new(F, T, "c"), 7);
    let out = s.commit(&mut b).unwrap().outcome;
    assert_eq!(out.errors.len(), 1);
    assert_eq!((out.errors[0].tag, out.errors[0].code), (None, -85));
    // The current one commits; so does 0 (no check).
    for g in [2, 0] {
        let mut b = s.batch(Some(g));
        b.add(&Chain::new(F, T, &format!("g{g}")), 0);
        assert!(s.commit(&mut b).unwrap().outcome.is_ok());
    }
    assert_eq!(k.genid(), 4);
    // Nothing to do: committed, no new generation. But a NEWCHAIN of an
    // existing chain is an update, even when it changes nothing.
    let cases: [(Build, u32); 3] = [
        (|_| {}, 4),
        (
            |b| {
                b.add(&Table::new(F, T), 0);
                b.add(&set("s", 3, 0), 0);
                b.add(
                    &SetElems::new(F, T, "s", vec![SetElem::key(&[10, 0, 0, 1])]),
                    0,
                );
            },
            4,
        ),
        (
            |b| {
                b.add(&Chain::new(F, T, "a"), 0);
            },
            5,
        ),
    ];
    for (build, want) in cases {
        let mut b = s.batch(None);
        build(&mut b);
        assert!(s.commit(&mut b).unwrap().outcome.is_ok());
        assert_eq!(k.genid(), want);
    }
}

#[test]
fn handles_are_per_table_and_survive_aborts() {
    let k = Kernel::new();
    let mut s = k.socket();
    setup(&mut s);
    // Chains in=1, a=2, b=3; rules 4 and 5; set 6; rule 7. An aborted
    // batch still takes handle 8.
    let mut b = s.batch(None);
    b.add_rule(&accept("a", 2), Placement::Append, false, 0);
    b.delete(&Chain::new(F, T, "nope"), 0);
    assert!(!s.commit(&mut b).unwrap().outcome.committed);
    let mut b = s.batch(None);
    b.add(&Table::new(F, "u"), 0);
    b.add(&Chain::new(F, "u", "c"), 1);
    b.add_rule(&accept("a", 3), Placement::Append, true, 2);
    let out = s.commit(&mut b).unwrap().outcome;
    let handles: Vec<_> = out.echoes.iter().map(|e| (e.tag, e.handle)).collect();
    assert_eq!(handles, [(2, Some(9))]);
    assert_eq!(k.chains(F, "u")[0].handle, Some(1));
    let tables: Vec<_> = k.tables().iter().map(|t| t.handle).collect();
    assert_eq!(tables, [Some(1), Some(2)]);
}

#[test]
fn rule_placement() {
    type Step = (Placement, Option<u64>, Option<u32>, u8);
    // (placements in one batch: (how, position handle, position id, tag);
    // the tags in chain order after it). The chain starts with rules 1
    // (handle 2) and 2 (handle 3).
    let cases: Vec<(&str, Vec<Step>, Vec<u8>)> = vec![
        (
            "append",
            vec![(Placement::Append, None, None, 9)],
            vec![1, 2, 9],
        ),
        (
            "insert at the head",
            vec![(Placement::Insert, None, None, 9)],
            vec![9, 1, 2],
        ),
        (
            "after a handle",
            vec![(Placement::Append, Some(2), None, 9)],
            vec![1, 9, 2],
        ),
        (
            "before a handle",
            vec![(Placement::Insert, Some(3), None, 9)],
            vec![1, 9, 2],
        ),
        (
            "after a rule of the same batch, by id",
            vec![
                (Placement::Insert, None, None, 8),
                (Placement::Append, None, Some(8), 9),
            ],
            vec![8, 9, 1, 2],
        ),
        (
            "replace",
            vec![(Placement::Replace, Some(2), None, 9)],
            vec![9, 2],
        ),
    ];
    for (what, steps, want) in cases {
        let k = Kernel::new();
        let mut s = k.socket();
        let mut b = s.batch(None);
        b.add(&Table::new(F, T), 0);
        b.add(&Chain::new(F, T, "a"), 0);
        for tag in [1, 2] {
            b.add_rule(&accept("a", tag), Placement::Append, false, 0);
        }
        assert!(s.commit(&mut b).unwrap().outcome.is_ok());
        let mut b = s.batch(None);
        for (how, pos, pos_id, tag) in steps {
            let mut r = accept("a", tag);
            r.id = Some(u32::from(tag));
            match how {
                Placement::Replace => r.handle = pos,
                _ => {
                    r.position = pos;
                    r.position_id = pos_id;
                }
            }
            b.add_rule(&r, how, false, 0);
        }
        assert!(s.commit(&mut b).unwrap().outcome.is_ok(), "{what}");
        let got: Vec<u8> = k
            .rules(F, T, "a")
            .iter()
            .map(|r| r.userdata.as_ref().unwrap()[0])
            .collect();
        assert_eq!(got, want, "{what}");
    }
}

#[test]
fn use_counts() {
    let k = Kernel::new();
    let mut s = k.socket();
    setup(&mut s);
    let mut b = s.batch(None);
    b.add(
        &Set {
            data_type: Some(DATA_TYPE_VERDICT),
            ..set("m", 2, flags::MAP)
        },
        0,
    );
    let mut e = SetElem::key(&[10, 0, 0, 2]);
    e.data = Some(Data::Verdict(Verdict::Goto("b".into())));
    b.add(&SetElems::new(F, T, "m", vec![e]), 0);
    b.add_rule(
        &lookup("a", "m", Some(reg::VERDICT)),
        Placement::Append,
        false,
        0,
    );
    assert!(s.commit(&mut b).unwrap().outcome.is_ok());
    let uses: Vec<_> = k
        .chains(F, T)
        .iter()
        .map(|c| (c.name.clone(), c.use_count.unwrap()))
        .collect();
    // in: its rule; a: two rules and the jump; b: its rule and the map's goto.
    assert_eq!(uses, [("in".into(), 1), ("a".into(), 3), ("b".into(), 2)]);
    // Chains and named sets.
    assert_eq!(k.tables()[0].use_count, Some(5));
    let text = k.text();
    assert!(
        text.contains("set m handle 8 flags map key 7/4 data verdict use 1"),
        "{text}"
    );
}

#[test]
fn dumps_filter_as_the_kernel_does() {
    let k = Kernel::new();
    let mut s = k.socket();
    setup(&mut s);
    let mut b = s.batch(None);
    b.add(&Table::new(F, "u"), 0);
    b.add(&Chain::new(F, "u", "x"), 0);
    b.add(&Table::new(Family::Ipv6, T), 0);
    assert!(s.commit(&mut b).unwrap().outcome.is_ok());
    assert_eq!(s.tables(Family::Unspec).unwrap().len(), 3);
    assert_eq!(s.tables(Family::Ipv6).unwrap().len(), 1);
    // Chain dumps answer for the whole family.
    assert_eq!(s.chains(F, Some(T)).unwrap().len(), 4);
    let mut n = 0;
    s.rules(F, Some(T), Some("a"), |_| {
        n += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(n, 1);
    s.rules(F, Some("nope"), None, |_| panic!("no rules"))
        .unwrap();
    assert!(matches!(
        s.sets(F, Some("nope")),
        Err(nft::Error::Kernel { code: -2, .. })
    ));
    assert_eq!(s.set_elems(F, T, "s").unwrap().len(), 1);
    assert!(s.get(&Table::new(F, "nope")).unwrap().is_none());
    assert!(s.get(&Chain::new(F, T, "a")).unwrap().is_some());
    let one = SetElems::new(F, T, "s", vec![SetElem::key(&[10, 0, 0, 1])]);
    assert_eq!(s.get(&one).unwrap().unwrap().elems.len(), 1);
    let st = k.stats();
    assert!(st.dumps >= 6 && st.gets >= 3, "{st:?}");
}

#[test]
fn big_element_dumps_span_datagrams() {
    let k = Kernel::new();
    let mut s = k.socket();
    let mut b = s.batch(None);
    b.add(&Table::new(F, T), 0);
    b.add(
        &Set {
            exprs: vec![Expr::counter()],
            ..set("big", 1, 0)
        },
        0,
    );
    let elems: Vec<SetElem> = (0..5000u32)
        .map(|i| {
            let mut e = SetElem::key(&i.to_be_bytes());
            e.userdata = Some(format!("element {i}").into_bytes());
            e
        })
        .collect();
    b.add(&SetElems::new(F, T, "big", elems), 0);
    assert!(s.commit(&mut b).unwrap().outcome.is_ok());
    let got = s.set_elems(F, T, "big").unwrap();
    assert_eq!(got.len(), 5000);
    assert_eq!(got[4999].userdata.as_deref(), Some(&b"element 4999"[..]));
}

/// The example of the crate documentation.
#[test]
fn lib_doc_example() {
    let k = Kernel::new();
    let mut sock = k.socket();
    let mut events = k.event_socket();
    let mut b = sock.batch(None);
    b.add(&Table::new(Family::Ipv4, "t"), 0);
    assert!(sock.commit(&mut b).unwrap().outcome.is_ok());
    assert_eq!(k.text(), "table ip t handle 1 use 0\n");
    assert_eq!(events.try_recv().unwrap().len(), 2); // NEWTABLE, NEWGEN

    k.fail_next_commit(fakekernel::FailAt::Commit, 12);
    let mut b = sock.batch(None);
    b.add(&Table::new(Family::Ipv4, "u"), 7);
    let out = sock.commit(&mut b).unwrap().outcome;
    assert_eq!((out.errors[0].tag, out.errors[0].code), (Some(7), -12));
}

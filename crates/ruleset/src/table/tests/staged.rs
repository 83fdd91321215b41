//! `Staging`: rules staged in any order end as appends in key order would
//! have left the table; clearing and early drops leave it consistent.

use super::*;

/// A staged rule: (order key, id, body, packets).
type Row = (u64, u64, B, u64);

/// The table after appending `rows` (in arrival order) to FORWARD in key
/// order, equal keys in arrival order, each with `append_with_id`.
fn appended(rows: &[Row]) -> Table<B> {
    let mut t = with_targets();
    let mut sorted = rows.to_vec();
    sorted.sort_by_key(|r| r.0);
    for (_, id, body, p) in sorted {
        let _ = t.append_with_id("FORWARD", RuleId(id), body, c(p));
    }
    t
}

fn with_targets() -> Table<B> {
    let mut t = filter();
    t.new_chain("X").unwrap();
    t.append("INPUT", b("pre"), c(0)).unwrap();
    t
}

fn listing(t: &Table<B>) -> Vec<(u64, String, Option<String>, u64)> {
    t.rules("FORWARD")
        .unwrap()
        .map(|r| {
            (
                r.id.0,
                r.body.text.clone(),
                r.body.jump.clone(),
                r.counters.packets,
            )
        })
        .collect()
}

#[test]
fn staged_rules_end_as_sorted_appends() {
    let cases: &[(&str, Vec<Row>)] = &[
        ("empty", vec![]),
        ("in order", vec![(3, 3, b("a"), 1), (4, 4, b("b"), 2)]),
        (
            "reversed, jumps",
            vec![
                (9, 9, j("c", "X"), 3),
                (5, 5, b("b"), 2),
                (4, 4, j("a", "X"), 1),
            ],
        ),
        // An id taken (by INPUT's rule, id 1) or repeated gets a fresh one;
        // the rule keeps its place by key.
        (
            "taken and repeated ids",
            vec![(7, 7, b("x"), 1), (1, 1, b("y"), 2), (7, 7, b("z"), 3)],
        ),
        ("id 0", vec![(2, 0, b("p"), 1), (1, 0, b("q"), 1)]),
    ];
    for (name, rows) in cases {
        let mut t = with_targets();
        let arrival: Vec<Row> = rows.iter().rev().cloned().collect();
        let mut s = t.staging("FORWARD").unwrap();
        for (key, id, body, p) in &arrival {
            s.stage(RuleId(*key), RuleId(*id), body.clone(), c(*p))
                .unwrap();
        }
        let ids = s.finish();
        check_invariants(&t);
        let want = appended(&arrival);
        assert_eq!(
            listing(&t)
                .iter()
                .map(|r| (&r.1, &r.2, r.3))
                .collect::<Vec<_>>(),
            listing(&want)
                .iter()
                .map(|r| (&r.1, &r.2, r.3))
                .collect::<Vec<_>>(),
            "{name}"
        );
        assert_eq!(
            ids,
            listing(&t).iter().map(|r| RuleId(r.0)).collect::<Vec<_>>(),
            "{name}"
        );
        // Ids as given where free, and all distinct.
        let mut seen = FxSet::default();
        assert!(ids.iter().all(|i| seen.insert(*i)), "{name}");
        assert!(!ids.contains(&RuleId(1)), "{name}: INPUT's id reused");
    }
}

#[test]
fn staging_refuses_what_append_refuses() {
    let mut t = with_targets();
    t.append("X", j("back", "FORWARD"), c(0)).unwrap();
    let mut s = t.staging("FORWARD").unwrap();
    assert_eq!(
        s.stage(RuleId(5), RuleId(5), j("to nowhere", "Y"), c(0)),
        Err(Error::NoSuchTarget("Y".into()))
    );
    assert_eq!(
        s.stage(RuleId(6), RuleId(6), j("loop", "X"), c(0)),
        Err(Error::Loop)
    );
    s.finish();
    check_invariants(&t);
    assert!(listing(&t).is_empty());
    assert!(matches!(t.staging("NOPE"), Err(Error::NoSuchChain)));
}

#[test]
fn counters_add_up_only_on_staged_rules() {
    let mut t = with_targets();
    let placed = t.append("FORWARD", b("placed"), c(1)).unwrap();
    let mut s = t.staging("FORWARD").unwrap();
    let id = s.stage(RuleId(10), RuleId(10), b("ports"), c(2)).unwrap();
    assert!(s.add_counters(id, c(3)));
    assert!(!s.add_counters(placed, c(3)), "a placed rule");
    assert!(!s.add_counters(RuleId(1), c(3)), "another chain's rule");
    assert!(!s.add_counters(RuleId(99), c(3)), "no such rule");
    s.finish();
    check_invariants(&t);
    let l = listing(&t);
    assert_eq!((l[0].3, l[1].3), (1, 5));
}

#[test]
fn clear_and_early_drop_leave_a_consistent_table() {
    let mut t = with_targets();
    let mut s = t.staging("FORWARD").unwrap();
    s.stage(RuleId(4), RuleId(4), j("a", "X"), c(1)).unwrap();
    s.ensure_chain("Y");
    s.clear();
    s.stage(RuleId(3), RuleId(4), j("b", "Y"), c(1)).unwrap();
    drop(s);
    check_invariants(&t);
    assert_eq!(listing(&t).len(), 1);
    // Nothing refers to X any more: it can go.
    t.delete_chain("X").unwrap();
    assert_eq!(t.delete_chain("Y"), Err(Error::ChainInUse));
    check_invariants(&t);
}

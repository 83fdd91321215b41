//! Table tests: error cases, duplicates, transactions, memory accounting, and
//! a randomized differential test against a naive `Vec`-based model.

use super::*;

mod model;
mod staged;
use model::Model;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct B {
    text: String,
    jump: Option<String>,
}

impl RuleBody for B {
    fn jump_target(&self) -> Option<&str> {
        self.jump.as_deref()
    }
    fn retarget(&mut self, new_chain: &str) {
        self.jump = Some(new_chain.to_string());
    }
}

fn b(text: &str) -> B {
    B {
        text: text.to_string(),
        jump: None,
    }
}

fn j(text: &str, target: &str) -> B {
    B {
        text: text.to_string(),
        jump: Some(target.to_string()),
    }
}

fn c(packets: u64) -> Counters {
    Counters {
        packets,
        bytes: packets * 100,
    }
}

fn filter() -> Table<B> {
    Table::new(Family::Ipv4, TableKind::Filter)
}

fn texts(t: &Table<B>, chain: &str) -> Vec<String> {
    t.rules(chain)
        .unwrap()
        .map(|r| r.body.text.clone())
        .collect()
}

/// xorshift64*: deterministic, dependency-free randomness for tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

/// Internal consistency of every index with the slab and the trees.
fn check_invariants(t: &Table<B>) {
    let mut live = 0;
    let mut refs: FxMap<u32, u32> = FxMap::default();
    let mut edges: FxMap<(u32, u32), u32> = FxMap::default();
    let mut in_spec: FxSet<u32> = FxSet::default();
    for (&key, &head) in &t.spec {
        let mut s = head;
        while s != NIL {
            assert_eq!(t.rec(s).key, key);
            assert!(in_spec.insert(s), "slot listed twice");
            s = t.rec(s).next;
        }
    }
    for (cid, ch) in t.chains.iter().enumerate() {
        let Some(ch) = ch else { continue };
        assert_eq!(t.names[&ch.name], ChainId(cid as u32));
        for (at, slot) in ch.rules.iter().enumerate() {
            live += 1;
            let r = t.rec(slot);
            assert_eq!(r.chain, cid as u32);
            assert_eq!(t.position(slot), at);
            assert_eq!(t.ids.get(r.id), Some(slot));
            assert!(r.id.0 < t.next_id);
            assert_eq!(r.key, spec_key(r.chain, &r.body));
            assert!(in_spec.contains(&slot), "slot missing from its spec list");
            if let Some(target) = r.body.jump_target() {
                let tid = t.names[target].0;
                assert!(t.ch(tid).referrers.contains(&slot));
                *refs.entry(tid).or_default() += 1;
                *edges.entry((cid as u32, tid)).or_default() += 1;
            }
        }
    }
    assert_eq!(t.names.len(), t.chains.iter().flatten().count());
    assert_eq!(t.ids.len(), live);
    assert_eq!(t.rules.iter().flatten().count(), live);
    assert_eq!(t.rules.len(), live + t.free.len());
    assert_eq!(in_spec.len(), live);
    for (cid, ch) in t.chains.iter().enumerate() {
        let Some(ch) = ch else { continue };
        assert_eq!(
            ch.referrers.len() as u32,
            refs.get(&(cid as u32)).copied().unwrap_or(0)
        );
        for (&tid, &n) in &ch.jumps {
            assert_eq!(edges[&(cid as u32, tid)], n);
        }
        assert_eq!(
            ch.jumps.len(),
            edges.keys().filter(|e| e.0 == cid as u32).count()
        );
    }
}

type Obs = Vec<(
    u32,
    String,
    Option<Policy>,
    Counters,
    u32,
    Vec<(RuleId, B, Counters)>,
)>;

fn observe(t: &Table<B>) -> (Obs, u64) {
    let obs = t
        .chains()
        .into_iter()
        .map(|v| {
            let rules = t
                .rules(v.name)
                .unwrap()
                .map(|r| (r.id, r.body.clone(), r.counters))
                .collect();
            assert_eq!(v.len, t.chain(v.name).unwrap().len);
            (
                v.id.0,
                v.name.to_string(),
                v.policy,
                v.counters,
                v.references,
                rules,
            )
        })
        .collect();
    (obs, t.next_id)
}

/// Run one random operation on both; panic on any divergence.
fn random_op(rng: &mut Rng, t: &mut Table<B>, m: &mut Model) {
    const CHAINS: &[&str] = &["INPUT", "FORWARD", "OUTPUT", "a", "b", "c", "d", "nope"];
    const TARGETS: &[&str] = &["a", "b", "c", "d", "OUTPUT", "zz"];
    const TEXTS: &[&str] = &["r0", "r1", "r2", "r3", "r4", "r5"];
    let body = |rng: &mut Rng| {
        if rng.below(4) == 0 {
            j(rng.pick(TEXTS), rng.pick(TARGETS))
        } else {
            b(rng.pick(TEXTS))
        }
    };
    let chain = rng.pick(CHAINS);
    let len = m
        .find(chain)
        .map(|i| m.chains[i].as_ref().unwrap().rules.len())
        .unwrap_or(3);
    let pos = rng.below(len + 3);
    let cs = c(rng.below(3) as u64);
    match rng.below(24) {
        0..=5 => {
            let bd = body(rng);
            assert_eq!(t.append(chain, bd.clone(), cs), m.add(chain, None, bd, cs));
        }
        6..=8 => {
            let bd = body(rng);
            assert_eq!(
                t.insert(chain, pos, bd.clone(), cs),
                m.add(chain, Some(pos), bd, cs)
            );
        }
        9 => {
            let bd = body(rng);
            assert_eq!(
                t.replace(chain, pos, bd.clone(), cs),
                m.replace(chain, pos, bd, cs)
            );
        }
        10 | 11 => assert_eq!(t.delete_at(chain, pos), m.delete_at(chain, pos)),
        12 | 13 => {
            let bd = body(rng);
            assert_eq!(t.delete_spec(chain, &bd), m.delete_spec(chain, &bd));
            assert_eq!(
                t.check(chain, &bd),
                m.find_spec(chain, &bd).map(|f| f.is_some())
            );
            assert_eq!(t.find_spec(chain, &bd), m.find_spec(chain, &bd));
        }
        14 => {
            let id = RuleId(rng.below(m.next_id as usize + 5) as u64);
            let bd = body(rng);
            assert_eq!(
                t.append_with_id(chain, id, bd.clone(), cs),
                m.append_with_id(chain, id, bd, cs)
            );
        }
        15 => {
            let r = t.flush_chain(chain);
            assert_eq!(r, m.find(chain).map(|i| m.ch(i).rules.clear()));
        }
        16 => {
            let n = rng.pick(CHAINS);
            assert_eq!(t.new_chain(n), m.new_chain(n));
        }
        17 => assert_eq!(t.delete_chain(chain), m.delete_chain(chain)),
        18 => {
            let n = rng.pick(CHAINS);
            assert_eq!(t.rename_chain(chain, n), m.rename(chain, n));
        }
        19 => {
            let p = if rng.below(2) == 0 {
                Policy::Accept
            } else {
                Policy::Drop
            };
            let cs = if rng.below(2) == 0 { Some(cs) } else { None };
            assert_eq!(t.set_policy(chain, p, cs), m.set_policy(chain, p, cs));
        }
        20 => {
            let (ch, p) = match rng.below(4) {
                0 => (None, None),
                1 => (None, Some(pos)),
                2 => (Some(chain), None),
                _ => (Some(chain), Some(pos)),
            };
            assert_eq!(t.zero(ch, p), m.zero(ch, p));
        }
        21 => assert_eq!(
            t.set_rule_counters(chain, pos, cs),
            m.set_rule_counters(chain, pos, cs)
        ),
        22 => {
            if rng.below(8) == 0 {
                t.flush_all();
                m.chains.iter_mut().flatten().for_each(|c| c.rules.clear());
            }
        }
        _ => {
            if rng.below(4) == 0 {
                assert_eq!(t.delete_user_chains(), m.delete_user_chains());
            }
        }
    }
}

#[test]
fn differential_against_naive_model() {
    for seed in 1..=8u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut t = filter();
        let mut m = Model::new();
        let mut saved: Option<Model> = None;
        let (mut rollbacks, mut commits) = (0, 0);
        for step in 0..4000 {
            match rng.below(40) {
                0 if saved.is_none() => {
                    t.begin();
                    saved = Some(m.clone());
                }
                1 if saved.is_some() => {
                    t.rollback();
                    m = saved.take().unwrap();
                    rollbacks += 1;
                }
                2 if saved.is_some() && rng.below(3) == 0 => {
                    t.commit();
                    saved = None;
                    commits += 1;
                }
                _ => random_op(&mut rng, &mut t, &mut m),
            }
            assert_eq!(t.in_transaction(), saved.is_some());
            assert_eq!(observe(&t), m.observe(), "seed {seed} step {step}");
            assert_eq!(
                t.rule_count(),
                m.chains
                    .iter()
                    .flatten()
                    .map(|c| c.rules.len())
                    .sum::<usize>()
            );
            if step % 50 == 0 {
                check_invariants(&t);
            }
        }
        check_invariants(&t);
        assert!(
            rollbacks > 5 && commits > 1,
            "seed {seed}: {rollbacks} rollbacks {commits} commits"
        );
    }
}

#[test]
fn differential_large_chains() {
    // Few chains, many rules: exercises multi-level trees under every op.
    let mut rng = Rng(0xdead_beef);
    let mut t = filter();
    let mut m = Model::new();
    for i in 0..3000 {
        let text = format!("r{}", rng.below(400));
        let chain = ["INPUT", "OUTPUT"][i % 2];
        let pos = rng.below(i / 2 + 2) + 1;
        assert_eq!(
            t.insert(chain, pos, b(&text), c(1)),
            m.add(chain, Some(pos), b(&text), c(1))
        );
    }
    t.begin();
    let saved = m.clone();
    for _ in 0..3000 {
        let chain = ["INPUT", "OUTPUT"][rng.below(2)];
        let text = format!("r{}", rng.below(400));
        let len = m.ch(m.find(chain).unwrap()).rules.len();
        match rng.below(4) {
            0 => assert_eq!(
                t.delete_spec(chain, &b(&text)),
                m.delete_spec(chain, &b(&text))
            ),
            1 => assert_eq!(
                t.delete_at(chain, len.max(1)),
                m.delete_at(chain, len.max(1))
            ),
            2 => assert_eq!(t.delete_at(chain, 1), m.delete_at(chain, 1)),
            _ => {
                let p = rng.below(len + 1) + 1;
                assert_eq!(
                    t.insert(chain, p, b(&text), c(2)),
                    m.add(chain, Some(p), b(&text), c(2))
                );
            }
        }
    }
    assert_eq!(observe(&t), m.observe());
    check_invariants(&t);
    t.rollback();
    assert_eq!(observe(&t), saved.observe());
    check_invariants(&t);
}

// ----- targeted cases --------------------------------------------------------

#[test]
fn new_table_has_builtins_in_order() {
    for kind in TableKind::ALL {
        let t: Table<B> = Table::new(Family::Ipv6, kind);
        let names: Vec<&str> = t.chains().iter().map(|c| c.name).collect();
        assert_eq!(names, kind.builtin_chains());
        for (i, v) in t.chains().iter().enumerate() {
            assert_eq!(v.id, ChainId(i as u32));
            assert_eq!(v.policy, Some(Policy::Accept));
            assert_eq!(v.counters, Counters::default());
            assert!(t.is_builtin(v.name));
        }
        assert_eq!(t.family(), Family::Ipv6);
        assert_eq!(t.kind(), kind);
        assert_eq!(t.rule_count(), 0);
    }
}

#[test]
fn user_chains_sorted_by_bytes_after_builtins() {
    let mut t = filter();
    for n in ["b", "B", "a", "_x", "aa"] {
        t.new_chain(n).unwrap();
    }
    let names: Vec<&str> = t.chains().iter().map(|c| c.name).collect();
    assert_eq!(
        names,
        ["INPUT", "FORWARD", "OUTPUT", "B", "_x", "a", "aa", "b"]
    );
    assert!(!t.is_builtin("a"));
    assert!(!t.is_builtin("missing"));
}

#[test]
fn error_cases() {
    type Case = (&'static str, fn(&mut Table<B>) -> Result<(), Error>, Error);
    let cases: &[Case] = &[
        (
            "append to missing chain",
            |t| t.append("X", b("r"), c(0)).map(drop),
            Error::NoSuchChain,
        ),
        (
            "new existing user chain",
            |t| t.new_chain("U").map(drop),
            Error::ChainExists,
        ),
        (
            "new chain named like builtin",
            |t| t.new_chain("INPUT").map(drop),
            Error::ChainExists,
        ),
        (
            "delete builtin",
            |t| t.delete_chain("INPUT"),
            Error::BuiltinChain,
        ),
        (
            "rename builtin",
            |t| t.rename_chain("INPUT", "Z"),
            Error::BuiltinChain,
        ),
        (
            "policy on user chain",
            |t| t.set_policy("U", Policy::Drop, None),
            Error::BuiltinChain,
        ),
        (
            "counters on user chain",
            |t| t.set_chain_counters("U", c(1)),
            Error::BuiltinChain,
        ),
        (
            "delete referenced",
            |t| t.delete_chain("V"),
            Error::ChainInUse,
        ),
        (
            "delete non-empty",
            |t| t.delete_chain("U"),
            Error::ChainNotEmpty,
        ),
        (
            "delete all: first failing chain by name",
            |t| t.delete_user_chains(),
            Error::ChainNotEmpty,
        ),
        (
            "rename onto existing",
            |t| t.rename_chain("U", "V"),
            Error::ChainExists,
        ),
        (
            "rename onto builtin",
            |t| t.rename_chain("U", "OUTPUT"),
            Error::ChainExists,
        ),
        (
            "rename missing",
            |t| t.rename_chain("X", "Y"),
            Error::NoSuchChain,
        ),
        (
            "delete spec absent",
            |t| t.delete_spec("U", &b("nope")).map(drop),
            Error::NoSuchRule,
        ),
        (
            "insert at 0",
            |t| t.insert("U", 0, b("r"), c(0)).map(drop),
            Error::IndexOutOfRange,
        ),
        (
            "insert past len+1",
            |t| t.insert("U", 3, b("r"), c(0)).map(drop),
            Error::IndexOutOfRange,
        ),
        (
            "replace past len",
            |t| t.replace("U", 2, b("r"), c(0)).map(drop),
            Error::IndexOutOfRange,
        ),
        (
            "delete past len",
            |t| t.delete_at("U", 2).map(drop),
            Error::IndexOutOfRange,
        ),
        (
            "rule_at past len",
            |t| t.rule_at("U", 2).map(drop),
            Error::IndexOutOfRange,
        ),
        (
            "zero rule past len",
            |t| t.zero(Some("U"), Some(2)),
            Error::IndexOutOfRange,
        ),
        (
            "zero pos without chain",
            |t| t.zero(None, Some(1)),
            Error::IndexOutOfRange,
        ),
        (
            "counters past len",
            |t| t.set_rule_counters("U", 9, c(1)),
            Error::IndexOutOfRange,
        ),
        (
            "jump to missing chain",
            |t| t.append("U", j("r", "GONE"), c(0)).map(drop),
            Error::NoSuchTarget("GONE".into()),
        ),
        (
            "jump to self",
            |t| t.append("V", j("r", "V"), c(0)).map(drop),
            Error::Loop,
        ),
        (
            "jump closing a cycle",
            |t| t.append("V", j("r", "U"), c(0)).map(drop),
            Error::Loop,
        ),
        (
            "check on missing chain",
            |t| t.check("X", &b("r")).map(drop),
            Error::NoSuchChain,
        ),
        (
            "flush missing chain",
            |t| t.flush_chain("X"),
            Error::NoSuchChain,
        ),
        (
            "delete missing chain",
            |t| t.delete_chain("X"),
            Error::NoSuchChain,
        ),
    ];
    for (name, op, want) in cases {
        // U: one rule jumping to V; V: empty, referenced from U and INPUT.
        let mut t = filter();
        t.new_chain("U").unwrap();
        t.new_chain("V").unwrap();
        t.append("U", j("u1", "V"), c(3)).unwrap();
        t.append("INPUT", j("i1", "V"), c(4)).unwrap();
        let before = observe(&t);
        assert_eq!(op(&mut t).as_ref(), Err(want), "{name}");
        assert_eq!(observe(&t), before, "{name}: failed call changed the table");
        // The same inside a transaction records nothing harmful.
        t.begin();
        assert_eq!(op(&mut t).as_ref(), Err(want), "{name}");
        t.rollback();
        assert_eq!(observe(&t), before, "{name}");
    }
}

#[test]
fn delete_user_chains_reports_non_empty_and_is_atomic() {
    let mut t = filter();
    for n in ["a", "b", "c"] {
        t.new_chain(n).unwrap();
    }
    t.append("c", b("x"), c(0)).unwrap();
    let before = observe(&t);
    assert_eq!(t.delete_user_chains(), Err(Error::ChainNotEmpty));
    assert_eq!(observe(&t), before);
    t.flush_chain("c").unwrap();
    t.delete_user_chains().unwrap();
    assert_eq!(t.chains().len(), 3);
    // Ids are never reused.
    assert_eq!(t.new_chain("a"), Ok(ChainId(6)));
}

#[test]
fn duplicates_delete_first_and_find_first() {
    let mut t = filter();
    let ids: Vec<RuleId> = ["x", "y", "x", "z", "x"]
        .iter()
        .map(|s| t.append("INPUT", b(s), c(0)).unwrap())
        .collect();
    assert_eq!(t.find_spec("INPUT", &b("x")), Ok(Some((1, ids[0]))));
    assert_eq!(t.delete_spec("INPUT", &b("x")), Ok(ids[0]));
    assert_eq!(t.find_spec("INPUT", &b("x")), Ok(Some((2, ids[2]))));
    // A duplicate inserted in front becomes the first.
    let front = t.insert("INPUT", 1, b("x"), c(0)).unwrap();
    assert_eq!(t.delete_spec("INPUT", &b("x")), Ok(front));
    assert_eq!(t.delete_spec("INPUT", &b("x")), Ok(ids[2]));
    assert_eq!(texts(&t, "INPUT"), ["y", "z", "x"]);
    assert_eq!(t.check("INPUT", &b("x")), Ok(true));
    assert_eq!(t.check("OUTPUT", &b("x")), Ok(false));
    assert_eq!(t.delete_spec("OUTPUT", &b("x")), Err(Error::NoSuchRule));
}

#[test]
fn positions_ids_and_counters() {
    let mut t = filter();
    let a = t.append("INPUT", b("a"), c(1)).unwrap();
    let z = t.append("INPUT", b("z"), c(2)).unwrap();
    let m = t.insert("INPUT", 2, b("m"), c(3)).unwrap();
    let e = t.insert("INPUT", 4, b("end"), c(4)).unwrap();
    assert_eq!((a, z, m, e), (RuleId(1), RuleId(2), RuleId(3), RuleId(4)));
    assert_eq!(texts(&t, "INPUT"), ["a", "m", "z", "end"]);
    assert_eq!(
        t.rule_by_id(z).map(|(ch, p, v)| (ch, p, v.counters)),
        Some((ChainId(0), 3, c(2)))
    );
    let r = t.replace("INPUT", 1, b("A"), c(9)).unwrap();
    assert_eq!(r, RuleId(5));
    assert!(t.rule_by_id(a).is_none());
    assert_eq!(t.rule_at("INPUT", 1).unwrap().counters, c(9));
    t.set_rule_counters("INPUT", 2, c(7)).unwrap();
    assert_eq!(t.rule_at("INPUT", 2).unwrap().counters, c(7));
    t.set_policy("INPUT", Policy::Drop, Some(c(5))).unwrap();
    t.zero(Some("INPUT"), Some(2)).unwrap();
    assert_eq!(t.rule_at("INPUT", 2).unwrap().counters, c(0));
    assert_eq!(t.chain("INPUT").unwrap().counters, c(5));
    t.zero(Some("INPUT"), None).unwrap();
    assert!(t.rules("INPUT").unwrap().all(|r| r.counters == c(0)));
    let v = t.chain("INPUT").unwrap();
    assert_eq!((v.policy, v.counters), (Some(Policy::Drop), c(0)));
    assert_eq!(t.delete_at("INPUT", 4), Ok(e));
    assert_eq!(t.rule_count(), 3);
}

#[test]
fn append_with_id_keeps_allocator_above() {
    let mut t = filter();
    assert_eq!(
        t.append_with_id("INPUT", RuleId(100), b("a"), c(0)),
        Ok(RuleId(100))
    );
    assert_eq!(t.append("INPUT", b("b"), c(0)), Ok(RuleId(101)));
    assert_eq!(
        t.append_with_id("INPUT", RuleId(50), b("c"), c(0)),
        Ok(RuleId(50))
    );
    // Taken or zero ids get a fresh one.
    assert_eq!(
        t.append_with_id("INPUT", RuleId(50), b("d"), c(0)),
        Ok(RuleId(102))
    );
    assert_eq!(
        t.append_with_id("INPUT", RuleId(0), b("e"), c(0)),
        Ok(RuleId(103))
    );
}

#[test]
fn rename_retargets_and_rehashes() {
    let mut t = filter();
    t.new_chain("old").unwrap();
    t.append("old", b("inside"), c(0)).unwrap();
    let id = t.append("INPUT", j("x", "old"), c(6)).unwrap();
    t.append("FORWARD", j("x", "old"), c(0)).unwrap();
    t.rename_chain("old", "new").unwrap();
    assert!(t.chain("old").is_none());
    let v = t.chain("new").unwrap();
    assert_eq!((v.references, v.len), (2, 1));
    assert_eq!(t.check("INPUT", &j("x", "new")), Ok(true));
    assert_eq!(t.check("INPUT", &j("x", "old")), Ok(false));
    assert_eq!(t.rule_by_id(id).unwrap().2.body, &j("x", "new"));
    assert_eq!(t.delete_spec("INPUT", &j("x", "new")), Ok(id));
    assert_eq!(t.chain("new").unwrap().references, 1);
    check_invariants(&t);
}

#[test]
fn cycles_no_builtin_chain_reaches_are_accepted_like_the_kernel() {
    let mut t = filter();
    for n in ["a", "b", "x"] {
        t.new_chain(n).unwrap();
    }
    // Unreachable: iptables (either backend) and the kernel accept these.
    t.append("x", j("1", "x"), c(0)).unwrap();
    t.append("a", j("2", "b"), c(0)).unwrap();
    t.append("b", j("3", "a"), c(0)).unwrap();
    // Making the cycle reachable is the loop.
    assert_eq!(t.append("INPUT", j("4", "a"), c(0)), Err(Error::Loop));
    assert_eq!(t.insert("OUTPUT", 1, j("5", "x"), c(0)), Err(Error::Loop));
    // Once broken, the chain may be reached.
    t.delete_at("b", 1).unwrap();
    assert!(t.append("INPUT", j("6", "a"), c(0)).is_ok());
    assert_eq!(t.append("b", j("7", "a"), c(0)), Err(Error::Loop));
    assert_eq!(t.replace("a", 1, j("8", "a"), c(0)), Err(Error::Loop));
    check_invariants(&t);
}

#[test]
fn loop_detection_through_user_chains() {
    let mut t = filter();
    for n in ["a", "b", "c", "d"] {
        t.new_chain(n).unwrap();
    }
    // Reachable from a built-in chain: cycles among these are loops.
    t.append("INPUT", j("0", "a"), c(0)).unwrap();
    t.append("a", j("1", "b"), c(0)).unwrap();
    t.append("b", j("2", "c"), c(0)).unwrap();
    t.append("b", j("3", "d"), c(0)).unwrap();
    assert_eq!(t.append("c", j("4", "a"), c(0)), Err(Error::Loop));
    assert_eq!(t.insert("d", 1, j("4", "b"), c(0)), Err(Error::Loop));
    assert!(t.append("c", j("4", "d"), c(0)).is_ok());
    assert!(t.append("INPUT", j("5", "a"), c(0)).is_ok());
    // Removing the edge b -> c makes c -> a legal.
    t.delete_at("b", 1).unwrap();
    assert!(t.append("c", j("6", "a"), c(0)).is_ok());
}

#[test]
fn rollback_restores_everything() {
    let mut t = filter();
    t.new_chain("keep").unwrap();
    t.append("keep", b("k1"), c(1)).unwrap();
    t.append("INPUT", j("to-keep", "keep"), c(2)).unwrap();
    t.set_policy("OUTPUT", Policy::Drop, Some(c(8))).unwrap();
    let before = observe(&t);
    t.begin();
    t.new_chain("tmp").unwrap();
    t.append("tmp", b("t"), c(0)).unwrap();
    t.rename_chain("keep", "kept").unwrap();
    t.append("INPUT", j("to-tmp", "tmp"), c(0)).unwrap();
    t.zero(None, None).unwrap();
    t.flush_all();
    t.delete_user_chains().unwrap();
    t.set_policy("OUTPUT", Policy::Accept, None).unwrap();
    t.append("FORWARD", b("f"), c(0)).unwrap();
    t.rollback();
    assert!(!t.in_transaction());
    assert_eq!(observe(&t), before);
    check_invariants(&t);
    // The allocators are back too: next chain id and next rule id.
    assert_eq!(t.new_chain("tmp"), Ok(ChainId(4)));
    assert_eq!(t.append("tmp", b("t"), c(0)), Ok(RuleId(3)));
    // Without a transaction, nothing is recorded and rollback is a no-op.
    t.rollback();
    assert_eq!(t.rule_count(), 3);
    t.begin();
    t.append("tmp", b("u"), c(0)).unwrap();
    t.commit();
    t.rollback();
    assert_eq!(t.rule_count(), 4);
}

#[test]
fn rollback_to_savepoint_keeps_earlier_changes_and_the_transaction() {
    let mut t = filter();
    assert_eq!(t.savepoint(), None);
    t.begin();
    t.new_chain("a").unwrap();
    t.append("a", b("a1"), c(1)).unwrap();
    let kept = observe(&t);
    let sp = t.savepoint().expect("open transaction");
    t.append("a", b("a2"), c(0)).unwrap();
    t.new_chain("b").unwrap();
    t.delete_at("a", 1).unwrap();
    t.rollback_to(sp);
    assert!(t.in_transaction());
    assert_eq!(observe(&t), kept);
    check_invariants(&t);
    // The id allocator is back at the savepoint: the next rule reuses id 2.
    assert_eq!(t.append("a", b("a2"), c(0)), Ok(RuleId(2)));
    // A later full rollback still undoes what came before the savepoint.
    t.rollback();
    assert!(t.chain("a").is_none());
    assert_eq!(t.rule_count(), 0);
}

#[test]
fn model_overhead_per_rule_at_most_100_bytes() {
    let mut t = filter();
    let n = 100_000;
    for i in 0..n {
        t.append("INPUT", b(&format!("rule {i}")), c(0)).unwrap();
    }
    let per_rule = t.model_overhead_bytes() as f64 / n as f64;
    assert_eq!(size_of::<Option<Rule<B>>>() - size_of::<B>(), 40);
    assert!(per_rule <= 100.0, "{per_rule:.1} bytes per rule");
}

#[test]
fn flush_of_many_equal_rules_is_linear_and_spares_other_chains() {
    let mut t = filter();
    for _ in 0..50_000 {
        t.append("INPUT", b("same"), c(0)).unwrap();
    }
    t.append("OUTPUT", b("same"), c(0)).unwrap();
    t.begin();
    t.flush_chain("INPUT").unwrap();
    assert_eq!(t.check("INPUT", &b("same")), Ok(false));
    assert_eq!(
        t.find_spec("OUTPUT", &b("same")),
        Ok(Some((1, RuleId(50_001))))
    );
    check_invariants(&t);
    t.rollback();
    assert_eq!(t.chain("INPUT").unwrap().len, 50_000);
    assert_eq!(t.find_spec("INPUT", &b("same")), Ok(Some((1, RuleId(1)))));
    check_invariants(&t);
}

#[test]
fn set_rule_id_moves_the_id_and_rolls_back() {
    let mut t = filter();
    let a = t.append("INPUT", b("a"), c(1)).unwrap();
    let x = t.append("INPUT", b("x"), c(2)).unwrap();
    let before = observe(&t);
    t.begin();
    t.flush_chain("INPUT").unwrap();
    let a2 = t.append("INPUT", b("a"), c(0)).unwrap();
    // (from, to, result): a used or zero target and a dead source change nothing.
    let cases = [
        (a2, RuleId(0), Err(Error::IndexOutOfRange)),
        (RuleId(999), a, Err(Error::NoSuchRule)),
        (a2, a, Ok(())),
        (a2, x, Err(Error::NoSuchRule)),
    ];
    for (from, to, want) in cases {
        assert_eq!(t.set_rule_id(from, to), want, "{from:?} -> {to:?}");
    }
    assert_eq!(t.rule_at("INPUT", 1).unwrap().id, a);
    assert_eq!(t.rule_by_id(a).map(|(_, pos, _)| pos), Some(1));
    assert!(t.rule_by_id(a2).is_none());
    assert_eq!(t.find_spec("INPUT", &b("a")), Ok(Some((1, a))));
    check_invariants(&t);
    t.rollback();
    assert_eq!(observe(&t), before);
    check_invariants(&t);
}

#[test]
fn undo_ops_stay_small_whatever_the_rule_size() {
    // A flush of every chain records one op per chain: ops as big as a rule
    // made growing the undo log copy megabytes at 10k chains.
    let op = size_of::<super::undo::Op<[u8; 160]>>();
    assert!(op <= 64, "{op} bytes per undo op");
}

//! The fake kernel's text dump (`Kernel::text`) of a few rulesets built
//! over its socket, against golden files in `testdata/` (in that text).
//! `NFK_UPDATE_GOLDEN=1` rewrites them.

use fakekernel::Kernel;
use nft::batch::Placement;
use nft::chain::{hook, POLICY_ACCEPT, POLICY_DROP};
use nft::expr::{base, meta, reg, CmpOp};
use nft::set::{flags, DATA_TYPE_VERDICT};
use nft::setelem::F_INTERVAL_END;
use nft::{Batch, Chain, Data, Expr, Family, Rule, Set, SetElem, SetElems, Socket, Table, Verdict};

const F: Family = Family::Ipv4;
const T: &str = "nfk";

fn golden(name: &str, text: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(format!("{name}.txt"));
    if std::env::var_os("NFK_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (NFK_UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(
        text,
        want,
        "{name}: the dump differs from {}",
        path.display()
    );
}

fn commit(s: &mut Socket, build: impl FnOnce(&mut Batch)) {
    let mut b = s.batch(None);
    build(&mut b);
    let rep = s.commit(&mut b).unwrap();
    assert!(rep.outcome.is_ok(), "{rep:?}");
}

fn ssh_rule(chain: &str, addr: [u8; 4], v: Verdict, text: &[u8]) -> Rule {
    Rule {
        userdata: Some(text.to_vec()),
        ..Rule::new(
            F,
            T,
            chain,
            vec![
                Expr::load(base::NETWORK, 12, 4),
                Expr::cmp_eq(&addr),
                Expr::Meta {
                    key: meta::L4PROTO,
                    dreg: reg::R1,
                },
                Expr::cmp_eq(&[6]),
                Expr::load(base::TRANSPORT, 2, 2),
                Expr::Cmp {
                    sreg: reg::R1,
                    op: CmpOp::Eq,
                    data: 22u16.to_be_bytes().to_vec(),
                },
                Expr::counter(),
                Expr::verdict(v),
            ],
        )
    }
}

fn tables_chains_rules(s: &mut Socket) {
    commit(s, |b| {
        b.add(&Table::new(F, T), 0);
        let mut input = Chain::base(F, T, "INPUT", "filter", hook::LOCAL_IN, 0, POLICY_DROP);
        input.counters = Some((1500, 3));
        input.userdata = Some(b"builtin".to_vec());
        b.add(&input, 0);
        b.add(
            &Chain::base(F, T, "OUTPUT", "filter", hook::LOCAL_OUT, 0, POLICY_ACCEPT),
            0,
        );
        b.add(&Chain::new(F, T, "user"), 0);
        b.add(&Chain::new(F, T, "old"), 0);
        let id =
            b"\x00\x00\x00\x00\x00\x00\x00\x01-A INPUT -s 10.0.0.1/32 -p tcp --dport 22 -j ACCEPT";
        b.add_rule(
            &ssh_rule("INPUT", [10, 0, 0, 1], Verdict::Accept, id),
            Placement::Append,
            false,
            0,
        );
        let r = ssh_rule(
            "INPUT",
            [10, 0, 0, 2],
            Verdict::Jump("user".into()),
            b"\"quoted\" \\",
        );
        b.add_rule(&r, Placement::Append, false, 0);
        b.add_rule(
            &Rule::new(F, T, "user", vec![Expr::verdict(Verdict::Return)]),
            Placement::Append,
            false,
            0,
        );
    });
    // Replace the first rule, rename a chain, drop a rule.
    commit(s, |b| {
        let r = Rule {
            handle: Some(6),
            ..ssh_rule("INPUT", [10, 0, 0, 9], Verdict::Drop, b"replaced")
        };
        b.add_rule(&r, Placement::Replace, false, 0);
        b.add(
            &Chain {
                handle: Some(4),
                ..Chain::new(F, T, "renamed")
            },
            0,
        );
        b.delete(&Rule::key(F, T, "user", Some(7)), 0);
    });
}

#[test]
fn dump_of_tables_chains_rules() {
    let k = Kernel::new();
    tables_chains_rules(&mut k.socket());
    golden("tables_chains_rules", &k.text());
}

fn set(name: &str, id: u32, flags: u32) -> Set {
    Set {
        flags: Some(flags),
        key_type: Some(7),
        key_len: Some(4),
        id: Some(id),
        ..Set::new(F, T, name)
    }
}

#[test]
fn dump_of_sets_and_maps() {
    let k = Kernel::new();
    let mut s = k.socket();
    commit(&mut s, |b| {
        b.add(&Table::new(F, T), 0);
        b.add(
            &Chain::base(F, T, "INPUT", "filter", hook::LOCAL_IN, 0, POLICY_ACCEPT),
            0,
        );
        b.add(&Chain::new(F, T, "a"), 0);
        // A named set with a counter per element.
        b.add(
            &Set {
                exprs: vec![Expr::counter()],
                userdata: Some(b"run 1".to_vec()),
                ..set("s", 1, 0)
            },
            0,
        );
        let mut e = SetElem::key(&[10, 0, 0, 1]);
        e.userdata = Some(b"-A INPUT -s 10.0.0.1/32".to_vec());
        let mut f = SetElem::key(&[10, 0, 0, 2]);
        f.exprs = vec![Expr::Counter {
            bytes: 84,
            packets: 1,
        }];
        b.add(&SetElems::new(F, T, "s", vec![e, f]), 0);
        // A verdict map.
        b.add(
            &Set {
                data_type: Some(DATA_TYPE_VERDICT),
                ..set("m", 2, flags::MAP)
            },
            0,
        );
        let mut j = SetElem::key(&[10, 0, 0, 3]);
        j.data = Some(Data::Verdict(Verdict::Jump("a".into())));
        let mut d = SetElem::key(&[10, 0, 0, 4]);
        d.data = Some(Data::Verdict(Verdict::Drop));
        b.add(&SetElems::new(F, T, "m", vec![j, d]), 0);
        // An interval set: 10.1.0.0/16 as a start and an end marker.
        b.add(&set("r", 3, flags::INTERVAL), 0);
        let mut end = SetElem::key(&[10, 2, 0, 0]);
        end.flags = Some(F_INTERVAL_END);
        b.add(
            &SetElems::new(F, T, "r", vec![SetElem::key(&[10, 1, 0, 0]), end]),
            0,
        );
        // An anonymous set, by set id, bound to its rule.
        b.add(&set("__set%d", 4, flags::ANONYMOUS | flags::CONSTANT), 0);
        b.add(
            &SetElems {
                set_id: Some(4),
                ..SetElems::new(F, T, "__set%d", vec![SetElem::key(&[192, 168, 0, 1])])
            },
            0,
        );
        let lookup = |set: &str, id: Option<u32>, dreg: Option<u32>| {
            vec![
                Expr::load(base::NETWORK, 12, 4),
                Expr::Lookup {
                    set: set.into(),
                    set_id: id,
                    sreg: reg::R1,
                    dreg,
                    flags: None,
                },
            ]
        };
        for (set, id, dreg) in [
            ("s", None, None),
            ("m", None, Some(reg::VERDICT)),
            ("r", None, None),
            ("__set%d", Some(4), None),
        ] {
            b.add_rule(
                &Rule::new(F, T, "INPUT", lookup(set, id, dreg)),
                Placement::Append,
                false,
                0,
            );
        }
    });
    golden("sets_and_maps", &k.text());
}

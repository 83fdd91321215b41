//! Kernel round trips, each in a fresh network namespace (skipped, with a
//! printed reason, when not root or when unshare fails).
//!
//! The big-batch test is ignored by default; its size comes from
//! `NFK_BIG_RULES` (default 200000) and `NFK_BIG_DUMP=0` skips its dumps:
//! `cargo test --release -p nfk-nft --test kernel -- --ignored --nocapture`.

mod common;

use std::time::Instant;

use nft::batch::Placement;
use nft::chain::{hook, POLICY_ACCEPT};
use nft::expr::{base, meta, reg, CmpOp};
use nft::set::{flags, DATA_TYPE_VERDICT};
use nft::{Chain, Data, Expr, Family, Rule, Set, SetElem, SetElems, Socket, Table, Verdict};

const F: Family = Family::Ipv4;

fn saddr_rule(chain: &str, addr: [u8; 4], verdict: Verdict, userdata: &[u8]) -> Rule {
    Rule {
        userdata: Some(userdata.to_vec()),
        ..Rule::new(
            F,
            "nfk",
            chain,
            vec![
                Expr::load(base::NETWORK, 12, 4),
                Expr::Cmp {
                    sreg: reg::R1,
                    op: CmpOp::Eq,
                    data: addr.to_vec(),
                },
                Expr::Meta {
                    key: meta::L4PROTO,
                    dreg: reg::R1,
                },
                Expr::cmp_eq(&[6]),
                Expr::load(base::TRANSPORT, 2, 2),
                Expr::cmp_eq(&22u16.to_be_bytes()),
                Expr::counter(),
                Expr::verdict(verdict),
            ],
        )
    }
}

fn setup(b: &mut nft::Batch) {
    b.add(&Table::new(F, "nfk"), 0);
    let mut input = Chain::base(
        F,
        "nfk",
        "INPUT",
        "filter",
        hook::LOCAL_IN,
        0,
        POLICY_ACCEPT,
    );
    input.userdata = Some(b"builtin".to_vec());
    b.add(&input, 0);
    b.add(&Chain::new(F, "nfk", "user"), 0);
}

fn dump_chain(s: &mut Socket, chain: &str) -> Vec<Rule> {
    let mut v = Vec::new();
    s.rules(F, Some("nfk"), Some(chain), |r| {
        v.push(r.to_rule()?);
        Ok(())
    })
    .unwrap();
    v
}

#[test]
fn tables_chains_rules_round_trip() {
    common::in_netns(|| {
        let mut s = Socket::open().unwrap();
        let mut b = s.batch(None);
        setup(&mut b);
        let a = saddr_rule("INPUT", [10, 0, 0, 1], Verdict::Accept, b"A");
        let bb = saddr_rule("INPUT", [10, 0, 0, 2], Verdict::Jump("user".into()), b"B");
        b.add_rule(&a, Placement::Append, true, 1);
        b.add_rule(&bb, Placement::Append, true, 2);
        let rep = s.commit(&mut b).unwrap();
        assert!(rep.outcome.is_ok(), "{rep:?}");
        let ha = rep
            .outcome
            .echoes
            .iter()
            .find(|e| e.tag == 1)
            .unwrap()
            .handle
            .unwrap();
        let hb = rep
            .outcome
            .echoes
            .iter()
            .find(|e| e.tag == 2)
            .unwrap()
            .handle
            .unwrap();

        // Insert C before B and D after A.
        let mut b = s.batch(None);
        let c = Rule {
            position: Some(hb),
            ..saddr_rule("INPUT", [10, 0, 0, 3], Verdict::Drop, b"C")
        };
        let d = Rule {
            position: Some(ha),
            ..saddr_rule("INPUT", [10, 0, 0, 4], Verdict::Return, b"D")
        };
        b.add_rule(&c, Placement::Insert, false, 3);
        b.add_rule(&d, Placement::Append, false, 4);
        assert!(s.commit(&mut b).unwrap().outcome.is_ok());

        let got = dump_chain(&mut s, "INPUT");
        let order: Vec<&[u8]> = got.iter().map(|r| r.userdata.as_deref().unwrap()).collect();
        assert_eq!(order, [b"A", b"D", b"C", b"B"]);
        for (r, want) in got.iter().zip([&a, &d, &c, &bb]) {
            assert_eq!(r.exprs, want.exprs);
            assert_eq!((r.table.as_str(), r.chain.as_str()), ("nfk", "INPUT"));
        }
        assert_eq!(got[0].handle, Some(ha));

        let chains = s.chains(F, Some("nfk")).unwrap();
        let input = chains.iter().find(|c| c.name == "INPUT").unwrap();
        assert_eq!(input.hook.as_ref().unwrap().num, hook::LOCAL_IN);
        assert_eq!(input.policy, Some(POLICY_ACCEPT));
        assert_eq!(input.chain_type.as_deref(), Some("filter"));
        assert_eq!(input.userdata.as_deref(), Some(&b"builtin"[..]));
        assert!(chains.iter().any(|c| c.name == "user" && c.hook.is_none()));
        assert_eq!(s.tables(F).unwrap()[0].name, "nfk");

        // Delete one rule by handle, then flush the chain.
        let mut b = s.batch(None);
        b.delete(&Rule::key(F, "nfk", "INPUT", Some(ha)), 5);
        assert!(s.commit(&mut b).unwrap().outcome.is_ok());
        assert_eq!(dump_chain(&mut s, "INPUT").len(), 3);
        let mut b = s.batch(None);
        b.delete(&Rule::key(F, "nfk", "INPUT", None), 6);
        assert!(s.commit(&mut b).unwrap().outcome.is_ok());
        assert!(dump_chain(&mut s, "INPUT").is_empty());
        let mut b = s.batch(None);
        b.delete(&Chain::new(F, "nfk", "user"), 7);
        assert!(s.commit(&mut b).unwrap().outcome.is_ok());
    });
}

#[test]
fn bad_message_maps_to_tag_and_nothing_applies() {
    common::in_netns(|| {
        let mut s = Socket::open().unwrap();
        let mut b = s.batch(None);
        setup(&mut b);
        b.add_rule(
            &saddr_rule("INPUT", [1, 1, 1, 1], Verdict::Accept, b"ok"),
            Placement::Append,
            false,
            10,
        );
        b.add_rule(
            &saddr_rule("missing", [1, 1, 1, 2], Verdict::Accept, b"bad"),
            Placement::Append,
            false,
            42,
        );
        b.add_rule(
            &saddr_rule(
                "INPUT",
                [1, 1, 1, 3],
                Verdict::Jump("nowhere".into()),
                b"bad2",
            ),
            Placement::Append,
            false,
            43,
        );
        b.add_rule(
            &saddr_rule("INPUT", [1, 1, 1, 4], Verdict::Accept, b"ok"),
            Placement::Append,
            false,
            11,
        );
        let rep = s.commit(&mut b).unwrap();
        eprintln!("errors: {:?}", rep.outcome.errors);
        assert!(!rep.outcome.committed);
        let tags: Vec<_> = rep.outcome.errors.iter().map(|e| (e.tag, e.code)).collect();
        assert_eq!(tags, [(Some(42), -libc::ENOENT), (Some(43), -libc::ENOENT)]);
        assert!(s.tables(F).unwrap().is_empty());

        // A stale generation id is refused on the begin message.
        let gen = s.gen().unwrap().id;
        let mut b = s.batch(Some(gen.wrapping_add(7)));
        setup(&mut b);
        let rep = s.commit(&mut b).unwrap();
        assert_eq!(rep.outcome.errors.len(), 1);
        assert_eq!(
            (rep.outcome.errors[0].tag, rep.outcome.errors[0].code),
            (None, -libc::ERESTART)
        );
        let mut b = s.batch(Some(gen));
        setup(&mut b);
        assert!(s.commit(&mut b).unwrap().outcome.is_ok());
        assert_eq!(s.gen().unwrap().id, gen.wrapping_add(1));
    });
}

#[test]
fn sets_maps_and_elements() {
    common::in_netns(|| {
        let mut s = Socket::open().unwrap();
        let mut b = s.batch(None);
        setup(&mut b);
        let blk = Set {
            flags: Some(flags::INTERVAL),
            key_type: Some(7),
            key_len: Some(4),
            id: Some(1),
            userdata: Some(b"blocklist".to_vec()),
            exprs: vec![Expr::counter()],
            ..Set::new(F, "nfk", "blk")
        };
        let vm = Set {
            flags: Some(flags::MAP),
            key_type: Some(7),
            key_len: Some(4),
            data_type: Some(DATA_TYPE_VERDICT),
            id: Some(2),
            ..Set::new(F, "nfk", "vm")
        };
        let concat = Set {
            flags: Some(flags::INTERVAL | flags::CONCAT),
            key_type: Some(7 << 6 | 13),
            key_len: Some(8),
            concat: vec![4, 2],
            id: Some(3),
            ..Set::new(F, "nfk", "pairs")
        };
        b.add(&blk, 1);
        b.add(&vm, 2);
        b.add(&concat, 3);
        let counter = |p| Expr::Counter {
            bytes: 0,
            packets: p,
        };
        let elems = vec![
            SetElem {
                exprs: vec![counter(0)],
                ..SetElem::key(&[10, 0, 0, 0])
            },
            SetElem {
                flags: Some(1),
                ..SetElem::key(&[10, 0, 1, 0])
            },
        ];
        b.add(&SetElems::new(F, "nfk", "blk", elems), 4);
        let vmel = vec![
            SetElem {
                data: Some(Data::Verdict(Verdict::Jump("user".into()))),
                ..SetElem::key(&[1, 2, 3, 4])
            },
            SetElem {
                data: Some(Data::Verdict(Verdict::Drop)),
                ..SetElem::key(&[1, 2, 3, 5])
            },
        ];
        b.add(&SetElems::new(F, "nfk", "vm", vmel.clone()), 5);
        let pair = SetElem {
            key_end: Some(vec![10, 0, 0, 9, 0, 80, 0, 0]),
            ..SetElem::key(&[10, 0, 0, 1, 0, 80, 0, 0])
        };
        b.add(&SetElems::new(F, "nfk", "pairs", vec![pair.clone()]), 6);
        let lookup = |set: &str, dreg| Rule {
            exprs: vec![
                Expr::load(base::NETWORK, 12, 4),
                Expr::Lookup {
                    set: set.into(),
                    set_id: None,
                    sreg: reg::R1,
                    dreg,
                    flags: Some(0),
                },
            ],
            ..Rule::new(F, "nfk", "INPUT", vec![])
        };
        let mut r1 = lookup("blk", None);
        r1.exprs.push(Expr::verdict(Verdict::Drop));
        b.add_rule(&r1, Placement::Append, false, 7);
        b.add_rule(
            &lookup("vm", Some(reg::VERDICT)),
            Placement::Append,
            false,
            8,
        );
        let rep = s.commit(&mut b).unwrap();
        assert!(rep.outcome.is_ok(), "{rep:?}");

        let sets = s.sets(F, Some("nfk")).unwrap();
        let got = sets.iter().find(|x| x.name == "blk").unwrap();
        assert_eq!(
            (got.flags, got.key_len, &got.userdata),
            (blk.flags, blk.key_len, &blk.userdata)
        );
        assert_eq!(got.exprs, blk.exprs);
        let got = sets.iter().find(|x| x.name == "pairs").unwrap();
        assert_eq!(got.concat, vec![4, 2]);
        let got = sets.iter().find(|x| x.name == "vm").unwrap();
        assert_eq!(got.data_type, Some(DATA_TYPE_VERDICT));

        let e = s.set_elems(F, "nfk", "vm").unwrap();
        assert_eq!(e.len(), 2);
        for want in &vmel {
            assert!(
                e.iter().any(|g| g.key == want.key && g.data == want.data),
                "{e:?}"
            );
        }
        let e = s.set_elems(F, "nfk", "blk").unwrap();
        assert!(
            e.iter()
                .any(|g| g.key.as_deref() == Some(&[10, 0, 0, 0][..]) && g.exprs == [counter(0)]),
            "{e:?}"
        );
        let e = s.set_elems(F, "nfk", "pairs").unwrap();
        assert!(
            e.iter()
                .any(|g| g.key == pair.key && g.key_end == pair.key_end),
            "{e:?}"
        );
        let rules = dump_chain(&mut s, "INPUT");
        assert_eq!(rules[0].exprs, r1.exprs);

        // Delete one element, then the rules and the set.
        let mut b = s.batch(None);
        b.delete(
            &SetElems::new(F, "nfk", "vm", vec![SetElem::key(&[1, 2, 3, 5])]),
            1,
        );
        b.delete(&Rule::key(F, "nfk", "INPUT", None), 2);
        b.delete(&Set::new(F, "nfk", "blk"), 3);
        assert!(s.commit(&mut b).unwrap().outcome.is_ok());
        assert_eq!(s.set_elems(F, "nfk", "vm").unwrap().len(), 1);
    });
}

#[test]
#[ignore = "slow: cargo test --release -p nfk-nft --test kernel -- --ignored --nocapture"]
fn big_batch_one_transaction() {
    let n: u32 = std::env::var("NFK_BIG_RULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    common::in_netns(move || {
        let mut s = Socket::open().unwrap();
        let t0 = Instant::now();
        let mut b = s.batch(None);
        setup(&mut b);
        for i in 0..n {
            let ud = format!(
                "-A INPUT -s 10.{}.{}.{} -p tcp --dport 22 -j ACCEPT",
                i >> 16,
                (i >> 8) & 255,
                i & 255
            );
            let r = saddr_rule(
                "user",
                (0x0a00_0000 | i).to_be_bytes(),
                Verdict::Accept,
                ud.as_bytes(),
            );
            b.add_rule(&r, Placement::Append, false, i);
        }
        let encode = t0.elapsed();
        let bytes = b.finish().len();
        let t1 = Instant::now();
        let rep = s.commit(&mut b).unwrap();
        let commit = t1.elapsed();
        assert!(rep.outcome.is_ok(), "{:?}", rep.outcome.errors.first());
        drop(b);
        if std::env::var("NFK_BIG_DUMP").as_deref() == Ok("0") {
            eprintln!(
                "BIG n={n} batch={:.1} MB encode={encode:?} commit={commit:?} peak_rss={} MiB",
                bytes as f64 / 1e6,
                common::peak_rss_kib() / 1024
            );
            return;
        }
        let t2 = Instant::now();
        let mut count = 0u32;
        let mut ud_bytes = 0usize;
        s.rules(F, Some("nfk"), Some("user"), |r| {
            count += 1;
            ud_bytes += r.userdata.map_or(0, |u| u.len());
            Ok(())
        })
        .unwrap();
        let dump = t2.elapsed();
        assert_eq!(count, n);
        let t3 = Instant::now();
        let mut parsed = 0usize;
        s.rules(F, Some("nfk"), Some("user"), |r| {
            parsed += r.to_rule()?.exprs.len();
            Ok(())
        })
        .unwrap();
        let dump_parse = t3.elapsed();
        eprintln!(
            "BIG n={n} batch={:.1} MB encode={encode:?} commit={commit:?} dump(lazy)={dump:?} \
             dump(full parse)={dump_parse:?} userdata={ud_bytes} exprs={parsed} peak_rss={} MiB",
            bytes as f64 / 1e6,
            common::peak_rss_kib() / 1024
        );
    });
}

//! Stateful objects and the newer expression kinds in the kernel (each test
//! in a fresh network namespace; skipped, with a printed reason, when not
//! root): ct helper and ct timeout objects are created, dumped back,
//! referred to by `objref`, counted in their use and refused deletion while
//! referred to; a secmark object needs a security module that knows its
//! context; `dup` and the TCP option reset load and dump back unchanged.

mod common;

use nft::batch::Placement;
use nft::chain::{hook, POLICY_ACCEPT};
use nft::expr::objref::{obj_type, Obj, ObjData};
use nft::expr::{exthdr, reg, Dup, ExthdrStrip, Objref};
use nft::{Chain, Data, Expr, Family, Rule, Socket, Table};

const F: Family = Family::Ipv4;

/// `CTA_TIMEOUT_TCP_ESTABLISHED`.
const TCP_ESTABLISHED: u16 = 3;

fn setup(b: &mut nft::Batch) {
    b.add(&Table::new(F, "o"), 0);
    b.add(
        &Chain::base(
            F,
            "o",
            "pre",
            "filter",
            hook::PRE_ROUTING,
            -100,
            POLICY_ACCEPT,
        ),
        0,
    );
}

fn objref(ty: u32, name: &str) -> Expr {
    Expr::Objref(Objref {
        ty,
        name: name.into(),
    })
}

fn rule_exprs(s: &mut Socket) -> Vec<(u64, Vec<Expr>)> {
    let mut v = Vec::new();
    s.rules(F, Some("o"), Some("pre"), |r| {
        let r = r.to_rule()?;
        v.push((r.handle.unwrap_or(0), r.exprs));
        Ok(())
    })
    .unwrap();
    v
}

#[test]
fn ct_helper_and_timeout_objects() {
    common::in_netns(|| {
        let mut s = Socket::open().unwrap();
        let helper = Obj::new(
            F,
            "o",
            "__nfk_cthelper_ftp_tcp",
            ObjData::CtHelper {
                name: "ftp".into(),
                l3proto: Some(2),
                l4proto: 6,
            },
        );
        let timeout = Obj::new(
            F,
            "o",
            "to",
            ObjData::CtTimeout {
                l3proto: 2,
                l4proto: 6,
                policy: vec![(TCP_ESTABLISHED, 300)],
            },
        );
        let mut b = s.batch(None);
        setup(&mut b);
        b.add(&helper, 1);
        b.add(&timeout, 2);
        let exprs = vec![
            objref(obj_type::CT_HELPER, &helper.name),
            objref(obj_type::CT_TIMEOUT, "to"),
        ];
        b.add_rule(
            &Rule::new(F, "o", "pre", exprs.clone()),
            Placement::Append,
            false,
            3,
        );
        let rep = s.commit(&mut b).unwrap();
        assert!(rep.outcome.is_ok(), "{:?}", rep.outcome.errors);

        let mut objs = s.objects(F, Some("o")).unwrap();
        objs.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(objs.len(), 2, "{objs:?}");
        assert_eq!(objs[0].data, helper.data);
        assert_eq!(objs[0].use_count, Some(1));
        let ObjData::CtTimeout {
            l3proto,
            l4proto,
            policy,
        } = &objs[1].data
        else {
            panic!("not a timeout: {:?}", objs[1]);
        };
        assert_eq!((*l3proto, *l4proto), (2, 6));
        // The kernel dumps every state's timeout; the one given is there.
        assert!(policy.contains(&(TCP_ESTABLISHED, 300)), "{policy:?}");
        assert_eq!(objs[1].use_count, Some(1));
        let rules = rule_exprs(&mut s);
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].1, exprs);
        // One object by name.
        let got = s.get(&helper).unwrap().expect("helper by name");
        assert_eq!(got.data, helper.data);

        // In use: the kernel refuses the delete.
        let mut b = s.batch(None);
        b.delete(&helper, 4);
        let rep = s.commit(&mut b).unwrap();
        let codes: Vec<_> = rep.outcome.errors.iter().map(|e| e.code).collect();
        assert_eq!(codes, [-libc::EBUSY]);

        // Without the rule both go.
        let mut b = s.batch(None);
        b.delete(&Rule::key(F, "o", "pre", Some(rules[0].0)), 5);
        b.delete(&helper, 6);
        b.delete(&timeout, 7);
        let rep = s.commit(&mut b).unwrap();
        assert!(rep.outcome.is_ok(), "{:?}", rep.outcome.errors);
        assert!(s.objects(F, Some("o")).unwrap().is_empty());
        assert_eq!(s.get(&helper).unwrap(), None);
    });
}

/// A secmark object's context must be one the running security module
/// maps to a secid: without one the kernel refuses the object (this is
/// the case on a machine without SELinux, where the test checks the
/// refusal); with one it must round-trip.
#[test]
fn secmark_object() {
    common::in_netns(|| {
        let mut s = Socket::open().unwrap();
        let o = Obj::new(
            F,
            "o",
            "__nfk_secmark_0",
            ObjData::Secmark {
                ctx: "system_u:object_r:ssh_packet_t:s0".into(),
            },
        );
        let mut b = s.batch(None);
        setup(&mut b);
        b.add(&o, 1);
        let rep = s.commit(&mut b).unwrap();
        let selinux = std::path::Path::new("/sys/fs/selinux/enforce").exists();
        if rep.outcome.is_ok() {
            let got = s.get(&o).unwrap().expect("the object");
            assert_eq!(got.data, o.data);
        } else {
            assert!(!selinux, "refused with SELinux: {:?}", rep.outcome.errors);
            let codes: Vec<_> = rep.outcome.errors.iter().map(|e| e.code).collect();
            eprintln!("secmark object without a security module: {codes:?}");
            assert_eq!(rep.outcome.errors.len(), 1);
            assert_eq!(rep.outcome.errors[0].tag, Some(1));
        }
    });
}

#[test]
fn dup_and_tcp_option_reset() {
    common::in_netns(|| {
        let mut s = Socket::open().unwrap();
        let exprs = vec![
            Expr::Immediate {
                dreg: reg::R1,
                data: Data::Value(vec![10, 0, 0, 2]),
            },
            Expr::Immediate {
                dreg: reg::R2,
                data: Data::Value(1u32.to_ne_bytes().to_vec()),
            },
            Expr::Dup(Dup {
                sreg_addr: reg::R1,
                sreg_dev: Some(reg::R2),
            }),
            Expr::Dup(Dup {
                sreg_addr: reg::R1,
                sreg_dev: None,
            }),
            Expr::ExthdrStrip(ExthdrStrip {
                op: exthdr::OP_TCPOPT,
                ty: 8,
            }),
        ];
        let mut b = s.batch(None);
        setup(&mut b);
        b.add_rule(
            &Rule::new(F, "o", "pre", exprs.clone()),
            Placement::Append,
            false,
            1,
        );
        let rep = s.commit(&mut b).unwrap();
        assert!(rep.outcome.is_ok(), "{:?}", rep.outcome.errors);
        let rules = rule_exprs(&mut s);
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].1, exprs);
    });
}

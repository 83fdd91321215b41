//! Codec tests without the kernel: byte goldens per message kind (rendered
//! as annotated rows), emit→parse round trips for every type, and a
//! robustness test feeding random and mutated bytes to every parser.

use nft::batch::Placement;
use nft::expr::objref::{obj_type, Obj, ObjData};
use nft::expr::{
    base, byteorder, ct, exthdr, fib, meta, reg, rt, Byteorder, CmpOp, Dup, Exthdr, ExthdrSet,
    ExthdrStrip, Fib, Objref, Rt, Shift,
};
use nft::netlink::{Attrs, Msgs, Writer};
use nft::{
    Batch, Chain, Data, Expr, Family, Gen, Object, Rule, RuleRef, Set, SetElem, SetElems, Table,
    Verdict,
};

mod common;

use common::golden::{golden, one};

const F: Family = Family::Ipv4;

#[test]
fn golden_table() {
    let t = Table {
        flags: Some(0),
        userdata: Some(vec![0xab]),
        ..Table::new(F, "nfk")
    };
    // NEWTABLE (0x0a00), REQUEST|CREATE; NAME "nfk\0", FLAGS 0 (be32), USERDATA.
    golden(
        &one(&t),
        "msg len=44 type=0x0a00 flags=0x0401 seq=1 family=2 res_id=0000
        |    8    1 6e 66 6b 00
        |    8    2 00 00 00 00
        |    5    6 ab
        ",
    );
}

#[test]
fn golden_base_chain() {
    let c = Chain::base(F, "t", "INPUT", "filter", 1, -150, 0);
    // HOOK nest: HOOKNUM 1, PRIORITY -150 as be32 (ff ff ff 6a); POLICY drop.
    golden(
        &one(&c),
        "msg len=80 type=0x0a03 flags=0x0401 seq=1 family=2 res_id=0000
        |    6    1 74 00
        |   10    3 49 4e 50 55 54 00
        |   20 nest 4
        |      8    1 00 00 00 01
        |      8    2 ff ff ff 6a
        |    8    5 00 00 00 00
        |   11    7 66 69 6c 74 65 72 00
        ",
    );
}

#[test]
fn golden_rule() {
    let r = Rule {
        position: Some(7),
        userdata: Some(b"x".to_vec()),
        ..Rule::new(
            F,
            "t",
            "c",
            vec![Expr::cmp_eq(&[6]), Expr::verdict(Verdict::Jump("u".into()))],
        )
    };
    // EXPRESSIONS: cmp (sreg 1, op eq, data value 06), immediate (dreg 0,
    // verdict code -3 = jump, chain "u"); POSITION 7 (be64); USERDATA "x".
    golden(
        &one(&r),
        "msg len=160 type=0x0a06 flags=0x0401 seq=1 family=2 res_id=0000
        |    6    1 74 00
        |    6    2 63 00
        |  104 nest 4
        |     44 nest 1
        |        8    1 63 6d 70 00
        |       32 nest 2
        |          8    1 00 00 00 01
        |          8    2 00 00 00 00
        |         12 nest 3
        |            5    1 06
        |     56 nest 1
        |       14    1 69 6d 6d 65 64 69 61 74 65 00
        |       36 nest 2
        |          8    1 00 00 00 00
        |         24 nest 2
        |           20 nest 2
        |              8    1 ff ff ff fd
        |              6    2 75 00
        |   12    6 00 00 00 00 00 00 00 07
        |    5    7 78
        ",
    );
}

#[test]
fn golden_set_and_elems() {
    let s = Set {
        flags: Some(nft::set::flags::INTERVAL | nft::set::flags::CONCAT),
        key_len: Some(8),
        concat: vec![4, 2],
        id: Some(9),
        ..Set::new(F, "t", "s")
    };
    // DESC nest: CONCAT nest of two LIST_ELEM { FIELD_LEN }.
    golden(
        &one(&s),
        "msg len=92 type=0x0a09 flags=0x0401 seq=1 family=2 res_id=0000
        |    6    1 74 00
        |    6    2 73 00
        |    8    3 00 00 00 84
        |    8    5 00 00 00 08
        |   32 nest 9
        |     28 nest 2
        |       12 nest 1
        |          8    1 00 00 00 04
        |       12 nest 1
        |          8    1 00 00 00 02
        |    8   10 00 00 00 09
        ",
    );
    let e = SetElems::new(
        F,
        "t",
        "m",
        vec![SetElem {
            data: Some(Data::Verdict(Verdict::Drop)),
            ..SetElem::key(&[1, 2, 3, 4])
        }],
    );
    // ELEMENTS { LIST_ELEM { KEY { VALUE }, DATA { VERDICT { CODE 0 } } } }.
    golden(
        &one(&e),
        "msg len=72 type=0x0a0c flags=0x0401 seq=1 family=2 res_id=0000
        |    6    1 74 00
        |    6    2 6d 00
        |   36 nest 3
        |     32 nest 1
        |       12 nest 1
        |          8    1 01 02 03 04
        |       16 nest 2
        |         12 nest 2
        |            8    1 00 00 00 00
        ",
    );
}

#[test]
fn golden_batch_frame_and_delete() {
    let mut b = Batch::new(10, Some(0x01020304));
    b.delete(&Rule::key(F, "t", "c", Some(5)), 0);
    // BEGIN (0x10, res_id 000a = nf_tables, GENID), DELRULE (0x0a08) by
    // handle, END (0x11) with REQUEST|ACK.
    golden(
        b.finish(),
        "msg len=28 type=0x0010 flags=0x0001 seq=10 family=0 res_id=000a
        |    8    1 01 02 03 04
        |msg len=48 type=0x0a08 flags=0x0001 seq=11 family=2 res_id=0000
        |    6    1 74 00
        |    6    2 63 00
        |   12    3 00 00 00 00 00 00 00 05
        |msg len=20 type=0x0011 flags=0x0005 seq=12 family=0 res_id=000a
        ",
    );
    assert_eq!(
        (b.tag_of(11), b.tag_of(10), b.tag_of(12)),
        (Some(0), None, None)
    );
}

fn all_exprs() -> Vec<Expr> {
    vec![
        Expr::Immediate {
            dreg: reg::R1,
            data: Data::Value(vec![1, 2]),
        },
        Expr::verdict(Verdict::Accept),
        Expr::verdict(Verdict::Drop),
        Expr::verdict(Verdict::Return),
        Expr::verdict(Verdict::Goto("g".into())),
        Expr::Payload {
            dreg: reg::R1,
            base: base::NETWORK,
            offset: 16,
            len: 4,
        },
        Expr::PayloadSet {
            sreg: reg::R1,
            base: base::TRANSPORT,
            offset: 0,
            len: 2,
            csum_type: Some(1),
            csum_offset: Some(16),
            csum_flags: Some(1),
        },
        Expr::Cmp {
            sreg: reg::R1,
            op: CmpOp::Gte,
            data: vec![0, 80],
        },
        Expr::Range {
            sreg: reg::R1,
            neq: true,
            from: vec![0, 1],
            to: vec![0, 9],
        },
        Expr::Bitwise {
            sreg: reg::R1,
            dreg: reg::R1,
            len: 4,
            mask: vec![255, 255, 0, 0],
            xor: vec![0; 4],
        },
        Expr::Meta {
            key: meta::IIFNAME,
            dreg: reg::R1,
        },
        Expr::MetaSet {
            key: meta::MARK,
            sreg: reg::R1,
        },
        Expr::Ct {
            key: ct::STATE,
            dreg: reg::R1,
            dir: None,
        },
        Expr::Ct {
            key: ct::PROTO_DST,
            dreg: reg::R1,
            dir: Some(1),
        },
        Expr::CtSet {
            key: ct::MARK,
            sreg: reg::R1,
            dir: None,
        },
        Expr::Lookup {
            set: "s".into(),
            set_id: Some(3),
            sreg: reg::R1,
            dreg: Some(0),
            flags: Some(1),
        },
        Expr::Counter {
            bytes: 10,
            packets: 2,
        },
        Expr::Log {
            group: Some(2),
            prefix: Some("p: ".into()),
            snaplen: Some(64),
            qthreshold: Some(1),
            level: Some(4),
            flags: Some(0),
        },
        Expr::Reject {
            ty: 0,
            code: Some(3),
        },
        Expr::Nat {
            ty: 1,
            family: 2,
            reg_addr_min: Some(1),
            reg_addr_max: None,
            reg_proto_min: Some(2),
            reg_proto_max: None,
            flags: Some(2),
        },
        Expr::Masq {
            flags: None,
            reg_proto_min: Some(1),
            reg_proto_max: Some(2),
        },
        Expr::Redir {
            reg_proto_min: Some(1),
            reg_proto_max: None,
            flags: None,
        },
        Expr::Limit {
            rate: 10,
            unit: 60,
            burst: 5,
            ty: 0,
            flags: 1,
        },
        Expr::Numgen {
            dreg: reg::R1,
            modulus: 3,
            ty: 0,
            offset: Some(1),
        },
        Expr::Quota {
            bytes: 1000,
            flags: 1,
            consumed: Some(3),
        },
        Expr::Notrack,
        Expr::Byteorder(Byteorder {
            sreg: reg::R1,
            dreg: reg::R2,
            op: byteorder::HTON,
            len: 4,
            size: 4,
        }),
        Expr::Shift(Shift {
            sreg: reg::R1,
            dreg: reg::R1,
            len: 4,
            right: true,
            amount: 5,
        }),
        Expr::Shift(Shift {
            sreg: reg::R32_00,
            dreg: reg::R1,
            len: 4,
            right: false,
            amount: 31,
        }),
        Expr::Exthdr(Exthdr {
            dreg: reg::R1,
            op: exthdr::OP_TCPOPT,
            ty: 23,
            offset: 0,
            len: 1,
            flags: exthdr::F_PRESENT,
        }),
        Expr::Exthdr(Exthdr {
            dreg: reg::R1,
            op: exthdr::OP_IPV6,
            ty: 44,
            offset: 4,
            len: 4,
            flags: 0,
        }),
        Expr::ExthdrSet(ExthdrSet {
            sreg: reg::R1,
            op: exthdr::OP_TCPOPT,
            ty: 2,
            offset: 2,
            len: 2,
        }),
        Expr::ExthdrStrip(ExthdrStrip {
            op: exthdr::OP_TCPOPT,
            ty: 8,
        }),
        Expr::Dup(Dup {
            sreg_addr: reg::R1,
            sreg_dev: None,
        }),
        Expr::Dup(Dup {
            sreg_addr: reg::R1,
            sreg_dev: Some(reg::R2),
        }),
        Expr::Fib(Fib {
            dreg: reg::R1,
            result: fib::RESULT_OIF,
            flags: fib::F_SADDR | fib::F_IIF | fib::F_MARK,
        }),
        Expr::Fib(Fib {
            dreg: reg::R1,
            result: fib::RESULT_ADDRTYPE,
            flags: fib::F_DADDR,
        }),
        Expr::Rt(Rt {
            dreg: reg::R1,
            key: rt::TCPMSS,
        }),
        Expr::Objref(Objref {
            ty: obj_type::CT_HELPER,
            name: "ftp-21".into(),
        }),
        Expr::Match {
            name: "recent".into(),
            rev: 1,
            info: vec![7; 16],
        },
        Expr::Target {
            name: "CHECKSUM".into(),
            rev: 0,
            info: vec![1, 0, 0, 0, 0, 0, 0, 0],
        },
        Expr::Other {
            name: "xt".into(),
            data: vec![8, 0, 1, 0, 0, 0, 0, 1],
        },
    ]
}

fn round_trip<O: Object + PartialEq + std::fmt::Debug>(obj: &O) {
    let bytes = one(obj);
    let m = Msgs::new(&bytes).next().unwrap().unwrap();
    assert_eq!(&O::parse_msg(&m).unwrap(), obj);
}

#[test]
fn round_trips() {
    round_trip(&Table {
        flags: Some(1),
        handle: Some(3),
        userdata: Some(vec![1, 2, 3]),
        ..Table::new(F, "t")
    });
    let mut c = Chain::base(Family::Inet, "t", "c", "nat", 0, -100, 1);
    c.counters = Some((100, 2));
    c.flags = Some(1);
    c.handle = Some(4);
    c.id = Some(2);
    c.userdata = Some(b"u".to_vec());
    c.hook.as_mut().unwrap().dev = Some("eth0".into());
    round_trip(&c);
    round_trip(&Chain::new(F, "t", "user"));
    let objs = [
        ObjData::CtHelper {
            name: "ftp".into(),
            l3proto: Some(2),
            l4proto: 6,
        },
        ObjData::CtHelper {
            name: "sip".into(),
            l3proto: None,
            l4proto: 17,
        },
        ObjData::CtTimeout {
            l3proto: 10,
            l4proto: 6,
            policy: vec![(3, 120), (4, 60)],
        },
        ObjData::Secmark {
            ctx: "system_u:object_r:ssh_packet_t:s0".into(),
        },
        ObjData::Other {
            ty: obj_type::COUNTER,
            data: vec![12, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 9],
        },
    ];
    for (i, data) in objs.into_iter().enumerate() {
        let mut o = Obj::new(F, "t", &format!("o{i}"), data);
        o.handle = Some(i as u64 + 1);
        o.userdata = (i % 2 == 0).then(|| vec![1, 2]);
        round_trip(&o);
    }
    let r = Rule {
        handle: Some(1),
        position: Some(2),
        userdata: Some(vec![0; 7]),
        id: Some(1),
        position_id: Some(2),
        chain_id: Some(3),
        compat: Some(nft::RuleCompat::new(6, true)),
        ..Rule::new(Family::Ipv6, "t", "c", all_exprs())
    };
    round_trip(&r);
    let bytes = one(&r);
    let m = Msgs::new(&bytes).next().unwrap().unwrap();
    let nf = m.nf().unwrap();
    let rr = RuleRef::parse(F, nf.attrs).unwrap();
    assert_eq!((rr.table, rr.chain, rr.handle), ("t", "c", Some(1)));
    assert_eq!(rr.exprs().count(), all_exprs().len());
    let s = Set {
        handle: Some(1),
        flags: Some(0x8c),
        key_type: Some(7),
        key_len: Some(4),
        data_type: Some(nft::set::DATA_TYPE_VERDICT),
        data_len: Some(16),
        policy: Some(1),
        size: Some(100),
        concat: vec![4, 2],
        id: Some(1),
        timeout: Some(1000),
        gc_interval: Some(5),
        userdata: Some(vec![9]),
        exprs: vec![Expr::counter()],
        ..Set::new(F, "t", "s")
    };
    round_trip(&s);
    round_trip(&Set {
        exprs: vec![
            Expr::counter(),
            Expr::Quota {
                bytes: 1,
                flags: 0,
                consumed: None,
            },
        ],
        ..s.clone()
    });
    let elems = vec![
        SetElem::key(&[1, 2, 3, 4]),
        SetElem {
            key_end: Some(vec![1, 2, 3, 9]),
            flags: Some(1),
            timeout: Some(5),
            userdata: Some(vec![1]),
            exprs: vec![Expr::counter()],
            ..SetElem::key(&[1, 2, 3, 5])
        },
        SetElem {
            data: Some(Data::Verdict(Verdict::Jump("x".into()))),
            exprs: vec![Expr::counter(), Expr::counter()],
            ..SetElem::key(&[1])
        },
        SetElem {
            data: Some(Data::Value(vec![7])),
            flags: Some(nft::setelem::F_CATCHALL),
            ..Default::default()
        },
    ];
    round_trip(&SetElems {
        set_id: Some(4),
        ..SetElems::new(F, "t", "s", elems)
    });
    round_trip(&Gen {
        id: 5,
        proc_pid: Some(1),
        proc_name: Some("nft".into()),
    });
}

#[test]
fn batch_placement_flags_and_error_mapping() {
    let mut b = Batch::new(u32::MAX - 1, None); // sequence numbers wrap
    let r = Rule::new(F, "t", "c", vec![]);
    let s1 = b.add_rule(&r, Placement::Append, false, 7);
    let s2 = b.add_rule(&r, Placement::Insert, true, 8);
    let s3 = b.add_rule(&r, Placement::Replace, false, 9);
    assert_eq!((s1, s2, s3), (u32::MAX, 0, 1));
    let bytes = b.finish().to_vec();
    let flags: Vec<u16> = Msgs::new(&bytes).map(|m| m.unwrap().flags).collect();
    assert_eq!(flags, [0x1, 0xc01, 0x409, 0x101, 0x5]);
    // A kernel error for s2 and the end ACK, as the kernel would send them.
    let mut reply = Vec::new();
    for (code, seq) in [(-2i32, s2), (0, b.last_seq())] {
        reply.extend_from_slice(&36u32.to_ne_bytes());
        reply.extend_from_slice(&2u16.to_ne_bytes());
        reply.extend_from_slice(&0x100u16.to_ne_bytes());
        reply.extend_from_slice(&[0; 8]);
        reply.extend_from_slice(&code.to_ne_bytes());
        reply.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0]);
        reply.extend_from_slice(&seq.to_ne_bytes());
        reply.extend_from_slice(&[0; 4]);
    }
    let mut out = nft::Outcome::default();
    for m in Msgs::new(&reply) {
        assert!(b.absorb(&m.unwrap(), &mut out).unwrap());
    }
    assert_eq!(out.errors.len(), 1);
    assert_eq!((out.errors[0].tag, out.errors[0].code), (Some(8), -2));
    assert!(out.committed);
}

/// xorshift64*: deterministic pseudo-random bytes.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn parse_everything(bytes: &[u8]) {
    for m in Msgs::new(bytes) {
        let Ok(m) = m else { break };
        let _ = Table::parse_msg(&m);
        let _ = Chain::parse_msg(&m);
        let _ = Rule::parse_msg(&m);
        let _ = Set::parse_msg(&m);
        let _ = SetElems::parse_msg(&m);
        let _ = Gen::parse_msg(&m);
        let _ = m.error();
        if let Ok(nf) = m.nf() {
            if let Ok(r) = RuleRef::parse(F, nf.attrs.clone()) {
                let _ = r.exprs().count();
            }
        }
    }
    let _ = Expr::parse_body(bytes);
    for a in Attrs::new(bytes).flatten() {
        let _ = Data::parse(&a);
    }
}

#[test]
fn parsers_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Valid messages of every kind, then mutated.
    let mut seeds = vec![one(&Rule::new(F, "t", "c", all_exprs()))];
    seeds.push(one(&SetElems::new(
        F,
        "t",
        "s",
        vec![SetElem {
            data: Some(Data::Verdict(Verdict::Jump("j".into()))),
            exprs: vec![Expr::counter()],
            ..SetElem::key(&[1, 2])
        }],
    )));
    seeds.push(one(&Set {
        concat: vec![4],
        exprs: vec![Expr::counter()],
        ..Set::new(F, "t", "s")
    }));
    seeds.push(one(&Chain::base(F, "t", "c", "filter", 1, 0, 1)));
    for seed in &seeds {
        parse_everything(seed);
        for _ in 0..20_000 {
            let mut m = seed.clone();
            for _ in 0..1 + rng.next() % 4 {
                let i = (rng.next() as usize) % m.len();
                m[i] = rng.next() as u8;
            }
            if rng.next() % 8 == 0 {
                m.truncate((rng.next() as usize) % m.len());
            }
            parse_everything(&m);
        }
    }
    for _ in 0..20_000 {
        let len = (rng.next() % 300) as usize;
        let mut v: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if v.len() >= 20 {
            // Plausible header so parsing goes deeper.
            v[..4].copy_from_slice(&(len as u32).to_ne_bytes());
        }
        parse_everything(&v);
    }
}

#[test]
fn writer_nests_deeply() {
    let mut buf = Vec::new();
    let mut w = Writer::new(&mut buf);
    let a = w.begin_nest(1);
    let b = w.begin_nest(2);
    w.put_str(3, "abc");
    w.end_nest(b);
    w.end_nest(a);
    assert_eq!(
        buf,
        [16, 0, 1, 0x80, 12, 0, 2, 0x80, 8, 0, 3, 0, b'a', b'b', b'c', 0]
    );
}

#[test]
fn long_element_lists_are_split_over_messages() {
    let elems: Vec<SetElem> = (0..10_000u32)
        .map(|i| SetElem::key(&i.to_be_bytes()))
        .collect();
    let mut b = Batch::new(0, None);
    let first = b.add(&SetElems::new(F, "t", "s", elems), 77);
    let bytes = b.finish().to_vec();
    let mut total = 0;
    let mut msgs = 0;
    for m in Msgs::new(&bytes) {
        let m = m.unwrap();
        if m.ty == 0x0a0c {
            msgs += 1;
            total += SetElems::parse_msg(&m).unwrap().elems.len();
            assert_eq!(b.tag_of(m.seq), Some(77));
        }
    }
    assert_eq!((first, total), (1, 10_000));
    assert!(msgs > 1);
}

/// The shift amount is a host-order u32 value, so this golden holds on
/// little-endian hosts.
#[cfg(target_endian = "little")]
#[test]
fn golden_shift_and_exthdr_write() {
    let r = Rule::new(
        F,
        "t",
        "c",
        vec![
            Expr::Shift(Shift {
                sreg: reg::R1,
                dreg: reg::R1,
                len: 4,
                right: true,
                amount: 5,
            }),
            Expr::ExthdrSet(ExthdrSet {
                sreg: reg::R1,
                op: exthdr::OP_TCPOPT,
                ty: 2,
                offset: 2,
                len: 2,
            }),
        ],
    );
    // bitwise: SREG 1, DREG 1, LEN 4, OP 2 (rshift), DATA nest holding a
    // value 5 (host order). exthdr write: TYPE 2 (u8), OFFSET 2, LEN 2,
    // OP 1 (tcp option), SREG 1; no DREG and no FLAGS.
    golden(
        &one(&r),
        "msg len=164 type=0x0a06 flags=0x0401 seq=1 family=2 res_id=0000
        |    6    1 74 00
        |    6    2 63 00
        |  128 nest 4
        |     64 nest 1
        |       12    1 62 69 74 77 69 73 65 00
        |       48 nest 2
        |          8    1 00 00 00 01
        |          8    2 00 00 00 01
        |          8    3 00 00 00 04
        |          8    6 00 00 00 02
        |         12 nest 7
        |            8    1 05 00 00 00
        |     60 nest 1
        |       11    1 65 78 74 68 64 72 00
        |       44 nest 2
        |          5    2 02
        |          8    3 00 00 00 02
        |          8    4 00 00 00 02
        |          8    6 00 00 00 01
        |          8    7 00 00 00 01
        ",
    );
}

#[test]
fn golden_dup_and_exthdr_reset() {
    let r = Rule::new(
        F,
        "t",
        "c",
        vec![
            Expr::Dup(Dup {
                sreg_addr: reg::R1,
                sreg_dev: Some(reg::R2),
            }),
            Expr::ExthdrStrip(ExthdrStrip {
                op: exthdr::OP_TCPOPT,
                ty: 4,
            }),
        ],
    );
    // dup: SREG_ADDR 1, SREG_DEV 2. exthdr reset: TYPE 4 (u8), OP 1 (tcp
    // option); no register, offset, length or flags (the kernel refuses
    // them on a reset).
    golden(
        &one(&r),
        "msg len=108 type=0x0a06 flags=0x0401 seq=1 family=2 res_id=0000
        |    6    1 74 00
        |    6    2 63 00
        |   72 nest 4
        |     32 nest 1
        |        8    1 64 75 70 00
        |       20 nest 2
        |          8    1 00 00 00 01
        |          8    2 00 00 00 02
        |     36 nest 1
        |       11    1 65 78 74 68 64 72 00
        |       20 nest 2
        |          5    2 04
        |          8    6 00 00 00 01
        ",
    );
}

#[test]
fn golden_secmark_object() {
    let o = Obj::new(F, "t", "s", ObjData::Secmark { ctx: "a_t".into() });
    // NEWOBJ (0x0a12): TABLE, NAME, TYPE 8 (secmark), DATA nest with
    // NFTA_SECMARK_CTX (1), the context as a NUL-terminated string.
    golden(
        &one(&o),
        "msg len=56 type=0x0a12 flags=0x0401 seq=1 family=2 res_id=0000
        |    6    1 74 00
        |    6    2 73 00
        |    8    3 00 00 00 08
        |   12 nest 4
        |      8    1 61 5f 74 00
        ",
    );
}

#[test]
fn batch_genid_patch_and_truncate_match_fresh_batches() {
    let t = nft::Table::new(nft::Family::Ipv4, "t");
    let build = |genid: u32, tables: usize| {
        let mut b = nft::Batch::new(7, Some(genid));
        for _ in 0..tables {
            b.add(&t, 1);
        }
        b
    };
    let mut patched = build(41, 2);
    patched.set_genid(42);
    assert_eq!(patched.finish(), build(42, 2).finish());
    // Truncating to a mark taken after one message equals a one-message batch.
    let mut cut = build(5, 1);
    let m = cut.mark();
    cut.add(&t, 2);
    cut.add(&t, 3);
    cut.truncate(m);
    assert_eq!(cut.len(), 1);
    assert_eq!(cut.finish(), build(5, 1).finish());
    // Without a genid there is nothing to patch.
    let mut none = nft::Batch::new(7, None);
    none.set_genid(9);
    assert_eq!(none.finish(), nft::Batch::new(7, None).finish());
}

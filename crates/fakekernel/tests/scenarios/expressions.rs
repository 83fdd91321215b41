//! What the kernel keeps of the expressions nfkeeper lowers to, and where it takes them.

use super::*;
use crate::common::{step, Step};
use nft::batch::Placement;
use nft::chain::{hook, POLICY_ACCEPT};
use nft::expr::base;
use nft::{Chain, Data, Expr, Table, Verdict};

/// The expressions nfkeeper lowers to, in chains where the kernel takes
/// them, so that what the kernel keeps of each (and dumps) is compared.
pub fn expressions() -> Vec<Step> {
    use nft::expr::{byteorder, ct, exthdr, fib, meta, Byteorder, CmpOp, Exthdr, Fib};
    vec![
        step(
            "table, filter and nat chains",
            batch(|b| {
                b.add(&Table::new(F, T), 0);
                b.add(&base_chain("in", hook::LOCAL_IN), 0);
                b.add(&base_chain("out", hook::LOCAL_OUT), 0);
                b.add(
                    &Chain::base(F, T, "post", "nat", hook::POST_ROUTING, 100, POLICY_ACCEPT),
                    0,
                );
                b.add(
                    &Chain::base(F, T, "pre", "nat", hook::PRE_ROUTING, -100, POLICY_ACCEPT),
                    0,
                );
                b.add(&set4("s", 1, 0), 0);
            }),
        ),
        step(
            "matches and statements",
            batch(|b| {
                let r = |exprs| rule("in", exprs);
                let rules = [
                    r(vec![
                        Expr::load(base::NETWORK, 12, 4),
                        Expr::Bitwise {
                            sreg: 1,
                            dreg: 1,
                            len: 4,
                            mask: vec![255, 255, 255, 0],
                            xor: vec![0; 4],
                        },
                        Expr::Cmp {
                            sreg: 1,
                            op: CmpOp::Neq,
                            data: vec![10, 0, 0, 0],
                        },
                        Expr::Meta {
                            key: meta::L4PROTO,
                            dreg: 1,
                        },
                        Expr::cmp_eq(&[6]),
                        Expr::load(base::TRANSPORT, 2, 2),
                        Expr::Range {
                            sreg: 1,
                            neq: false,
                            from: vec![0, 22],
                            to: vec![0, 80],
                        },
                        Expr::Counter {
                            bytes: 500,
                            packets: 5,
                        },
                        Expr::verdict(Verdict::Accept),
                    ]),
                    r(vec![
                        Expr::Ct {
                            key: ct::STATE,
                            dreg: 1,
                            dir: None,
                        },
                        Expr::Bitwise {
                            sreg: 1,
                            dreg: 1,
                            len: 4,
                            mask: vec![6, 0, 0, 0],
                            xor: vec![0; 4],
                        },
                        Expr::Cmp {
                            sreg: 1,
                            op: CmpOp::Neq,
                            data: vec![0; 4],
                        },
                        Expr::Ct {
                            key: ct::SRC,
                            dreg: 1,
                            dir: Some(0),
                        },
                        Expr::Log {
                            group: None,
                            prefix: Some("pfx ".into()),
                            snaplen: None,
                            qthreshold: None,
                            level: Some(4),
                            flags: None,
                        },
                        Expr::Limit {
                            rate: 10,
                            unit: 60,
                            burst: 5,
                            ty: 0,
                            flags: 0,
                        },
                        Expr::Quota {
                            bytes: 1000,
                            flags: 0,
                            consumed: None,
                        },
                        Expr::Reject {
                            ty: 0,
                            code: Some(3),
                        },
                    ]),
                    r(vec![
                        Expr::load(base::TRANSPORT, 2, 2),
                        Expr::Byteorder(Byteorder {
                            sreg: 1,
                            dreg: 1,
                            op: byteorder::NTOH,
                            len: 2,
                            size: 2,
                        }),
                        Expr::Exthdr(Exthdr {
                            dreg: 1,
                            op: exthdr::OP_TCPOPT,
                            ty: 2,
                            offset: 2,
                            len: 2,
                            flags: 0,
                        }),
                        Expr::Fib(Fib {
                            dreg: 1,
                            result: fib::RESULT_ADDRTYPE,
                            flags: fib::F_DADDR | fib::F_IIF,
                        }),
                        Expr::cmp_eq(&2u32.to_ne_bytes()),
                        Expr::Numgen {
                            dreg: 1,
                            modulus: 2,
                            ty: 0,
                            offset: None,
                        },
                        Expr::Immediate {
                            dreg: 1,
                            data: Data::Value(vec![1, 0, 0, 0]),
                        },
                        Expr::MetaSet {
                            key: meta::MARK,
                            sreg: 1,
                        },
                        Expr::CtSet {
                            key: ct::MARK,
                            sreg: 1,
                            dir: None,
                        },
                        Expr::Lookup {
                            set: "s".into(),
                            set_id: None,
                            sreg: 1,
                            dreg: None,
                            flags: Some(nft::expr::LOOKUP_F_INV),
                        },
                        Expr::verdict(Verdict::Drop),
                    ]),
                    rule("out", vec![Expr::Notrack, Expr::verdict(Verdict::Continue)]),
                    rule(
                        "post",
                        vec![Expr::Masq {
                            flags: None,
                            reg_proto_min: None,
                            reg_proto_max: None,
                        }],
                    ),
                    rule(
                        "post",
                        vec![
                            Expr::Immediate {
                                dreg: 1,
                                data: Data::Value(vec![192, 168, 0, 1]),
                            },
                            Expr::Nat {
                                ty: 0,
                                family: 2,
                                reg_addr_min: Some(1),
                                reg_addr_max: None,
                                reg_proto_min: None,
                                reg_proto_max: None,
                                flags: None,
                            },
                        ],
                    ),
                    rule(
                        "pre",
                        vec![
                            Expr::Immediate {
                                dreg: 1,
                                data: Data::Value(vec![0, 80]),
                            },
                            Expr::Redir {
                                reg_proto_min: Some(1),
                                reg_proto_max: None,
                                flags: None,
                            },
                        ],
                    ),
                ];
                for (i, x) in rules.iter().enumerate() {
                    b.add_rule(x, Placement::Append, true, i as u32);
                }
            }),
        ),
        step(
            "nat in a filter chain",
            batch(|b| {
                b.add_rule(
                    &rule(
                        "in",
                        vec![Expr::Masq {
                            flags: None,
                            reg_proto_min: None,
                            reg_proto_max: None,
                        }],
                    ),
                    Placement::Append,
                    false,
                    1,
                );
            }),
        ),
        step(
            "masq to ports, dnat to an address and port",
            batch(|b| {
                b.add_rule(
                    &rule(
                        "post",
                        vec![
                            Expr::Immediate {
                                dreg: 1,
                                data: Data::Value(vec![4, 0]),
                            },
                            Expr::Masq {
                                flags: None,
                                reg_proto_min: Some(1),
                                reg_proto_max: None,
                            },
                        ],
                    ),
                    Placement::Append,
                    false,
                    1,
                );
                b.add_rule(
                    &rule(
                        "pre",
                        vec![
                            Expr::Immediate {
                                dreg: 1,
                                data: Data::Value(vec![192, 168, 0, 1]),
                            },
                            Expr::Immediate {
                                dreg: 2,
                                data: Data::Value(vec![0, 80]),
                            },
                            Expr::Nat {
                                ty: 1,
                                family: 2,
                                reg_addr_min: Some(1),
                                reg_addr_max: None,
                                reg_proto_min: Some(2),
                                reg_proto_max: None,
                                flags: None,
                            },
                        ],
                    ),
                    Placement::Append,
                    false,
                    2,
                );
            }),
        ),
        step(
            "dnat in postrouting",
            batch(|b| {
                b.add_rule(
                    &rule(
                        "post",
                        vec![
                            Expr::Immediate {
                                dreg: 1,
                                data: Data::Value(vec![192, 168, 0, 1]),
                            },
                            Expr::Nat {
                                ty: 1,
                                family: 2,
                                reg_addr_min: Some(1),
                                reg_addr_max: None,
                                reg_proto_min: None,
                                reg_proto_max: None,
                                flags: None,
                            },
                        ],
                    ),
                    Placement::Append,
                    false,
                    1,
                );
            }),
        ),
        step(
            "reject in a nat prerouting chain",
            batch(|b| {
                b.add_rule(
                    &rule(
                        "pre",
                        vec![Expr::Reject {
                            ty: 0,
                            code: Some(3),
                        }],
                    ),
                    Placement::Append,
                    false,
                    1,
                );
            }),
        ),
        step(
            "fib of the input interface in output, reached by a jump",
            batch(|b| {
                b.add(&Chain::new(F, T, "sub"), 1);
                b.add_rule(
                    &rule(
                        "sub",
                        vec![
                            Expr::Fib(Fib {
                                dreg: 1,
                                result: fib::RESULT_OIF,
                                flags: fib::F_DADDR,
                            }),
                            Expr::cmp_eq(&[0; 4]),
                        ],
                    ),
                    Placement::Append,
                    false,
                    2,
                );
                b.add_rule(&jump("out", "sub"), Placement::Append, false, 3);
            }),
        ),
    ]
}

//! [`super::rule`] over hand-built expression lists in the shapes
//! iptables-nft 1.8.9 writes (as `nft --debug=netlink` shows them), to the
//! save text; and shapes it does not write, refused.

use super::*;
use iptables::print::save::{save_rule_body, CounterStyle};

fn meta(key: u32) -> Expr {
    Expr::Meta { key, dreg: 1 }
}

fn cmp(op: CmpOp, data: &[u8]) -> Expr {
    Expr::Cmp {
        sreg: 1,
        op,
        data: data.to_vec(),
    }
}

fn eq(data: &[u8]) -> Expr {
    cmp(CmpOp::Eq, data)
}

fn load(base: u32, offset: u32, len: u32) -> Expr {
    Expr::Payload {
        dreg: 1,
        base,
        offset,
        len,
    }
}

fn mask(m: &[u8]) -> Expr {
    Expr::Bitwise {
        sreg: 1,
        dreg: 1,
        len: m.len() as u32,
        mask: m.to_vec(),
        xor: vec![0; m.len()],
    }
}

fn verdict(v: Verdict) -> Expr {
    Expr::Immediate {
        dreg: 0,
        data: Data::Verdict(v),
    }
}

fn saved(family: Family, exprs: &[Expr], udata: Option<&[u8]>) -> Result<String, Why> {
    let (rule, n) = rule(family, exprs, udata)?;
    let mut out = String::new();
    save_rule_body(&mut out, family, &rule, n, CounterStyle::None);
    Ok(format!("[{}:{}] {}", n.packets, n.bytes, out.trim()))
}

/// Family, expressions, user data, the save text wanted.
type Case = (Family, Vec<Expr>, Option<&'static [u8]>, &'static str);

/// Expressions, user data, a part of the refusal wanted.
type Refused = (Vec<Expr>, Option<&'static [u8]>, &'static str);

#[test]
fn shapes_decode() {
    use base::{NETWORK as NH, TRANSPORT as TH};
    let tcp = [meta(meta::L4PROTO), eq(&[6])];
    let udp = [meta(meta::L4PROTO), eq(&[17])];
    let with = |pre: &[Expr], rest: &[Expr]| [pre, rest].concat();
    let cases: Vec<Case> = vec![
        (
            Family::Ipv4,
            vec![
                meta(meta::IIFNAME),
                eq(b"lo\0"),
                Expr::Counter {
                    bytes: 9,
                    packets: 2,
                },
                verdict(Verdict::Accept),
            ],
            None,
            "[2:9] -i lo -j ACCEPT",
        ),
        (
            Family::Ipv4,
            vec![
                meta(meta::IIFNAME),
                eq(b"eth"),
                meta(meta::OIFNAME),
                cmp(CmpOp::Neq, b"wg0\0"),
                load(NH, 12, 1),
                eq(&[10]),
                load(NH, 16, 4),
                mask(&[255, 255, 0, 255]),
                eq(&[192, 168, 0, 1]),
                verdict(Verdict::Goto("x".into())),
            ],
            None,
            "[0:0] -s 10.0.0.0/8 -d 192.168.0.1/255.255.0.255 -i eth+ ! -o wg0 -g x",
        ),
        // `-i +` loads the name and compares nothing; `! -f`.
        (
            Family::Ipv4,
            vec![
                meta(meta::IIFNAME),
                load(NH, 6, 2),
                mask(&[0x1f, 0xff]),
                eq(&[0, 0]),
            ],
            None,
            "[0:0] ! -f",
        ),
        (
            Family::Ipv4,
            with(
                &tcp,
                &[load(TH, 0, 4), eq(&[0, 1, 0, 2]), verdict(Verdict::Drop)],
            ),
            None,
            "[0:0] -p tcp -m tcp --sport 1 --dport 2 -j DROP",
        ),
        (
            Family::Ipv4,
            with(
                &udp,
                &[
                    load(TH, 0, 2),
                    Expr::Range {
                        sreg: 1,
                        neq: true,
                        from: vec![0, 1],
                        to: vec![0, 2],
                    },
                    load(TH, 2, 2),
                    cmp(CmpOp::Gte, &[4, 0]),
                ],
            ),
            None,
            "[0:0] -p udp -m udp ! --sport 1:2 --dport 1024:65535",
        ),
        (
            Family::Ipv4,
            with(&tcp, &[load(TH, 13, 1), mask(&[0x17]), eq(&[0x02])]),
            None,
            "[0:0] -p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN",
        ),
        (
            Family::Ipv4,
            vec![
                meta(meta::MARK),
                mask(&0xffu32.to_ne_bytes()),
                eq(&1u32.to_ne_bytes()),
                Expr::Limit {
                    rate: 5,
                    unit: 60,
                    burst: 7,
                    ty: 0,
                    flags: 0,
                },
                verdict(Verdict::Return),
            ],
            Some(b"\0\x03hi\0"),
            "[0:0] -m mark --mark 0x1/0xff -m limit --limit 5/min --limit-burst 7 \
             -m comment --comment hi -j RETURN",
        ),
        (
            Family::Ipv6,
            vec![
                meta(meta::L4PROTO),
                cmp(CmpOp::Neq, &[17]),
                load(NH, 8, 1),
                eq(&[0xfd]),
                Expr::Log {
                    group: Some(3),
                    prefix: Some("x".into()),
                    snaplen: None,
                    qthreshold: Some(2),
                    level: None,
                    flags: None,
                },
            ],
            None,
            "[0:0] -s fd00::/8 ! -p udp -j NFLOG --nflog-prefix x --nflog-group 3 \
             --nflog-threshold 2",
        ),
        (
            Family::Ipv4,
            vec![
                Expr::Immediate {
                    dreg: 9,
                    data: Data::Value(vec![1]),
                },
                Expr::MetaSet {
                    key: NFTRACE,
                    sreg: 9,
                },
            ],
            None,
            "[0:0] -j TRACE",
        ),
    ];
    for (family, exprs, udata, want) in cases {
        assert_eq!(
            saved(family, &exprs, udata).as_deref(),
            Ok(want),
            "{exprs:?}"
        );
    }
}

#[test]
fn other_shapes_refuse() {
    let ct = Expr::Ct {
        key: 0,
        dreg: 1,
        dir: None,
    };
    let cases: Vec<Refused> = vec![
        (vec![ct.clone(), eq(&[2, 0, 0, 0])], None, "expression Ct {"),
        // A port without `-p tcp`/`-p udp`.
        (
            vec![load(base::TRANSPORT, 2, 2), eq(&[0, 22])],
            None,
            "expression Cmp {",
        ),
        // A load nothing compares (other than an interface name).
        (
            vec![meta(meta::MARK)],
            None,
            "a load of Meta(3) nothing compares",
        ),
        (
            vec![verdict(Verdict::Accept), verdict(Verdict::Drop)],
            None,
            "an expression after the verdict",
        ),
        (vec![], Some(b"\x01\x01x"), "user data: type 1"),
        (
            vec![Expr::Match {
                name: "quota".into(),
                rev: 1,
                info: vec![0; 24],
            }],
            None,
            "revision 1 is not decoded",
        ),
    ];
    for (exprs, udata, want) in cases {
        let (_, why) = rule(Family::Ipv4, &exprs, udata).unwrap_err();
        assert!(why.contains(want), "{exprs:?}: {why}");
    }
}

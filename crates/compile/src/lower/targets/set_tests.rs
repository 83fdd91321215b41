use super::*;
use crate::lower::testutil::{load, Catalog};
use crate::lower::LowerError;
use iptables::Rule;
use nft::expr::{base, reg};
use nft::Expr;
use ruleset::{Family, TableKind};

fn catalog() -> Catalog {
    Catalog::of(&[
        "create ip hash:ip",
        "create tmo hash:ip timeout 600",
        "create perm hash:ip timeout 0",
        "create net hash:net",
        "create ipport hash:ip,port",
    ])
}

fn r(name: &str, dirs: &[bool]) -> Option<SetRef> {
    Some(SetRef {
        name: name.into(),
        dirs: dirs.to_vec(),
    })
}

fn target(add: Option<SetRef>, del: Option<SetRef>) -> SetTarget {
    SetTarget {
        add,
        del,
        map: None,
        exist: false,
        timeout: None,
        map_mark: false,
        map_prio: false,
        map_queue: false,
    }
}

fn lower_with(proto: u8, t: &SetTarget) -> Result<(Vec<Expr>, Vec<String>)> {
    let c = catalog();
    let rule = Rule {
        proto,
        ..Default::default()
    };
    let mut cx = Cx::new(Family::Ipv4, TableKind::Filter, "INPUT", &rule);
    cx.ipsets = &c;
    lower(t, &mut cx)?;
    Ok((cx.out, cx.ipset_refs))
}

#[test]
fn adds_and_deletes_are_dynset_updates_of_the_copy() {
    let src = load(base::NETWORK, 12, 4);
    let dst = load(base::NETWORK, 16, 4);
    let r0 = reg::R32_00;
    let cases: Vec<(u8, SetTarget, Vec<Expr>)> = vec![
        (
            0,
            target(r("ip", &[true]), None),
            vec![src.clone(), dynset("ip", None, op::ADD, reg::R1, None)],
        ),
        (
            0,
            SetTarget {
                exist: true,
                timeout: Some(30),
                ..target(r("tmo", &[false]), None)
            },
            vec![
                dst.clone(),
                dynset("tmo", None, op::UPDATE, reg::R1, Some(30_000)),
            ],
        ),
        (
            0,
            SetTarget {
                timeout: Some(0),
                ..target(r("perm", &[true]), None)
            },
            vec![src.clone(), dynset("perm", None, op::ADD, reg::R1, None)],
        ),
        (
            0,
            target(r("ip", &[true]), r("tmo", &[false])),
            vec![
                src.clone(),
                dynset("ip", None, op::ADD, reg::R1, None),
                dst.clone(),
                dynset("tmo", None, op::DELETE, reg::R1, None),
            ],
        ),
        (
            6,
            target(None, r("ipport", &[true, true])),
            vec![
                Expr::Payload {
                    dreg: reg::R1,
                    base: base::NETWORK,
                    offset: 12,
                    len: 4,
                },
                Expr::Meta {
                    key: nft::expr::meta::L4PROTO,
                    dreg: r0 + 1,
                },
                Expr::Payload {
                    dreg: r0 + 2,
                    base: base::TRANSPORT,
                    offset: 0,
                    len: 2,
                },
                dynset("ipport", None, op::DELETE, reg::R1, None),
            ],
        ),
    ];
    for (proto, t, want) in cases {
        let (got, _) = lower_with(proto, &t).unwrap_or_else(|e| panic!("{t:?}: {e}"));
        assert_eq!(got, want, "{t:?}");
    }
    let (_, used) = lower_with(0, &target(r("ip", &[true]), r("tmo", &[true]))).unwrap();
    assert_eq!(used, ["ip", "tmo"]);
}

#[test]
fn what_the_packet_path_cannot_do_is_refused() {
    let cases: Vec<(SetTarget, &str)> = vec![
        (target(r("net", &[true]), None), "holds ranges"),
        (
            SetTarget {
                timeout: Some(5),
                ..target(r("ip", &[true]), None)
            },
            "no timeouts",
        ),
        (
            SetTarget {
                timeout: Some(0),
                ..target(r("tmo", &[true]), None)
            },
            "permanent",
        ),
        (
            SetTarget {
                map: r("ip", &[true]),
                map_mark: true,
                ..target(None, None)
            },
            "skbinfo",
        ),
    ];
    for (t, why) in cases {
        match lower_with(0, &t) {
            Err(LowerError::NotNative { why: w, .. }) => assert!(w.contains(why), "{t:?}: {w}"),
            other => panic!("{t:?}: {other:?}"),
        }
    }
    assert_eq!(
        lower_with(0, &target(r("nope", &[true]), None)).unwrap_err(),
        LowerError::NoSet("nope".into())
    );
}

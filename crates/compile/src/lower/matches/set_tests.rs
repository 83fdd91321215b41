use super::*;
use crate::lower::testutil::{load, meta, Catalog};
use crate::lower::LowerError;
use iptables::Rule;
use nft::expr::{base, meta as mk, reg, LOOKUP_F_INV};
use ruleset::{Family, TableKind};

fn catalog() -> Catalog {
    Catalog::of(&[
        "create ip hash:ip",
        "create ip6 hash:ip family inet6",
        "create net hash:net",
        "create ipport hash:ip,port",
        "create ip6port hash:ip,port family inet6",
        "create ipportip hash:ip,port,ip",
        "create netiface hash:net,iface",
        "create mac hash:mac",
        "create ipmark hash:ip,mark",
        "create port bitmap:port range 1-1024",
        "create cnt hash:ip counters",
        "create tmo hash:ip timeout 600",
    ])
}

fn set(name: &str, dirs: &str) -> Set {
    Set {
        name: name.to_string(),
        dirs: dirs.split(',').map(|d| d == "src").collect(),
        inv: false,
        return_nomatch: false,
        skip_counters: false,
        skip_subcounters: false,
        packets: CounterOp::None,
        bytes: CounterOp::None,
    }
}

fn lookup(name: &str, sreg: u32, inv: bool) -> Expr {
    Expr::Lookup {
        set: name.to_string(),
        set_id: None,
        sreg,
        dreg: None,
        flags: inv.then_some(LOOKUP_F_INV),
    }
}

fn at(r: u32, e: Expr) -> Expr {
    match e {
        Expr::Payload {
            base, offset, len, ..
        } => Expr::Payload {
            dreg: r,
            base,
            offset,
            len,
        },
        Expr::Meta { key, .. } => Expr::Meta { key, dreg: r },
        other => other,
    }
}

/// Lower `m` in a rule of `family` with `-p proto` (0: none).
fn lower_with(c: &Catalog, family: Family, proto: u8, m: &Set) -> Result<(Vec<Expr>, Vec<String>)> {
    let rule = Rule {
        proto,
        ..Default::default()
    };
    let mut cx = Cx::new(family, TableKind::Filter, "INPUT", &rule);
    cx.ipsets = c;
    lower(m, &mut cx)?;
    Ok((cx.out, cx.ipset_refs))
}

#[test]
fn lookups_load_the_key_ipset_reads() {
    let c = catalog();
    let r0 = reg::R32_00;
    let v4 = Family::Ipv4;
    let cases: Vec<(Family, u8, Set, Vec<Expr>)> = vec![
        (
            v4,
            0,
            set("ip", "src"),
            vec![load(base::NETWORK, 12, 4), lookup("ip", reg::R1, false)],
        ),
        (
            v4,
            0,
            set("ip", "dst,src"),
            vec![load(base::NETWORK, 16, 4), lookup("ip", reg::R1, false)],
        ),
        (
            v4,
            0,
            Set {
                inv: true,
                ..set("net", "dst")
            },
            vec![load(base::NETWORK, 16, 4), lookup("net", reg::R1, true)],
        ),
        (
            Family::Ipv6,
            0,
            set("ip6", "src"),
            vec![load(base::NETWORK, 8, 16), lookup("ip6", reg::R1, false)],
        ),
        (
            v4,
            6,
            set("ipport", "src,dst"),
            vec![
                at(reg::R1, load(base::NETWORK, 12, 4)),
                at(r0 + 1, meta(mk::L4PROTO)),
                at(r0 + 2, load(base::TRANSPORT, 2, 2)),
                lookup("ipport", reg::R1, false),
            ],
        ),
        (
            v4,
            1,
            set("ipport", "dst,dst"),
            vec![
                at(reg::R1, load(base::NETWORK, 16, 4)),
                at(r0 + 1, meta(mk::L4PROTO)),
                at(r0 + 2, load(base::TRANSPORT, 0, 2)),
                lookup("ipport", reg::R1, false),
            ],
        ),
        (
            Family::Ipv6,
            17,
            set("ip6port", "src,dst"),
            vec![
                at(reg::R1, load(base::NETWORK, 8, 16)),
                // Slot 4 starts the second 16-byte register: named so.
                at(reg::R2, meta(mk::L4PROTO)),
                at(r0 + 5, load(base::TRANSPORT, 2, 2)),
                lookup("ip6port", reg::R1, false),
            ],
        ),
        (
            v4,
            17,
            set("ipportip", "src,src,dst"),
            vec![
                at(reg::R1, load(base::NETWORK, 12, 4)),
                at(r0 + 1, meta(mk::L4PROTO)),
                at(r0 + 2, load(base::TRANSPORT, 0, 2)),
                at(r0 + 3, load(base::NETWORK, 16, 4)),
                lookup("ipportip", reg::R1, false),
            ],
        ),
        (
            v4,
            0,
            set("netiface", "src,dst"),
            vec![
                at(reg::R1, load(base::NETWORK, 12, 4)),
                at(r0 + 1, meta(mk::OIFNAME)),
                lookup("netiface", reg::R1, false),
            ],
        ),
        (
            v4,
            0,
            set("mac", "src"),
            vec![load(base::LL, 6, 6), lookup("mac", reg::R1, false)],
        ),
        (
            v4,
            0,
            set("ipmark", "dst,dst"),
            vec![
                at(reg::R1, load(base::NETWORK, 16, 4)),
                at(r0 + 1, meta(mk::MARK)),
                lookup("ipmark", reg::R1, false),
            ],
        ),
        (
            v4,
            17,
            set("port", "dst"),
            vec![load(base::TRANSPORT, 2, 2), lookup("port", reg::R1, false)],
        ),
        (
            v4,
            0,
            Set {
                skip_counters: true,
                ..set("cnt", "src")
            },
            vec![load(base::NETWORK, 12, 4), lookup("cnt", reg::R1, false)],
        ),
        (
            v4,
            0,
            Set {
                return_nomatch: true,
                skip_subcounters: true,
                ..set("tmo", "src")
            },
            vec![load(base::NETWORK, 12, 4), lookup("tmo", reg::R1, false)],
        ),
    ];
    for (fam, proto, m, want) in cases {
        let (got, used) = lower_with(&c, fam, proto, &m).unwrap_or_else(|e| panic!("{m:?}: {e}"));
        assert_eq!(got, want, "{m:?}");
        assert_eq!(used, vec![m.name.clone()], "{m:?}");
    }
}

#[test]
fn what_ipset_would_do_differently_is_refused() {
    let c = catalog();
    let v4 = Family::Ipv4;
    let refused: Vec<(Family, u8, Set, &str)> = vec![
        (
            v4,
            0,
            set("ipport", "src,dst"),
            "depends on the packet's protocol",
        ),
        (
            v4,
            47,
            set("ipport", "src,dst"),
            "depends on the packet's protocol",
        ),
        (v4, 132, set("port", "dst"), "-p tcp or udp"),
        (v4, 6, set("ipport", "src"), "2 dimensions"),
        (v4, 0, set("ip6", "src"), "family inet6"),
        (Family::Ipv6, 0, set("ip", "src"), "family inet"),
        (v4, 0, set("cnt", "src"), "! --update-counters"),
        (
            v4,
            0,
            Set {
                packets: CounterOp::Gt(1),
                skip_counters: true,
                ..set("cnt", "src")
            },
            "counters",
        ),
    ];
    for (fam, proto, m, why) in refused {
        match lower_with(&c, fam, proto, &m) {
            Err(LowerError::NotNative { why: w, .. }) => assert!(w.contains(why), "{m:?}: {w}"),
            other => panic!("{m:?}: {other:?}"),
        }
    }
}

#[test]
fn unknown_names_are_iptables_missing_set() {
    let c = catalog();
    let e = lower_with(&c, Family::Ipv4, 0, &set("nope", "src")).unwrap_err();
    assert_eq!(e, LowerError::NoSet("nope".into()));
    assert_eq!(e.to_string(), "Set nope doesn't exist.");
    // Without a catalog: no native form (as before ipsets were known).
    let rule = Rule::default();
    let mut cx = Cx::new(Family::Ipv4, TableKind::Filter, "INPUT", &rule);
    assert!(matches!(
        lower(&set("ip", "src"), &mut cx),
        Err(LowerError::NotNative { .. })
    ));
}

#[test]
fn kernel_ipsets_go_through_the_xtables_match() {
    let c = catalog();
    let m = Set {
        inv: true,
        ..set("kset", "src,dst")
    };
    let (got, used) = lower_with(&c, Family::Ipv4, 0, &m).unwrap();
    let info = crate::compat::matches::set::info(&m, 7);
    assert_eq!(
        got,
        vec![Expr::Match {
            name: "set".into(),
            rev: 4,
            info: info.info.clone(),
        }]
    );
    // Index 7, two dimensions, inverted with the first a source.
    assert_eq!(&info.info[..4], &[7, 0, 2, 0b011]);
    assert!(used.is_empty(), "no copy for a kernel set");
}

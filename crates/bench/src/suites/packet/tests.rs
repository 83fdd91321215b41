//! Tests of the packet suite: plans, rule texts per scenario and tool,
//! and (as root) tiny runs through the kernel.

use super::*;
use crate::suites::Nft;

fn opts() -> Opts {
    Opts {
        reps: 3,
        ..Opts::quick()
    }
}

/// `--quick` alone.
const QUICK: Given = Given {
    quick: true,
    sizes: false,
    reps: false,
};

#[test]
fn plan_sizes() {
    let o = Opts {
        sizes: vec![500, 50],
        ..opts()
    };
    let given = |quick, sizes, reps| Given { quick, sizes, reps };
    // (given, sizes, TCP ms, UDP ms, repetitions); opts() says 3.
    let cases: [(Given, &[usize], u64, u64, usize); 4] = [
        (given(true, false, false), &[0, 1_000], 200, 200, 5),
        (
            given(false, false, false),
            &[0, 100, 1_000, 10_000],
            1000,
            1000,
            3,
        ),
        (given(true, true, false), &[0, 50, 500], 200, 200, 5),
        (given(true, false, true), &[0, 1_000], 200, 200, 3),
    ];
    for (g, sizes, ms, udp_ms, reps) in cases {
        let p = Plan::new(&o, g);
        assert_eq!(p.sizes, sizes, "{g:?}");
        assert_eq!(p.duration, Duration::from_millis(ms), "{g:?}");
        assert_eq!(p.udp_duration, Duration::from_millis(udp_ms), "{g:?}");
        assert_eq!(p.reps, reps, "{g:?}");
    }
}

/// Which rows a plan has: the default plan all but f.*, the quick one
/// also not h.set; `--case` picks by prefix, quick or not.
#[test]
fn plan_variants() {
    let ids = |cases: &[&str], quick| {
        let o = Opts {
            cases: cases.iter().map(|c| c.to_string()).collect(),
            ..opts()
        };
        let g = Given { quick, ..QUICK };
        let p = Plan::new(&o, g);
        p.variants.iter().map(|v| v.id()).collect::<Vec<_>>()
    };
    // (cases, quick, has h.set, has f.runs8, rows)
    let cases: [(&[&str], bool, bool, bool, usize); 5] = [
        (&[], false, true, false, 13),
        (&[], true, false, false, 12),
        (&["h."], true, true, false, 1),
        (&["h."], false, true, false, 1),
        (&["f.", "h.set"], false, true, true, 6),
    ];
    for (c, quick, set, runs, rows) in cases {
        let got = ids(c, quick);
        assert_eq!(got.contains(&"h.set"), set, "{c:?} {quick}: {got:?}");
        assert_eq!(got.contains(&"f.runs8"), runs, "{c:?} {quick}: {got:?}");
        assert_eq!(got.len(), rows, "{c:?} {quick}: {got:?}");
    }
}

fn rec(case: &str, status: Status, samples: &[f64]) -> Record {
    Record {
        suite: "packet".into(),
        case: case.into(),
        name: String::new(),
        adapter: "nft".into(),
        n: 1000,
        status,
        samples: samples.to_vec(),
    }
}

#[test]
fn rates_invert_costs() {
    // 0.1 s per Gbit = 10 Gbit/s; 2 µs per packet = 500 kpps.
    let t = rec("a.addr.tcp", Status::Ok, &[0.1, 0.2, 0.05]);
    let (unit, s) = rate(&t).unwrap();
    assert_eq!(unit, "Gbit/s");
    assert_eq!((s.min, s.median, s.max), (5.0, 10.0, 20.0));
    let u = rec("b.set.udp", Status::Ok, &[2e-6]);
    let (unit, s) = rate(&u).unwrap();
    assert_eq!(unit, "kpps");
    assert!((s.median - 500.0).abs() < 1e-9, "{s:?}");
    // k.kube: 50 µs per connection = 20 kconn/s; steady is TCP's Gbit/s.
    let first = rec("k.kube.first", Status::Ok, &[50e-6]);
    let (unit, s) = rate(&first).unwrap();
    assert_eq!(unit, "kconn/s");
    assert!((s.median - 20.0).abs() < 1e-9, "{s:?}");
    let steady = rec("k.kube.steady", Status::Ok, &[0.1]);
    assert_eq!(rate(&steady).unwrap().0, "Gbit/s");
    let failed = rec("a.addr.udp", Status::Fail("x".into()), &[2e-6]);
    assert_eq!(rate(&failed), None, "a failure has no rate");
    let other = Record {
        suite: "cf".into(),
        ..t.clone()
    };
    assert_eq!(rate(&other), None);
}

#[test]
fn appendix_notes() {
    let p = Plan::new(&opts(), QUICK);
    let rs = [rec("a.addr.tcp", Status::Ok, &[0.1])];
    let md = appendix(&p, &rs);
    assert!(
        md.contains("5 repetitions of each measurement: a TCP bulk transfer of 0.2 s")
            && md.contains("a 0.2 s UDP flood"),
        "{md}"
    );
    assert!(
        md.contains("client thread pinned to CPU 0") || p.pin.is_none(),
        "{md}"
    );
    let other = Record {
        suite: "cf".into(),
        ..rs[0].clone()
    };
    assert_eq!(appendix(&p, &[other]), "");
}

/// What is decided before any namespace exists: a missing tool or
/// ipset, and a form the tool does not have.
#[test]
fn statuses_without_setup() {
    type Version = Result<String, String>;
    let ok: Version = Ok("v1".into());
    let why = "x not found; apt-get install x".to_string();
    let gone: Version = Err(why.clone());
    let legacy = crate::suites::Iptables::legacy();
    // (variant, adapter, the adapter's version, ipset's, status)
    let cases: [(Variant, &dyn Adapter, &Version, &Version, Status); 5] = [
        (
            Variant::Ipset,
            &legacy,
            &ok,
            &gone,
            Status::Unavailable(why.clone()),
        ),
        (
            Variant::Set,
            &legacy,
            &ok,
            &gone,
            Status::Unavailable(why.clone()),
        ),
        (Variant::Addr, &legacy, &gone, &ok, Status::Unavailable(why)),
        (Variant::Ipset, &Nft, &ok, &ok, Status::NoForm),
        (Variant::Vmap, &legacy, &ok, &ok, Status::NoForm),
    ];
    let plan = Plan::new(&opts(), QUICK);
    for (v, a, tool, ipset, want) in cases {
        let av = Avail { tool, ipset };
        match prepare(&plan, (v, Proto::Udp, 10), a, &av) {
            Slot::Done(st) => assert_eq!(st, want, "{v:?} {}", a.name()),
            Slot::Ready { .. } => panic!("{v:?} {}: set up", a.name()),
        }
    }
}

/// Who restores a row's ipset: the ipset tool for c.ipset whatever the
/// tool; for h.set nfkeeper's own ipset (the same binary and leading
/// words as its iptables), the ipset tool for the iptables tools.
#[test]
fn set_restore_per_tool() {
    let nfk = crate::suites::Iptables::nfkeeper();
    let plain = crate::suites::Iptables::nfkeeper_plain();
    let bin = crate::suites::adapters::nfkeeper_bin();
    let tool = vec!["ipset".to_string(), "restore".into()];
    let own = vec![bin.clone(), "ipset".into(), "restore".into()];
    let own_plain = vec![
        bin,
        "--no-compile-runs".into(),
        "ipset".into(),
        "restore".into(),
    ];
    let legacy = crate::suites::Iptables::legacy();
    let ipt_nft = crate::suites::Iptables::nft();
    let cases: [(Variant, &dyn Adapter, &Vec<String>); 7] = [
        (Variant::Ipset, &nfk, &tool),
        (Variant::Ipset, &legacy, &tool),
        (Variant::Ipset, &ipt_nft, &tool),
        (Variant::Set, &nfk, &own),
        (Variant::Set, &plain, &own_plain),
        (Variant::Set, &legacy, &tool),
        (Variant::Set, &ipt_nft, &tool),
    ];
    for (v, a, want) in cases {
        let i = v.install(Dialect::Iptables, Proto::Udp, 3).unwrap();
        assert_eq!(&set_restore(a, &i).argv, want, "{v:?} {}", a.name());
    }
}

#[test]
fn topology_commands() {
    let (c, s) = topology("nfkbench-1-2", Some(Ipv4Addr::new(10, 0, 0, 5)));
    assert!(c.starts_with("link add vc type veth peer name vs netns nfkbench-1-2\n"));
    assert!(
        c.ends_with("addr add 10.0.0.5/32 dev vc\nroute add 198.18.0.3/32 dev vc src 10.0.0.5\n")
    );
    assert!(s.contains("addr add 198.18.0.3/24 dev vs\n"), "{s}");
    assert!(s.ends_with("route add 10.0.0.0/8 via 198.18.0.1\n"), "{s}");
    let (c, _) = topology("x", None);
    assert!(!c.contains("src"), "{c}");
    assert_eq!(dialect("nft"), Dialect::Nft);
    assert_eq!(dialect("nfkeeper"), Dialect::Iptables);
}

/// The check catches what would make a measurement meaningless: rules
/// that do not drop the blocked probe, and a path that drops everything.
#[test]
fn verify_fails_without_effective_rules_root() {
    if !crate::netns::is_root() {
        eprintln!("skipped: needs root for network namespaces");
        return;
    }
    let lim = Duration::from_secs(10);
    let blocked = Variant::Addr.blocked(1);
    let pair = Pair::new(blocked.and_then(|b| b.src), lim).expect("pair");
    let (cl, sv) = pair.places(None);
    // No rules at all: the blocked probe gets through.
    let e = verify(&cl, &sv, Proto::Udp, blocked).unwrap_err();
    assert!(e.contains("got through"), "{e}");
    // A policy DROP without the accepting rule: nothing passes.
    let all_drop = Install {
        ipset: None,
        own_set: false,
        nfacct: None,
        rules: "table ip filter {\n\tchain INPUT {\n\t\ttype filter hook input priority 0; policy drop;\n\t}\n}\n".into(),
    };
    if Nft.available().is_ok() {
        install(&pair.server, &Nft, &all_drop, lim).expect("nft -f");
        let e = verify(&cl, &sv, Proto::Tcp, blocked).unwrap_err();
        assert!(e.contains("(must pass) was dropped"), "{e}");
    }
}

/// Rows measured once and repeated: those whose tool loads the same
/// text with the same probe. At N = 0 the rule-list scenarios of a hook
/// load only the accepting rule; from N = 1 on only e.input of the
/// iptables tools is a.addr again.
#[test]
fn equal_rows_are_measured_once() {
    let groups = |d: Dialect, p: Proto, n: usize| -> Vec<Vec<&'static str>> {
        let mut g: Vec<(Measured, Vec<&'static str>)> = Vec::new();
        for v in VARIANTS.iter().copied().filter(|v| !v.on_request()) {
            let Some(m) = measured(v, p, n, d, "x") else {
                continue;
            };
            match g.iter_mut().find(|(k, _)| *k == m) {
                Some((_, ids)) => ids.push(v.id()),
                None => g.push((m, vec![v.id()])),
            }
        }
        g.into_iter().map(|x| x.1).collect()
    };
    for p in [Proto::Tcp, Proto::Udp] {
        let ipt = groups(Dialect::Iptables, p, 0);
        assert_eq!(
            ipt[0],
            [
                "a.addr",
                "b.multiport",
                "c.rules",
                "d.jumps",
                "e.input",
                "g.compat"
            ]
        );
        assert!(ipt[1..].iter().all(|g| g.len() == 1), "{ipt:?}");
        assert!(ipt.iter().any(|g| g == &["h.set"]), "{ipt:?}");
        // h.set's nft form is e.input's set, at every N.
        for n in [0, 1, 1000] {
            let nft = groups(Dialect::Nft, p, n);
            let set = nft.iter().find(|g| g.contains(&"e.input")).unwrap();
            assert_eq!(set, &["e.input", "h.set"], "N={n}");
        }
        let nft = groups(Dialect::Nft, p, 0);
        assert_eq!(nft[0], ["a.addr", "b.multiport", "c.rules", "d.jumps"]);
        let singles = |g: &Vec<&str>| g.len() == 1 || g == &["e.input", "h.set"];
        assert!(nft[1..].iter().all(singles), "{nft:?}");
        for n in [1, 1000] {
            let ipt = groups(Dialect::Iptables, p, n);
            assert_eq!(ipt[0], ["a.addr", "e.input"]);
            assert!(ipt[1..].iter().all(|g| g.len() == 1), "{ipt:?}");
            assert!(groups(Dialect::Nft, p, n).iter().all(singles));
        }
    }
    // The tool and the protocol are part of what is measured.
    let m = |p, a| measured(Variant::Addr, p, 0, Dialect::Iptables, a);
    assert!(m(Proto::Tcp, "x") != m(Proto::Udp, "x"));
    assert!(m(Proto::Tcp, "x") != m(Proto::Tcp, "y"));
}

/// g) through each iptables tool present (nfkeeper where `NFKEEPER_BIN`
/// or `PATH` has it): the traffic passes, the last rule drops its
/// probe, and the nftables-based tools load every rule with its module
/// as an xtables match (`xt match` in nft's listing), none translated.
#[test]
fn compat_rules_load_xt_matches_root() {
    use crate::suites::adapters::Iptables;
    let Some(_serial) = crate::suites::kernel_test() else {
        return;
    };
    let lim = Duration::from_secs(10);
    let ns = Netns::new().expect("namespace");
    if ns.run(&["nfacct", "list"], None, lim).is_err() {
        eprintln!("skipped: no nfacct tool (apt-get install nfacct)");
        return;
    }
    let n = 6;
    let v = Variant::Compat;
    let mut tried = 0;
    for a in [Iptables::nfkeeper(), Iptables::nft(), Iptables::legacy()] {
        if let Err(why) = a.available() {
            eprintln!("{}: skipped: {why}", a.name());
            continue;
        }
        let pair = Pair::new(None, lim).expect("pair");
        let inst = v.install(Dialect::Iptables, Proto::Udp, n).unwrap();
        install(&pair.server, &a, &inst, lim).unwrap_or_else(|e| panic!("{e}"));
        let (cl, sv) = pair.places(None);
        verify(&cl, &sv, Proto::Udp, v.blocked(n)).unwrap_or_else(|e| panic!("{e}"));
        tried += 1;
        if a.name() == "iptables-legacy" {
            continue;
        }
        // The netlink view names each expression (the listing prints
        // some xtables matches through their translation, `time` as
        // nothing); a rule is its header line and the indented lines.
        let argv = ["nft", "--debug=netlink", "list", "ruleset"];
        let out = pair.server.run(&argv, None, lim).expect("nft list").stdout;
        let mut rules: Vec<String> = Vec::new();
        for l in out.lines() {
            match rules.last_mut() {
                Some(r) if l.starts_with("  ") => r.push_str(l),
                _ => rules.push(l.to_string()),
            }
        }
        let ported: Vec<&String> = rules
            .iter()
            .filter(|r| r.contains("@ transport header + 2"))
            .collect();
        assert_eq!(ported.len(), n, "{}:\n{out}", a.name());
        for (k, r) in ported.iter().enumerate() {
            let m = ["recent", "nfacct", "time"][k % 3];
            let xt = format!("[ match name {m} rev");
            assert!(r.contains(&xt), "{}: {r}", a.name());
        }
    }
    eprintln!("{tried} tools checked");
}

/// h) through each iptables tool present (nfkeeper where `NFKEEPER_BIN`
/// or `PATH` has it; the others with the ipset tool): the traffic
/// passes, the set's last member is dropped, and nft's listing shows
/// what each tool made of the rule: nfkeeper a native lookup of its own
/// set (`@pktbench`, no `xt`), iptables-nft the kernel's ipset through
/// xtables (nft 1.0.6 prints `xt match set`).
#[test]
fn set_rule_uses_the_tools_own_set_root() {
    use crate::suites::adapters::Iptables;
    let Some(_serial) = crate::suites::kernel_test() else {
        return;
    };
    let lim = Duration::from_secs(10);
    let ipset = ipset_version(lim);
    let (n, v) = (5, Variant::Set);
    let mut tried = 0;
    // (tool, what nft lists for the rule, what it must not list)
    let cases = [
        (Iptables::nfkeeper(), "ip saddr @pktbench", "xt "),
        (Iptables::nft(), "xt match set", "@pktbench"),
        (Iptables::legacy(), "", ""),
    ];
    for (a, want, not) in cases {
        if let Err(why) = a.available() {
            eprintln!("{}: skipped: {why}", a.name());
            continue;
        }
        let inst = v.install(Dialect::Iptables, Proto::Udp, n).unwrap();
        let by_tool = set_restore(&a, &inst).argv[0] == "ipset";
        if let (true, Err(why)) = (by_tool, &ipset) {
            eprintln!("{}: skipped: {why}", a.name());
            continue;
        }
        assert_eq!(by_tool, a.name() != "nfkeeper", "{}", a.name());
        let blocked = v.blocked(n);
        let pair = Pair::new(blocked.and_then(|b| b.src), lim).expect("pair");
        install(&pair.server, &a, &inst, lim).unwrap_or_else(|e| panic!("{e}"));
        let (cl, sv) = pair.places(None);
        for p in [Proto::Udp, Proto::Tcp] {
            verify(&cl, &sv, p, blocked).unwrap_or_else(|e| panic!("{}: {e}", a.name()));
        }
        tried += 1;
        if want.is_empty() {
            continue;
        }
        // nfkeeper's table is `ip nfkeeper_filter`, iptables-nft's `ip filter`.
        let argv = ["nft", "list", "ruleset"];
        let out = pair.server.run(&argv, None, lim).expect("nft list").stdout;
        let rule: Vec<&str> = out
            .lines()
            .filter(|l| l.trim_end().ends_with(" drop"))
            .collect();
        assert_eq!(rule.len(), 1, "{}:\n{out}", a.name());
        assert!(rule[0].contains(want), "{}: {}", a.name(), rule[0]);
        assert!(!rule[0].contains(not), "{}: {}", a.name(), rule[0]);
    }
    eprintln!("{tried} tools checked");
}

/// The quick suite at tiny N with the nft adapter, through the kernel:
/// every form nft has passes its checks (traffic passes, the last rule
/// drops its probe) and yields positive, finite costs.
#[test]
fn tiny_suite_with_nft_root() {
    let Some(_serial) = crate::suites::kernel_test() else {
        return;
    };
    if let Err(why) = Nft.available() {
        eprintln!("skipped: {why}");
        return;
    }
    let plan = Plan {
        sizes: vec![0, 3],
        reps: 2,
        duration: Duration::from_millis(100),
        udp_duration: Duration::from_millis(100),
        ..Plan::new(&opts(), QUICK)
    };
    let ads: Vec<Box<dyn Adapter>> = vec![Box::new(Nft)];
    let rs = run(&plan, &ads);
    // The quick plan: every row but those run on request and h.set.
    let planned = VARIANTS
        .iter()
        .filter(|v| !v.on_request() && v.in_quick())
        .count();
    assert_eq!(rs.len(), planned * 2 * 2);
    for r in &rs {
        let applies = VARIANTS
            .iter()
            .any(|v| r.case.starts_with(v.id()) && v.applies(Dialect::Nft));
        if !applies {
            assert_eq!(r.status, Status::NoForm, "{r:?}");
            continue;
        }
        assert_eq!(r.status, Status::Ok, "{} N={}", r.case, r.n);
        assert_eq!(r.samples.len(), 2);
        assert!(r.samples.iter().all(|s| s.is_finite() && *s > 0.0), "{r:?}");
    }
    // N = 0 of a) and c) is one measurement shown twice; N = 3 is not.
    let of = |case: &str, n| {
        &rs.iter()
            .find(|r| r.case == case && r.n == n)
            .unwrap()
            .samples
    };
    assert_eq!(of("a.addr.udp", 0), of("c.rules.udp", 0));
    assert_ne!(of("a.addr.udp", 3), of("c.rules.udp", 3));
}

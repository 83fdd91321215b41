//! Tests of k.kube: the target read from the ruleset, the plan's rows,
//! the check's verdicts, and (as root) tiny rows through each tool.

use super::super::{run, Given, Plan};
use super::*;
use crate::suites::{Iptables, Nft, Opts};

fn sa(s: &str) -> SocketAddrV4 {
    s.parse().unwrap()
}

/// (N, cluster IP:port, endpoints) of the workload's text: the last
/// service of KUBE-SERVICES and its three DNAT destinations.
#[test]
fn target_is_the_last_service() {
    let cases: [(usize, &str, [&str; 3]); 3] = [
        (
            1,
            "10.96.0.1:80",
            ["10.128.0.2:8080", "10.128.0.3:8080", "10.128.0.4:8080"],
        ),
        (
            1000,
            "10.96.3.250:80",
            [
                "10.129.5.188:8080",
                "10.129.5.189:8080",
                "10.129.5.190:8080",
            ],
        ),
        (
            20_000,
            "10.96.79.250:80",
            [
                "10.148.119.188:8080",
                "10.148.119.189:8080",
                "10.148.119.190:8080",
            ],
        ),
    ];
    for (n, vip, eps) in cases {
        let text = ruleset(n);
        let t = target(&text).unwrap_or_else(|e| panic!("N={n}: {e}"));
        assert_eq!(t.vip, sa(vip), "N={n}");
        let want: Vec<SocketAddrV4> = eps.iter().map(|e| sa(e)).collect();
        assert_eq!(t.endpoints, want, "N={n}");
        assert_eq!(t.listen(), 8080);
        // The target's rule is the N-th and last service rule.
        let rules: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("-A KUBE-SERVICES -d "))
            .collect();
        assert_eq!(rules.len(), n);
        let d = format!("-d {}/32 ", t.vip.ip());
        assert!(rules[n - 1].contains(&d), "{}", rules[n - 1]);
        assert_eq!(text.matches(&d).count(), 2, "KUBE-SERVICES and KUBE-SVC");
    }
}

/// What a text without a reachable service says.
#[test]
fn target_errors() {
    let svc = "-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-A\n";
    let cases: [(String, &str); 6] = [
        ("*nat\nCOMMIT\n".into(), "no service rule"),
        (
            "-A KUBE-SERVICES -d 10.96.0.0/16 -j X\n".into(),
            "no -d ADDR/32",
        ),
        (
            "-A KUBE-SERVICES -d 10.96.0.1/32 -j X\n".into(),
            "no --dport",
        ),
        (svc.to_string(), "KUBE-SVC-A: no endpoint chain"),
        (
            format!("{svc}-A KUBE-SVC-A -j KUBE-SEP-B\n-A KUBE-SEP-B -j RETURN\n"),
            "KUBE-SEP-B: no DNAT rule",
        ),
        (
            format!(
                "{svc}-A KUBE-SVC-A -m statistic --mode random --probability 0.5 -j KUBE-SEP-B\n\
                 -A KUBE-SVC-A -j KUBE-SEP-C\n\
                 -A KUBE-SEP-B -p tcp -j DNAT --to-destination 10.1.0.1:8080\n\
                 -A KUBE-SEP-C -p tcp -j DNAT --to-destination 10.1.0.2:9090\n"
            ),
            "endpoints on different ports",
        ),
    ];
    for (text, want) in cases {
        let e = target(&text).unwrap_err();
        assert!(e.contains(want), "{e} (want {want})");
    }
}

/// Which modes a plan runs: both in the full plan and on `--case k.`;
/// none in `--quick` or for another scenario's case.
#[test]
fn plan_selects_kube_rows() {
    let cases: [(&[&str], bool, &[Mode]); 7] = [
        (&[], false, &MODES),
        (&[], true, &[]),
        (&["k."], true, &MODES),
        (&["k.kube"], false, &MODES),
        (&["k.kube.first"], true, &[Mode::First]),
        (&["a.", "k.kube.steady"], false, &[Mode::Steady]),
        (&["kube."], false, &[]),
    ];
    for (c, quick, want) in cases {
        let o = Opts {
            cases: c.iter().map(|x| x.to_string()).collect(),
            sizes: vec![1000, 5000],
            ..Opts::quick()
        };
        let given = Given {
            quick,
            sizes: true,
            reps: false,
        };
        let p = Plan::new(&o, given);
        assert_eq!(p.kube, want, "{c:?} quick={quick}");
        // N = 0 has no service: every mode at the other sizes.
        let r = rows(&p);
        assert_eq!(r.len(), want.len() * 2, "{c:?}");
        assert!(r.iter().all(|(_, n)| *n > 0), "{r:?}");
        let ids: Vec<&str> = p.kube.iter().map(|m| m.id()).collect();
        assert!(ids.iter().all(|i| i.starts_with("k.kube.")), "{ids:?}");
    }
}

#[test]
fn topology_routes_the_cluster_ip_and_owns_the_endpoints() {
    let t = target(&ruleset(2)).unwrap();
    let (c, s) = topology(&t);
    assert_eq!(c, "route add 10.96.0.2/32 via 198.18.0.2\n");
    assert_eq!(
        s,
        "addr add 10.128.0.66/32 dev lo\naddr add 10.128.0.67/32 dev lo\naddr add 10.128.0.68/32 dev lo\n"
    );
}

/// (where the check's connections landed, the error it gives or none).
#[test]
fn check_verdicts() {
    let t = Target {
        vip: sa("10.96.0.1:80"),
        endpoints: vec![sa("10.1.0.1:8080"), sa("10.1.0.2:8080")],
    };
    let at = |xs: &[&str]| -> Vec<SocketAddr> {
        xs.iter()
            .cycle()
            .take(CHECK_CONNECTIONS)
            .map(|x| x.parse().unwrap())
            .collect()
    };
    let cases: [(Vec<SocketAddr>, Option<&str>); 5] = [
        (at(&["10.1.0.1:8080", "10.1.0.2:8080"]), None),
        (
            Vec::new(),
            Some("0 of 20 TCP connections to 10.96.0.1:80 arrived"),
        ),
        (
            at(&["10.1.0.1:8080"])[..19].to_vec(),
            Some("19 of 20 TCP connections"),
        ),
        (
            at(&["10.1.0.1:8080", "198.18.0.2:8080"]),
            Some("arrived at 198.18.0.2:8080, not at one of its endpoints"),
        ),
        (
            at(&["10.1.0.2:8080"]),
            Some("went to 10.1.0.2:8080: the endpoint is not chosen at random"),
        ),
    ];
    for (landed, want) in cases {
        match (judge(&t, &landed), want) {
            (Ok(()), None) => {}
            (Err(e), Some(w)) => assert!(e.contains(w), "{e} (want {w})"),
            (got, want) => panic!("{landed:?}: {got:?}, want {want:?}"),
        }
    }
}

/// Without the rules nothing reaches the cluster IP: the check fails,
/// so a pass proves the DNAT.
#[test]
fn check_fails_without_the_rules_root() {
    let Some(_serial) = crate::suites::kernel_test() else {
        return;
    };
    let lim = Duration::from_secs(10);
    let t = target(&ruleset(3)).unwrap();
    let pair = Pair::new(None, lim).expect("pair");
    let (c, s) = topology(&t);
    ip_batch(&pair.client, &c, lim).unwrap();
    ip_batch(&pair.server, &s, lim).unwrap();
    let (cl, sv) = pair.places(None);
    let e = check(&cl, &sv, &t).unwrap_err();
    assert!(e.contains("0 of 20"), "{e}");
}

/// Both k.kube rows at N = 3 through every tool present (nfkeeper where
/// `NFKEEPER_BIN` or `PATH` has it): the iptables tools, and nft with
/// kube-proxy's nftables mode, pass the check and measure positive, finite
/// costs; N = 0 is no row.
#[test]
fn tiny_kube_rows_root() {
    let Some(_serial) = crate::suites::kernel_test() else {
        return;
    };
    let o = Opts {
        cases: vec!["k.".into()],
        ..Opts::quick()
    };
    let plan = Plan {
        sizes: vec![0, 3],
        reps: 2,
        duration: Duration::from_millis(100),
        udp_duration: Duration::from_millis(100),
        ..Plan::new(&o, Given::default())
    };
    assert!(plan.variants.is_empty(), "{:?}", plan.variants);
    let ads: Vec<Box<dyn Adapter>> = vec![
        Box::new(Iptables::nfkeeper()),
        Box::new(Iptables::legacy()),
        Box::new(Iptables::nft()),
        Box::new(Nft),
    ];
    let rs = run(&plan, &ads);
    assert_eq!(rs.len(), MODES.len() * ads.len(), "{rs:#?}");
    let mut measured = 0;
    for r in &rs {
        assert_eq!(r.n, 3);
        match r.adapter.as_str() {
            _ if matches!(r.status, Status::Unavailable(_)) => {
                eprintln!("{}: skipped: {:?}", r.adapter, r.status)
            }
            _ => {
                assert_eq!(r.status, Status::Ok, "{} {}", r.case, r.adapter);
                assert_eq!(r.samples.len(), 2, "{r:?}");
                assert!(r.samples.iter().all(|s| s.is_finite() && *s > 0.0), "{r:?}");
                measured += 1;
            }
        }
    }
    eprintln!("{measured} rows measured");
}

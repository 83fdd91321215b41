//! Real packets through kube-proxy's endpoint selection compiled into a
//! `numgen random mod 3` verdict map: client — router — server (see
//! `common::routed`); the router holds a KUBE-SERVICES / KUBE-SVC /
//! KUBE-SEP chain set as kube-proxy writes it (loaded with
//! `iptables-restore --noflush`), its three endpoints DNAT to three
//! server ports. Every connection reaches one endpoint, each endpoint a
//! share near a third, and the endpoint rules' counters add up to the
//! connections. Skips without root, `ip` or python3.

mod common;

use common::routed;

const CONNECTIONS: u32 = 300;

/// kube-proxy's nat rules for service 10.89.1.1:8000 over endpoints
/// 10.89.2.2:9091..9093 (probabilities as kube-proxy prints them).
const KUBE: &str = "\
*nat
:KUBE-SERVICES - [0:0]
:KUBE-SVC-TEST - [0:0]
:KUBE-SEP-1 - [0:0]
:KUBE-SEP-2 - [0:0]
:KUBE-SEP-3 - [0:0]
-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.89.1.1/32 -p tcp -m comment --comment \"ns/svc:http cluster IP\" -m tcp --dport 8000 -j KUBE-SVC-TEST
-A KUBE-SVC-TEST -m comment --comment \"ns/svc:http -> 10.89.2.2:9091\" -m statistic --mode random --probability 0.3333333333 -j KUBE-SEP-1
-A KUBE-SVC-TEST -m comment --comment \"ns/svc:http -> 10.89.2.2:9092\" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-2
-A KUBE-SVC-TEST -m comment --comment \"ns/svc:http -> 10.89.2.2:9093\" -j KUBE-SEP-3
-A KUBE-SEP-1 -p tcp -m comment --comment \"ns/svc:http\" -m tcp -j DNAT --to-destination 10.89.2.2:9091
-A KUBE-SEP-2 -p tcp -m comment --comment \"ns/svc:http\" -m tcp -j DNAT --to-destination 10.89.2.2:9092
-A KUBE-SEP-3 -p tcp -m comment --comment \"ns/svc:http\" -m tcp -j DNAT --to-destination 10.89.2.2:9093
COMMIT
";

#[test]
fn numgen_map_spreads_connections_over_endpoints() {
    let Some(net) = routed("kube") else { return };
    let _srv = net.server.serve(&["t9091", "t9092", "t9093"]);
    let file = std::env::temp_dir().join(format!("nfk-kube-{}.rules", std::process::id()));
    std::fs::write(&file, KUBE).expect("write rules");
    net.router.nfk(&format!(
        "--compile-runs=16+numgen iptables-restore --noflush {}",
        file.to_str().expect("path")
    ));
    let _ = std::fs::remove_file(&file);
    let listing = net.router.ruleset();
    assert!(
        listing.contains("numgen random mod 3"),
        "the service chain is one numgen map\n{listing}"
    );
    let mut seen = [0u32; 3];
    for i in 0..CONNECTIONS {
        let answer = net.client.talk("10.89.1.1", 8000);
        let port = answer
            .strip_prefix("10.89.2.2:")
            .and_then(|r| r.strip_suffix(" 10.89.1.2"))
            .and_then(|p| p.parse::<usize>().ok())
            .filter(|p| (9091..=9093).contains(p))
            .unwrap_or_else(|| panic!("connection {i}: {answer}\n{listing}"));
        seen[port - 9091] += 1;
    }
    // A third each: 100 ± 8.2 (one standard deviation); ±50 is > 6 of them.
    for (i, n) in seen.iter().enumerate() {
        assert!(
            (50..=150).contains(n),
            "endpoint {}: {n} of {CONNECTIONS} connections: {seen:?}",
            i + 1
        );
    }
    // Each endpoint rule counted exactly the connections it picked (nat
    // rules see a connection's first packet only).
    for (i, n) in seen.iter().enumerate() {
        assert_eq!(
            net.router
                .rule_packets("iptables", "nat", "KUBE-SVC-TEST", i as u32 + 1),
            u64::from(*n),
            "endpoint {}: {seen:?}\n{}",
            i + 1,
            net.router.ruleset()
        );
    }
}

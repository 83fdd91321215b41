//! Real packets, matches: conntrack states (`-m conntrack` and `-m state`,
//! both families), `-m iprange`, `-m limit`, `-m statistic`, and a sweep of
//! simpler matches (length, ttl, tos, dscp, pkttype, tcp flags, interfaces,
//! addresses, mac, fragments, ports), written with nfkeeper and checked
//! with TCP connects, UDP datagrams and pings over a veth pair.
//! Skips without root, `ip` or python3.

mod common;

use common::{lan, CLI4, CLI6, SRV4, SRV6};

/// Per family: personality, server and client address, the ICMP error a
/// closed UDP port answers with, and rules the client's INPUT always needs
/// (IPv6 neighbour discovery is not tracked, and without it the link dies).
struct Family {
    personality: &'static str,
    server: &'static str,
    client: &'static str,
    unreachable: &'static str,
    always: &'static [&'static str],
}

const V4: Family = Family {
    personality: "iptables",
    server: SRV4,
    client: CLI4,
    unreachable: "icmp 3 3",
    always: &[],
};

const V6: Family = Family {
    personality: "ip6tables",
    server: SRV6,
    client: CLI6,
    unreachable: "icmp6 1 4",
    always: &[
        "-p ipv6-icmp --icmpv6-type neighbour-solicitation -j ACCEPT",
        "-p ipv6-icmp --icmpv6-type neighbour-advertisement -j ACCEPT",
    ],
};

#[test]
fn conntrack_states_ipv4() {
    conntrack_states("ct4", &V4);
}

#[test]
fn conntrack_states_ipv6() {
    conntrack_states("ct6", &V6);
}

/// A stateful client: its INPUT drops everything but the states listed.
/// NEW (the server connecting in), ESTABLISHED (the SYN-ACK of the client's
/// own connect) and RELATED (the port unreachable its UDP datagram causes)
/// are each seen only when allowed. Both spellings of the match.
fn conntrack_states(tag: &str, fam: &Family) {
    let Some(net) = lan(tag) else { return };
    let (server, client) = (&net.server, &net.client);
    let _srv = server.serve(&["t80"]);
    let _cli = client.serve(&["t8080"]);
    let matches = ["-m conntrack --ctstate", "-m state --state"];
    // (states allowed, client → server tcp 80, server → client tcp 8080,
    // client → server udp 9 (a closed port) answered by `unreachable`).
    let cases = [
        ("ESTABLISHED", "ok", "timeout", false),
        ("ESTABLISHED,RELATED", "ok", "timeout", true),
        ("NEW", "timeout", "ok", false),
        ("RELATED", "timeout", "timeout", true),
        ("NEW,ESTABLISHED,RELATED", "ok", "ok", true),
    ];
    let ipt = fam.personality;
    client.nfk(&format!("{ipt} -P INPUT DROP"));
    for m in matches {
        for (states, out_tcp, in_tcp, related) in cases {
            for rule in fam.always {
                client.nfk(&format!("{ipt} -A INPUT {rule}"));
            }
            client.nfk(&format!("{ipt} -A INPUT {m} {states} -j ACCEPT"));
            // Independent flows: probe them at once to wait out drops once.
            let got = std::thread::scope(|s| {
                let a = s.spawn(|| client.tcp(fam.server, 80));
                let b = s.spawn(|| server.tcp(fam.client, 8080));
                let c = s.spawn(|| client.udp(fam.server, 9));
                let join = |h: std::thread::ScopedJoinHandle<'_, String>| h.join().expect("probe");
                (join(a), join(b), join(c))
            });
            let out_udp = if related { fam.unreachable } else { "timeout" };
            let want = (out_tcp.into(), in_tcp.into(), out_udp.into());
            assert_eq!(
                got,
                want,
                "client INPUT policy DROP, `{ipt} {m} {states} -j ACCEPT`: \
                 (outgoing tcp, incoming tcp, outgoing udp to a closed port)\n{}",
                client.ruleset()
            );
            client.nfk(&format!("{ipt} -F INPUT"));
        }
    }
}

/// `--src-range` / `--dst-range`, with and without `!`, including and
/// excluding the client's address.
#[test]
fn iprange() {
    let Some(net) = lan("iprange") else { return };
    let (server, client) = (&net.server, &net.client);
    let ports = ["t81", "t82", "t83", "t84", "t85", "t86"];
    let _srv = server.serve(&ports);
    server.nfk_all(
        "
        iptables -A INPUT -p tcp --dport 81 -m iprange --src-range 10.89.0.2-10.89.0.5 -j DROP
        iptables -A INPUT -p tcp --dport 82 -m iprange --src-range 10.89.0.3-10.89.0.9 -j DROP
        iptables -A INPUT -p tcp --dport 83 -m iprange ! --src-range 10.89.0.3-10.89.0.9 -j DROP
        iptables -A INPUT -p tcp --dport 84 -m iprange --src-range 10.89.0.0-10.89.0.2 -j DROP
        iptables -A INPUT -p tcp --dport 85 -m iprange --dst-range 10.89.0.1-10.89.0.1 -j DROP
        iptables -A INPUT -p tcp --dport 86 -m iprange --src-range 10.89.0.1-10.89.0.9 ! --dst-range 10.89.0.0-10.89.0.255 -j DROP
        ",
    );
    let cases = [
        (81, "timeout", "client inside the source range"),
        (82, "ok", "client below the source range"),
        (83, "timeout", "client outside a negated source range"),
        (84, "timeout", "client at the range's upper end"),
        (85, "timeout", "server is the whole destination range"),
        (86, "ok", "destination inside a negated range"),
    ];
    client.expect_tcp(server, SRV4, &cases);
}

/// `--limit 1/min --limit-burst 3`: of a burst of 10 pings exactly the
/// first 3 pass (the bucket refills one token a minute), the rest fall to
/// the DROP after it; both counters show the split.
#[test]
fn limit_passes_exactly_the_burst() {
    let Some(net) = lan("limit") else { return };
    let (server, client) = (&net.server, &net.client);
    server.nfk_all(
        "
        iptables -A INPUT -p icmp --icmp-type echo-request -m limit --limit 1/min --limit-burst 3 -j ACCEPT
        iptables -A INPUT -p icmp --icmp-type echo-request -j DROP
        ",
    );
    assert_eq!(
        client.ping(SRV4, 10, "0.002"),
        [0, 1, 2],
        "answered pings\n{}",
        server.ruleset()
    );
    let counts = (
        server.rule_packets("iptables", "filter", "INPUT", 1),
        server.rule_packets("iptables", "filter", "INPUT", 2),
    );
    assert_eq!(counts, (3, 7), "(limit rule, drop rule) packet counters");
}

/// `--mode random --probability 0.5` drops roughly half of 400 pings (the
/// band is wide: a binomial(400, 0.5) falls outside 30–70% with
/// probability far below 1e-15); `--mode nth --every 3` drops exactly
/// every third, starting at `--packet`.
#[test]
fn statistic_random_and_nth() {
    let Some(net) = lan("stat") else { return };
    let (server, client) = (&net.server, &net.client);
    server.nfk("iptables -A INPUT -p icmp -m statistic --mode random --probability 0.5 -j DROP");
    let answered = client.ping(SRV4, 400, "0.0005").len();
    assert!(
        (120..=280).contains(&answered),
        "random 0.5 let {answered} of 400 pings through\n{}",
        server.ruleset()
    );
    let dropped = server.rule_packets("iptables", "filter", "INPUT", 1);
    assert_eq!(
        dropped as usize,
        400 - answered,
        "drop counter vs unanswered pings"
    );

    // (--packet, answered pings of 9, dropped: 0-based positions p, p+3, p+6).
    let cases = [
        ("0", vec![1, 2, 4, 5, 7, 8]),
        ("1", vec![0, 2, 3, 5, 6, 8]),
        ("2", vec![0, 1, 3, 4, 6, 7]),
    ];
    for (packet, want) in cases {
        server.nfk(&format!(
            "iptables -R INPUT 1 -p icmp -m statistic --mode nth --every 3 --packet {packet} -j DROP"
        ));
        assert_eq!(
            client.ping(SRV4, 9, "0.002"),
            want,
            "nth --every 3 --packet {packet}: answered pings\n{}",
            server.ruleset()
        );
        assert_eq!(server.rule_packets("iptables", "filter", "INPUT", 1), 3);
    }
}

/// One DROP rule per port, each with a match that is true or false for the
/// client's SYN (60 bytes, TTL 64, TOS 0, unicast, not a fragment, from an
/// ephemeral port, in on `nfk0`): a true match drops (timeout), a false one
/// lets the connect through. `MAC` stands for the client's MAC address.
const SWEEP: &[(u16, &str, bool)] = &[
    (100, "-m length --length 0:100", true),
    (101, "-m length --length 1000:2000", false),
    (102, "-m ttl --ttl-eq 64", true),
    (103, "-m ttl --ttl-gt 64", false),
    (104, "-m ttl --ttl-lt 65", true),
    (105, "-m tos --tos 0x00", true),
    (106, "-m tos --tos 0x10", false),
    (107, "-m dscp --dscp 0", true),
    (108, "-m dscp --dscp 10", false),
    (109, "-m pkttype --pkt-type unicast", true),
    (110, "-m pkttype --pkt-type broadcast", false),
    (111, "--tcp-flags SYN,ACK SYN", true),
    (112, "--tcp-flags SYN,RST RST", false),
    (113, "--syn", true),
    (114, "-i nfk0", true),
    (115, "-i lo", false),
    (116, "! -i nfk0", false),
    (117, "-i nfk+", true),
    (118, "-s 10.89.0.0/24", true),
    (119, "! -s 10.89.0.0/24", false),
    (120, "-s 10.89.0.128/25", false),
    (121, "-d 10.89.0.1/32", true),
    (122, "-m mac --mac-source MAC", true),
    (123, "-m mac --mac-source 02:00:00:00:00:99", false),
    (124, "-m mac ! --mac-source MAC", false),
    (125, "-m comment --comment sweep", true),
    (126, "-f", false),
    (127, "! -f", true),
    (128, "--sport 1024:65535", true),
    (129, "--sport 1:1023", false),
];

#[test]
fn match_sweep() {
    let Some(net) = lan("sweep") else { return };
    let (server, client) = (&net.server, &net.client);
    let specs: Vec<String> = SWEEP.iter().map(|(p, _, _)| format!("t{p}")).collect();
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    let _srv = server.serve(&specs);
    let mac = client.exec(&["cat", "/sys/class/net/nfk1/address"]);
    let mac = String::from_utf8_lossy(&mac.stdout).trim().to_string();
    assert_eq!(mac.len(), 17, "client MAC {mac:?}");
    for (port, m, _) in SWEEP {
        let m = m.replace("MAC", &mac);
        server.nfk(&format!(
            "iptables -A INPUT -p tcp --dport {port} {m} -j DROP"
        ));
    }
    // Independent connections: probe them all at once.
    let got: Vec<String> = std::thread::scope(|s| {
        let probes: Vec<_> = SWEEP
            .iter()
            .map(|(port, _, _)| s.spawn(move || client.tcp(SRV4, *port)))
            .collect();
        probes
            .into_iter()
            .map(|h| h.join().expect("probe"))
            .collect()
    });
    let wrong: Vec<String> = SWEEP
        .iter()
        .zip(&got)
        .filter(|((_, _, hit), got)| got.as_str() != if *hit { "timeout" } else { "ok" })
        .map(|((port, m, hit), got)| format!("port {port} `{m}` matches: {hit}, connect: {got}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "wrong verdicts:\n{}\n{}",
        wrong.join("\n"),
        server.ruleset()
    );
}

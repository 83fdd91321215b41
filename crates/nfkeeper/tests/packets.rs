//! Real packets, basic verdicts: two network namespaces joined by a veth
//! pair; rules written with nfkeeper (direct mode) in the server's
//! namespace; TCP connections, UDP datagrams and pings from the client must
//! be accepted, dropped (time out) or rejected exactly as the rules say, and
//! counters must count. Skips without root, `ip` or python3.

mod common;

use common::{lan, SRV4};

#[test]
fn tcp_verdicts_and_counters_over_veth() {
    let Some(net) = lan("tcp") else { return };
    let (server, client) = (&net.server, &net.client);
    let _listener = server.serve(&["t80", "t81", "t82", "t83", "t84"]);
    assert_eq!(client.tcp(SRV4, 80), "ok", "no rules yet");

    server.nfk_all(
        "
        iptables -A INPUT -p tcp --dport 81 -j DROP
        iptables -A INPUT -p tcp --dport 82 -j REJECT --reject-with tcp-reset
        iptables -N web
        iptables -A web -s 10.89.0.2 -j DROP
        iptables -A INPUT -p tcp -m multiport --dports 83,84 -j web
        iptables -I web 1 -p tcp --dport 84 -j RETURN
        ",
    );
    let cases = [
        (80, "ok"),
        (81, "timeout"),
        (82, "refused"),
        (83, "timeout"),
        (84, "ok"),
    ];
    for (port, want) in cases {
        assert_eq!(
            client.tcp(SRV4, port),
            want,
            "port {port}\n{}",
            server.ruleset()
        );
    }

    // The DROP rule saw the SYN (and maybe a retransmission): counters count.
    let dropped = server.rule_packets("iptables", "filter", "INPUT", 1);
    assert!(
        dropped >= 1,
        "DROP rule counted nothing\n{}",
        server.ruleset()
    );

    // Policy DROP on INPUT with an exception for established traffic and port
    // 80: only new connections to 80 get through.
    server.nfk_all(
        "
        iptables -F INPUT
        iptables -A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
        iptables -A INPUT -p tcp --dport 80 -j ACCEPT
        iptables -P INPUT DROP
        ",
    );
    assert_eq!(
        client.tcp(SRV4, 80),
        "ok",
        "allowed by rule under policy DROP"
    );
    assert_eq!(client.tcp(SRV4, 82), "timeout", "dropped by policy");
}

/// UDP and ICMP echo, not only TCP: accept, drop, and the rule order that
/// decides between them.
#[test]
fn udp_and_icmp_verdicts() {
    let Some(net) = lan("udp") else { return };
    let (server, client) = (&net.server, &net.client);
    let _listener = server.serve(&["u5000", "u5001", "u5002"]);
    assert_eq!(client.udp(SRV4, 5000), "reply nfkeeper", "no rules yet");
    assert_eq!(client.ping(SRV4, 1, "0"), [0], "no rules yet");

    server.nfk_all(
        "
        iptables -A INPUT -p udp --dport 5001 -j DROP
        iptables -A INPUT -p udp --dport 5002 -j ACCEPT
        iptables -A INPUT -p udp -m udp --dport 5000:5002 -j DROP
        ",
    );
    let cases = [
        (5000, "timeout"),
        (5001, "timeout"),
        (5002, "reply nfkeeper"),
    ];
    for (port, want) in cases {
        assert_eq!(
            client.udp(SRV4, port),
            want,
            "udp port {port}\n{}",
            server.ruleset()
        );
    }

    server.nfk("iptables -A INPUT -p icmp --icmp-type echo-request -j DROP");
    assert!(
        client.ping(SRV4, 2, "0").is_empty(),
        "echo-request DROP\n{}",
        server.ruleset()
    );
    server.nfk("iptables -I INPUT 1 -p icmp --icmp-type 8 -s 10.89.0.2 -j ACCEPT");
    assert_eq!(
        client.ping(SRV4, 2, "0"),
        [0, 1],
        "echo-request ACCEPT before the DROP\n{}",
        server.ruleset()
    );
    assert_eq!(server.rule_packets("iptables", "filter", "INPUT", 1), 2);
    assert_eq!(server.rule_packets("iptables", "filter", "INPUT", 5), 2);
}

/// `-g` (goto) vs `-j` (jump): when a jumped-to chain ends, processing goes
/// on in the chain that jumped; when a goto'd chain ends, it goes on in the
/// chain that called the one that did the goto.
#[test]
fn goto_returns_to_the_callers_caller() {
    let Some(net) = lan("goto") else { return };
    let (server, client) = (&net.server, &net.client);
    let _listener = server.serve(&["t90", "t91", "t92"]);
    server.nfk_all(
        "
        iptables -N outer
        iptables -N inner
        iptables -A inner -p tcp --dport 92 -j RETURN
        iptables -A outer -p tcp --dport 90 -j inner
        iptables -A outer -p tcp --dport 91 -g inner
        iptables -A outer -p tcp --dport 92 -g inner
        iptables -A outer -j DROP
        iptables -A INPUT -p tcp --dport 90:92 -j outer
        iptables -A INPUT -p tcp --dport 90:92 -j REJECT --reject-with tcp-reset
        ",
    );
    let cases = [
        (90, "timeout", "jump: back in outer, which drops"),
        (
            91,
            "refused",
            "goto: inner's end returns to INPUT, which resets",
        ),
        (92, "refused", "goto: RETURN in inner also returns to INPUT"),
    ];
    client.expect_tcp(server, SRV4, &cases);

    // A goto from a base chain: the end of the target applies the policy.
    server.nfk_all(
        "
        iptables -F INPUT
        iptables -A INPUT -p tcp --dport 90 -g inner
        iptables -A INPUT -p tcp --dport 90 -j ACCEPT
        iptables -P INPUT DROP
        ",
    );
    assert_eq!(
        client.tcp(SRV4, 90),
        "timeout",
        "goto from INPUT: policy DROP, not the ACCEPT after the goto\n{}",
        server.ruleset()
    );
    server.nfk("iptables -R INPUT 1 -p tcp --dport 90 -j inner");
    assert_eq!(
        client.tcp(SRV4, 90),
        "ok",
        "jump from INPUT: the ACCEPT after the jump\n{}",
        server.ruleset()
    );
}

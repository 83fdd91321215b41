//! Real packets, REJECT: every `--reject-with` type of iptables and
//! ip6tables, written with nfkeeper in the server's namespace. The client
//! sends one UDP datagram per type and reads the ICMP error it caused from
//! its socket's error queue (IP_RECVERR / IPV6_RECVERR), so type and code
//! are checked exactly; `tcp-reset` is checked with a TCP connect. Also
//! ICMP rejects of TCP connects and REJECT in a router's FORWARD. Skips
//! without root, `ip` or python3.

mod common;

use common::{lan, routed, Lan, SRV4, SRV6};

/// (`--reject-with` value or "" for the default, expected probe answer).
/// ICMP destination unreachable is type 3 with the code of the reason.
const V4: &[(&str, &str)] = &[
    ("", "icmp 3 3"),
    ("icmp-net-unreachable", "icmp 3 0"),
    ("icmp-host-unreachable", "icmp 3 1"),
    ("icmp-proto-unreachable", "icmp 3 2"),
    ("icmp-port-unreachable", "icmp 3 3"),
    ("icmp-net-prohibited", "icmp 3 9"),
    ("icmp-host-prohibited", "icmp 3 10"),
    ("icmp-admin-prohibited", "icmp 3 13"),
];

/// ICMPv6 destination unreachable is type 1.
const V6: &[(&str, &str)] = &[
    ("", "icmp6 1 4"),
    ("icmp6-no-route", "icmp6 1 0"),
    ("no-route", "icmp6 1 0"),
    ("icmp6-adm-prohibited", "icmp6 1 1"),
    ("adm-prohibited", "icmp6 1 1"),
    ("icmp6-addr-unreachable", "icmp6 1 3"),
    ("addr-unreach", "icmp6 1 3"),
    ("icmp6-port-unreachable", "icmp6 1 4"),
    ("port-unreach", "icmp6 1 4"),
];

/// One REJECT rule per type, each on its own UDP port (6000 + index); port
/// 5999 has no rule and must echo. Then a TCP port with tcp-reset.
fn reject_every_type(net: &Lan, personality: &str, host: &str, types: &[(&str, &str)]) {
    let (server, client) = (&net.server, &net.client);
    let _listener = server.serve(&["u5999", "t7000", "t7001"]);
    for (i, (with, _)) in types.iter().enumerate() {
        let opt = if with.is_empty() {
            String::new()
        } else {
            format!("--reject-with {with}")
        };
        server.nfk(&format!(
            "{personality} -A INPUT -p udp --dport {} -j REJECT {opt}",
            6000 + i
        ));
    }
    server.nfk(&format!(
        "{personality} -A INPUT -p tcp --dport 7001 -j REJECT --reject-with tcp-reset"
    ));

    assert_eq!(client.udp(host, 5999), "reply nfkeeper", "no rule on 5999");
    for (i, (with, want)) in types.iter().enumerate() {
        let port = 6000 + i as u16;
        assert_eq!(
            client.udp(host, port),
            *want,
            "{personality} REJECT --reject-with {with:?} (udp port {port})\n{}",
            server.ruleset()
        );
        let num = i as u32 + 1;
        assert_eq!(
            server.rule_packets(personality, "filter", "INPUT", num),
            1,
            "{personality} rule {num} counts the one datagram"
        );
    }
    assert_eq!(client.tcp(host, 7000), "ok", "no rule on tcp 7000");
    assert_eq!(
        client.tcp(host, 7001),
        "refused",
        "{personality} REJECT --reject-with tcp-reset\n{}",
        server.ruleset()
    );
}

#[test]
fn ipv4_reject_types() {
    let Some(net) = lan("rej4") else { return };
    reject_every_type(&net, "iptables", SRV4, V4);
}

#[test]
fn ipv6_reject_types() {
    let Some(net) = lan("rej6") else { return };
    reject_every_type(&net, "ip6tables", SRV6, V6);
}

/// An ICMP reject answers a TCP connect too: the client's connect fails
/// with the error the ICMP code maps to, not a timeout. The kernel only
/// records (softly) an ICMP error that arrives while connect() still holds
/// the socket, which over veth it can for the first SYN; the error for the
/// retransmission (1 s later) then ends the connect, hence the long wait.
#[test]
fn icmp_reject_of_tcp_connects() {
    let Some(net) = lan("rejtcp") else { return };
    let (server, client) = (&net.server, &net.client);
    let _listener = server.serve(&["t7100", "t7101", "t7102"]);
    server.nfk_all(
        "
        iptables -A INPUT -p tcp --dport 7100 -j REJECT
        iptables -A INPUT -p tcp --dport 7101 -j REJECT --reject-with icmp-host-unreachable
        ip6tables -A INPUT -p tcp --dport 7100 -j REJECT
        ip6tables -A INPUT -p tcp --dport 7101 -j REJECT --reject-with icmp6-adm-prohibited
        ",
    );
    let cases = [
        (SRV4, 7100, "refused"),
        (SRV4, 7101, "error EHOSTUNREACH"),
        (SRV4, 7102, "ok"),
        (SRV6, 7100, "refused"),
        (SRV6, 7101, "error EACCES"),
        (SRV6, 7102, "ok"),
    ];
    for (host, port, want) in cases {
        assert_eq!(
            client.tcp_within("2.5", host, port),
            want,
            "tcp {host} port {port}\n{}",
            server.ruleset()
        );
    }
}

/// REJECT in FORWARD: the router answers for the server, with a reset or
/// the ICMP error asked for, over both families.
#[test]
fn reject_in_forward() {
    let Some(net) = routed("rejfwd") else { return };
    let _srv = net.server.serve(&["t80", "t81", "u82"]);
    net.router.nfk_all(
        "
        iptables -A FORWARD -p tcp --dport 81 -j REJECT --reject-with tcp-reset
        iptables -A FORWARD -p udp --dport 82 -j REJECT --reject-with icmp-admin-prohibited
        ip6tables -A FORWARD -p tcp --dport 81 -j REJECT --reject-with tcp-reset
        ip6tables -A FORWARD -p udp --dport 82 -j REJECT --reject-with icmp6-adm-prohibited
        ",
    );
    for host in ["10.89.2.2", "fd89:2::2"] {
        let got = (
            net.client.tcp(host, 80),
            net.client.tcp(host, 81),
            net.client.udp(host, 82),
        );
        let unreach = if host.contains(':') {
            "icmp6 1 1"
        } else {
            "icmp 3 13"
        };
        assert_eq!(
            got,
            ("ok".into(), "refused".into(), unreach.into()),
            "{host}: (tcp 80, tcp 81, udp 82)\n{}",
            net.router.ruleset()
        );
    }
}

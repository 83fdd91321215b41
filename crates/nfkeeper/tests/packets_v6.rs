//! Real packets over IPv6: the ip6tables personality writes accept, drop,
//! reject, jump/RETURN and policy rules in the server's namespace; TCP
//! connects, UDP datagrams and ICMPv6 echo from the client over the veth's
//! IPv6 addresses must get exactly those verdicts, and the IPv4 table must
//! not be involved. Skips without root, `ip` or python3.

mod common;

use common::{lan, SRV4, SRV6};

#[test]
fn ipv6_tcp_udp_icmp_verdicts() {
    let Some(net) = lan("v6") else { return };
    let (server, client) = (&net.server, &net.client);
    let _srv = server.serve(&["t80", "t81", "t82", "t83", "t84", "u5000", "u5001"]);
    assert_eq!(client.tcp(SRV6, 80), "ok", "no rules yet");

    server.nfk_all(
        "
        ip6tables -A INPUT -p tcp --dport 81 -j DROP
        ip6tables -A INPUT -p tcp --dport 82 -j REJECT --reject-with tcp-reset
        ip6tables -N web
        ip6tables -A web -p tcp --dport 84 -j RETURN
        ip6tables -A web -s fd89::2/128 -j DROP
        ip6tables -A INPUT -p tcp -m multiport --dports 83,84 -j web
        ip6tables -A INPUT -p udp --dport 5001 -j DROP
        ip6tables -A INPUT -s fd89::/64 -p ipv6-icmp --icmpv6-type echo-request -j DROP
        ",
    );
    let tcp = [
        (80, "ok"),
        (81, "timeout"),
        (82, "refused"),
        (83, "timeout"),
        (84, "ok"),
    ];
    for (port, want) in tcp {
        assert_eq!(
            client.tcp(SRV6, port),
            want,
            "tcp6 port {port}\n{}",
            server.ruleset()
        );
    }
    let udp = [(5000, "reply nfkeeper"), (5001, "timeout")];
    for (port, want) in udp {
        assert_eq!(
            client.udp(SRV6, port),
            want,
            "udp6 port {port}\n{}",
            server.ruleset()
        );
    }
    assert!(
        client.ping(SRV6, 2, "0").is_empty(),
        "echo-request DROP\n{}",
        server.ruleset()
    );
    assert_eq!(server.rule_packets("ip6tables", "filter", "INPUT", 5), 2);

    // The same ports over IPv4 are untouched by the ip6 table.
    for port in [81, 82, 83] {
        assert_eq!(client.tcp(SRV4, port), "ok", "tcp4 port {port}");
    }
    assert_eq!(client.ping(SRV4, 1, "0"), [0], "ping over IPv4");

    // Policy DROP, with neighbour discovery and established traffic let in
    // (without ND the link itself stops working).
    server.nfk_all(
        "
        ip6tables -F INPUT
        ip6tables -A INPUT -p ipv6-icmp --icmpv6-type neighbour-solicitation -j ACCEPT
        ip6tables -A INPUT -p ipv6-icmp --icmpv6-type neighbour-advertisement -j ACCEPT
        ip6tables -A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
        ip6tables -A INPUT -p tcp --dport 80 -j ACCEPT
        ip6tables -P INPUT DROP
        ",
    );
    assert_eq!(client.tcp(SRV6, 80), "ok", "accepted under policy DROP");
    assert_eq!(client.tcp(SRV6, 84), "timeout", "dropped by policy");
    assert_eq!(client.udp(SRV6, 5000), "timeout", "dropped by policy");
    assert_eq!(client.tcp(SRV4, 84), "ok", "IPv4 policy unchanged");
}

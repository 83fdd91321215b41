//! Real packets, NAT: client — router — server in three namespaces (see
//! `common::routed`), IPv4 and IPv6, rules written with nfkeeper in the
//! client's, router's or server's namespace. The server answers every connection with the
//! address and port it was reached on and the peer address it saw, so each
//! rewrite is checked end to end. Skips without root, `ip` or python3.

mod common;

use common::routed;

/// Which namespace a case's rules go to.
#[derive(Clone, Copy)]
enum On {
    Client,
    Router,
    Server,
}

/// Each case: the rules (the nat tables are flushed after each), the
/// namespace they go to, the address the client connects to, and the
/// server's answer `LOCALADDR:LOCALPORT PEERADDR`.
struct Case {
    what: &'static str,
    on: On,
    rules: &'static str,
    to: (&'static str, u16),
    want: &'static str,
}

const CASES: &[Case] = &[
    Case {
        what: "no NAT: the server sees the client",
        on: On::Router,
        rules: "",
        to: ("10.89.2.2", 9090),
        want: "10.89.2.2:9090 10.89.1.2",
    },
    Case {
        what: "MASQUERADE: the server sees the router's outgoing address",
        on: On::Router,
        rules: "iptables -t nat -A POSTROUTING -o rs0 -j MASQUERADE",
        to: ("10.89.2.2", 9090),
        want: "10.89.2.2:9090 10.89.2.1",
    },
    Case {
        what: "SNAT: the server sees the translated source",
        on: On::Router,
        rules: "iptables -t nat -A POSTROUTING -s 10.89.1.2 -p tcp -j SNAT --to-source 10.89.2.9",
        to: ("10.89.2.2", 9090),
        want: "10.89.2.2:9090 10.89.2.9",
    },
    Case {
        what: "DNAT: address and port rewritten to reach the server",
        on: On::Router,
        rules: "iptables -t nat -A PREROUTING -d 10.89.1.1 -p tcp --dport 8000 -j DNAT --to-destination 10.89.2.2:9091",
        to: ("10.89.1.1", 8000),
        want: "10.89.2.2:9091 10.89.1.2",
    },
    Case {
        what: "DNAT to an address only: the port stays",
        on: On::Router,
        rules: "iptables -t nat -A PREROUTING -p tcp --dport 9090 -j DNAT --to-destination 10.89.2.2",
        to: ("10.89.1.1", 9090),
        want: "10.89.2.2:9090 10.89.1.2",
    },
    Case {
        what: "DNAT and SNAT together",
        on: On::Router,
        rules: "
            iptables -t nat -A PREROUTING -p tcp --dport 8001 -j DNAT --to-destination 10.89.2.2:9090
            iptables -t nat -A POSTROUTING -d 10.89.2.2 -p tcp --dport 9090 -j SNAT --to-source 10.89.2.9
        ",
        to: ("10.89.1.1", 8001),
        want: "10.89.2.2:9090 10.89.2.9",
    },
    Case {
        what: "REDIRECT on the server: to a local port",
        on: On::Server,
        rules: "iptables -t nat -A PREROUTING -p tcp --dport 7001 -j REDIRECT --to-ports 9091",
        to: ("10.89.2.2", 7001),
        want: "10.89.2.2:9091 10.89.1.2",
    },
    Case {
        what: "DNAT in OUTPUT: the client's own connections rewritten",
        on: On::Client,
        rules: "iptables -t nat -A OUTPUT -d 10.89.9.9 -p tcp --dport 80 -j DNAT --to-destination 10.89.2.2:9091",
        to: ("10.89.9.9", 80),
        want: "10.89.2.2:9091 10.89.1.2",
    },
    Case {
        what: "NETMAP in PREROUTING: the destination's network mapped, its host kept",
        on: On::Router,
        rules: "iptables -t nat -A PREROUTING -d 10.89.3.0/24 -j NETMAP --to 10.89.2.0/24",
        to: ("10.89.3.2", 9090),
        want: "10.89.2.2:9090 10.89.1.2",
    },
    Case {
        what: "NETMAP in POSTROUTING: the source's network mapped, its host kept",
        on: On::Router,
        rules: "iptables -t nat -A POSTROUTING -o rs0 -s 10.89.1.0/24 -j NETMAP --to 10.89.4.0/24",
        to: ("10.89.2.2", 9090),
        want: "10.89.2.2:9090 10.89.4.2",
    },
    Case {
        what: "IPv6, no NAT: the server sees the client",
        on: On::Router,
        rules: "",
        to: ("fd89:2::2", 9090),
        want: "fd89:2::2:9090 fd89:1::2",
    },
    Case {
        what: "IPv6 MASQUERADE: the server sees the router's outgoing address",
        on: On::Router,
        rules: "ip6tables -t nat -A POSTROUTING -o rs0 -j MASQUERADE",
        to: ("fd89:2::2", 9090),
        want: "fd89:2::2:9090 fd89:2::1",
    },
    Case {
        what: "IPv6 SNAT: the server sees the translated source",
        on: On::Router,
        rules: "ip6tables -t nat -A POSTROUTING -s fd89:1::2 -p tcp -j SNAT --to-source fd89:2::9",
        to: ("fd89:2::2", 9090),
        want: "fd89:2::2:9090 fd89:2::9",
    },
    Case {
        what: "IPv6 DNAT: address and port rewritten to reach the server",
        on: On::Router,
        rules: "ip6tables -t nat -A PREROUTING -d fd89:1::1 -p tcp --dport 8000 -j DNAT --to-destination [fd89:2::2]:9091",
        to: ("fd89:1::1", 8000),
        want: "fd89:2::2:9091 fd89:1::2",
    },
    Case {
        what: "IPv6 NETMAP in PREROUTING: the destination's prefix mapped",
        on: On::Router,
        rules: "ip6tables -t nat -A PREROUTING -d fd89:3::/64 -j NETMAP --to fd89:2::/64",
        to: ("fd89:3::2", 9090),
        want: "fd89:2::2:9090 fd89:1::2",
    },
];

#[test]
fn dnat_snat_masquerade_redirect() {
    let Some(net) = routed("nat") else { return };
    let _srv = net.server.serve(&["t9090", "t9091"]);
    for case in CASES {
        let ns = match case.on {
            On::Client => &net.client,
            On::Router => &net.router,
            On::Server => &net.server,
        };
        ns.nfk_all(case.rules);
        let (host, port) = case.to;
        assert_eq!(
            net.client.talk(host, port),
            case.want,
            "{}: connect to {host}:{port}\n{}",
            case.what,
            ns.ruleset()
        );
        ns.nfk("iptables -t nat -F");
        ns.nfk("ip6tables -t nat -F");
    }
    // Without its DNAT the router has nothing on 8000: the reset proves the
    // rule (not a leftover) did the work above.
    assert_eq!(net.client.tcp("10.89.1.1", 8000), "refused");
}

/// Counters of nat rules count the first packet of each connection only
/// (later packets follow the connection's translation).
#[test]
fn nat_rules_see_only_first_packets() {
    let Some(net) = routed("natcount") else {
        return;
    };
    let _srv = net.server.serve(&["t9090"]);
    net.router
        .nfk("iptables -t nat -A POSTROUTING -o rs0 -p tcp -j MASQUERADE");
    for _ in 0..3 {
        assert_eq!(
            net.client.talk("10.89.2.2", 9090),
            "10.89.2.2:9090 10.89.2.1"
        );
    }
    assert_eq!(
        net.router.rule_packets("iptables", "nat", "POSTROUTING", 1),
        3,
        "three connections, one packet each\n{}",
        net.router.ruleset()
    );
}

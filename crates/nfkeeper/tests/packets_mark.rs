//! Real packets, marks: MARK in mangle PREROUTING seen by `-m mark` in
//! filter INPUT, and CONNMARK `--save-mark` / `--restore-mark` carrying a
//! mark from a connection's first packet to its later ones (`-m connmark`
//! too). Written with nfkeeper in the server's namespace, checked with TCP
//! connections from the client. Skips without root, `ip` or python3.

mod common;

use common::{lan, SRV4};

/// Marks set in mangle PREROUTING decide filter INPUT verdicts: value,
/// value/mask, negation, and `--or-mark` / `--and-mark` arithmetic.
#[test]
fn mark_set_in_mangle_matched_in_filter() {
    let Some(net) = lan("mark") else { return };
    let (server, client) = (&net.server, &net.client);
    let ports = ["t80", "t81", "t82", "t83", "t84", "t85"];
    let _srv = server.serve(&ports);
    server.nfk_all(
        "
        iptables -t mangle -A PREROUTING -p tcp --dport 81 -j MARK --set-mark 5
        iptables -t mangle -A PREROUTING -p tcp --dport 82 -j MARK --set-mark 6
        iptables -t mangle -A PREROUTING -p tcp --dport 83 -j MARK --set-xmark 0x14/0xff
        iptables -t mangle -A PREROUTING -p tcp --dport 84 -j MARK --set-mark 0x1
        iptables -t mangle -A PREROUTING -p tcp --dport 84 -j MARK --or-mark 0x4
        iptables -t mangle -A PREROUTING -p tcp --dport 85 -j MARK --set-mark 0xf
        iptables -t mangle -A PREROUTING -p tcp --dport 85 -j MARK --and-mark 0x6
        iptables -A INPUT -m mark --mark 5 -j DROP
        iptables -A INPUT -p tcp --dport 83 -m mark --mark 0x10/0xf0 -j DROP
        iptables -A INPUT -p tcp --dport 85 -m mark ! --mark 6 -j DROP
        iptables -A INPUT -p tcp --dport 80:85 -m mark ! --mark 0 -j ACCEPT
        iptables -A INPUT -p tcp --dport 80:85 -j REJECT --reject-with tcp-reset
        ",
    );
    let cases = [
        (80, "refused", "no mark: the final reset"),
        (81, "timeout", "mark 5: dropped"),
        (82, "ok", "mark 6: accepted as non-zero"),
        (83, "timeout", "mark 0x14 matches 0x10/0xf0"),
        (84, "timeout", "0x1 | 0x4 is 5: dropped"),
        (85, "ok", "0xf & 0x6 is 6: not dropped by ! --mark 6"),
    ];
    client.expect_tcp(server, SRV4, &cases);
}

/// The SYN alone gets MARK 7 and its connection keeps it (`--save-mark`).
/// Port 91 restores it onto every packet (`--restore-mark`), so the
/// handshake's last ACK and the data are dropped by `-m mark --mark 7` in
/// ESTABLISHED state: the client connects but gets no answer. Port 92 does
/// not restore, so later packets carry no mark and the talk succeeds; port
/// 93 matches the connection's mark directly with `-m connmark`.
#[test]
fn connmark_save_and_restore() {
    let Some(net) = lan("connmark") else { return };
    let (server, client) = (&net.server, &net.client);
    let _srv = server.serve(&["t91", "t92", "t93"]);
    server.nfk_all(
        "
        iptables -t mangle -A PREROUTING -p tcp --dport 91 -j CONNMARK --restore-mark
        iptables -t mangle -A PREROUTING -p tcp --syn -j MARK --set-mark 7
        iptables -t mangle -A PREROUTING -m conntrack --ctstate NEW -j CONNMARK --save-mark
        iptables -A INPUT -p tcp -m conntrack --ctstate ESTABLISHED -m mark --mark 7 -j DROP
        iptables -A INPUT -p tcp --dport 93 -m conntrack --ctstate ESTABLISHED -m connmark --mark 7 -j DROP
        ",
    );
    let cases = [
        (
            91,
            "timeout",
            "mark restored from the connection: data dropped",
        ),
        (92, "10.89.0.1:92 10.89.0.2", "not restored: data passes"),
        (93, "timeout", "connmark 7 matched: data dropped"),
    ];
    for (port, want, why) in cases {
        assert_eq!(
            client.talk(SRV4, port),
            want,
            "port {port}: {why}\n{}",
            server.ruleset()
        );
    }
    // Every SYN was marked and nothing else: the mark rule saw 3 packets.
    assert_eq!(
        server.rule_packets("iptables", "mangle", "PREROUTING", 2),
        3
    );
}

/// A mark set in mangle OUTPUT changes the route of locally generated
/// packets (the chain is a `route` chain, so the kernel looks the route up
/// again): with `ip rule fwmark 3 → table 100`, where the server is
/// unreachable, a marked SYN is dropped by the new route lookup (TCP only
/// retries, so the connect times out) while an unmarked connect works. With
/// a plain `filter` chain the mark would not change the route: both work.
#[test]
fn mark_in_mangle_output_reroutes() {
    let Some(net) = lan("reroute") else { return };
    let (server, client) = (&net.server, &net.client);
    let _srv = server.serve(&["t80", "t81"]);
    client.ip(&format!("route add unreachable {SRV4} table 100"));
    client.nfk("iptables -t mangle -A OUTPUT -p tcp --dport 81 -j MARK --set-mark 3");
    // (policy routing on, port, expected): without the rule the mark alone
    // changes nothing, which shows that the timeout comes from the reroute.
    let cases = [(false, 81, "ok"), (true, 80, "ok"), (true, 81, "timeout")];
    let mut routing = false;
    for (rule, port, want) in cases {
        if rule && !routing {
            client.ip("rule add fwmark 3 table 100");
            routing = true;
        }
        assert_eq!(
            client.tcp(SRV4, port),
            want,
            "port {port}, fwmark rule {rule}\n{}",
            client.ruleset()
        );
    }
}

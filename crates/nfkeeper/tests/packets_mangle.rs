//! Real packets, header rewrites: the mangle targets nfkeeper lowers to
//! native expressions (TTL, HL, TOS, DSCP, ECN, TEE) written with nfkeeper
//! in the client's namespace (mangle POSTROUTING, so the rewritten IPv4
//! header is checked, checksum included, by the server's kernel); the
//! server reports the TTL / hop limit and TOS / traffic class each
//! datagram arrived with. Skips without root, `ip` or python3.

mod common;

use common::{lan, python, Ns, Proc, SRV4, SRV6};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Receiver: for every port argument, an IPv4 and an IPv6 UDP socket asking
/// for the TTL/TOS (hop limit/traffic class) of what arrives; prints
/// `ready`, then `PORT TTL TOS` per datagram.
const RECEIVER: &str = r#"
import select, socket, sys
IP_TOS, IP_TTL, IP_RECVTTL, IP_RECVTOS = 1, 2, 12, 13
IPV6_RECVHOPLIMIT, IPV6_HOPLIMIT, IPV6_RECVTCLASS, IPV6_TCLASS = 51, 52, 66, 67
socks = []
for port in map(int, sys.argv[1:]):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, IP_RECVTTL, 1)
    s.setsockopt(socket.IPPROTO_IP, IP_RECVTOS, 1)
    s.bind(("0.0.0.0", port))
    socks.append((s, port))
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 1)
    s.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVTCLASS, 1)
    s.bind(("::", port))
    socks.append((s, port))
print("ready", flush=True)
while True:
    r, _, _ = select.select([s for s, _ in socks], [], [])
    for s in r:
        port = dict(socks)[s]
        _, anc, _, _ = s.recvmsg(2048, 256)
        got = {}
        for level, ty, data in anc:
            if (level, ty) in ((socket.IPPROTO_IP, IP_TTL), (socket.IPPROTO_IPV6, IPV6_HOPLIMIT)):
                got["ttl"] = int.from_bytes(data[:4], sys.byteorder) if len(data) >= 4 else data[0]
            if (level, ty) in ((socket.IPPROTO_IP, IP_TOS), (socket.IPPROTO_IPV6, IPV6_TCLASS)):
                got["tos"] = data[0] if len(data) == 1 else int.from_bytes(data[:4], sys.byteorder)
        print(port, got.get("ttl", -1), got.get("tos", -1), flush=True)
"#;

/// Sender: HOST PORT TTL TOS (-1: the default) — one datagram.
const SENDER: &str = r#"
import socket, sys
host, port, ttl, tos = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if ":" in host:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    if ttl >= 0: s.setsockopt(socket.IPPROTO_IPV6, 16, ttl)
    if tos >= 0: s.setsockopt(socket.IPPROTO_IPV6, 67, tos)
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if ttl >= 0: s.setsockopt(socket.IPPROTO_IP, 2, ttl)
    if tos >= 0: s.setsockopt(socket.IPPROTO_IP, 1, tos)
s.sendto(b"nfkeeper", (host, port))
"#;

/// The receiver running in a namespace, and its output lines.
struct Receiver {
    _proc: Proc,
    lines: mpsc::Receiver<String>,
}

impl Receiver {
    fn start(ns: &Ns, ports: &[u16]) -> Receiver {
        let mut child = Command::new("ip")
            .args(["netns", "exec", &ns.name])
            .args([python().expect("python3"), "-S", "-c", RECEIVER])
            .args(ports.iter().map(u16::to_string))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn receiver");
        let out = child.stdout.take().expect("receiver stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let r = Receiver {
            _proc: Proc::wrap(child),
            lines,
        };
        assert_eq!(r.next().as_deref(), Some("ready"), "receiver did not start");
        r
    }

    /// The next line, if one comes within a second.
    fn next(&self) -> Option<String> {
        self.lines.recv_timeout(Duration::from_secs(1)).ok()
    }

    /// Every line that comes until the receiver is quiet for 300 ms.
    fn drain(&self) -> Vec<String> {
        let mut v = Vec::new();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_millis(300)) {
            v.push(l);
        }
        v
    }
}

/// One datagram from `ns` to `host:port`, with the TTL / hop limit and the
/// TOS / traffic class given (-1: the system's default).
fn send(ns: &Ns, host: &str, port: u16, ttl: i32, tos: i32) {
    let o = ns.exec(&[
        python().expect("python3"),
        "-S",
        "-c",
        SENDER,
        host,
        &port.to_string(),
        &ttl.to_string(),
        &tos.to_string(),
    ]);
    assert!(
        o.status.success(),
        "sender: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Each case: the rule (appended in the client's mangle POSTROUTING, for
/// the case's port), what the client sends (host, TTL, TOS), and what the
/// server must see (TTL, TOS).
struct Case {
    rule: &'static str,
    port: u16,
    host: &'static str,
    send: (i32, i32),
    want: (i32, i32),
}

const CASES: &[Case] = &[
    Case {
        rule: "iptables -t mangle -A POSTROUTING -p udp --dport 6001 -j TTL --ttl-set 7",
        port: 6001,
        host: SRV4,
        send: (-1, -1),
        want: (7, 0),
    },
    Case {
        rule: "iptables -t mangle -A POSTROUTING -p udp --dport 6002 -j TTL --ttl-dec 10",
        port: 6002,
        host: SRV4,
        send: (64, -1),
        want: (54, 0),
    },
    // Saturation at 0 and at 255, as xt_HL does.
    Case {
        rule: "iptables -t mangle -A POSTROUTING -p udp --dport 6003 -j TTL --ttl-dec 10",
        port: 6003,
        host: SRV4,
        send: (5, -1),
        want: (0, 0),
    },
    Case {
        rule: "iptables -t mangle -A POSTROUTING -p udp --dport 6004 -j TTL --ttl-inc 200",
        port: 6004,
        host: SRV4,
        send: (64, -1),
        want: (255, 0),
    },
    // DSCP keeps the ECN bits.
    Case {
        rule: "iptables -t mangle -A POSTROUTING -p udp --dport 6005 -j DSCP --set-dscp 0x2e",
        port: 6005,
        host: SRV4,
        send: (-1, 0x01),
        want: (64, 0xb9),
    },
    // (0xe3 & ~0x3f) ^ 0x10
    Case {
        rule: "iptables -t mangle -A POSTROUTING -p udp --dport 6006 -j TOS --set-tos 0x10/0x3f",
        port: 6006,
        host: SRV4,
        send: (-1, 0xe3),
        want: (64, 0xd0),
    },
    Case {
        rule: "iptables -t mangle -A POSTROUTING -p udp --dport 6007 -j ECN --ecn-ip-ect 2",
        port: 6007,
        host: SRV4,
        send: (-1, 0x11),
        want: (64, 0x12),
    },
    Case {
        rule: "ip6tables -t mangle -A POSTROUTING -p udp --dport 6001 -j HL --hl-set 9",
        port: 6001,
        host: SRV6,
        send: (-1, -1),
        want: (9, 0),
    },
    Case {
        rule: "ip6tables -t mangle -A POSTROUTING -p udp --dport 6002 -j HL --hl-dec 3",
        port: 6002,
        host: SRV6,
        send: (2, -1),
        want: (0, 0),
    },
    Case {
        rule: "ip6tables -t mangle -A POSTROUTING -p udp --dport 6003 -j HL --hl-inc 1",
        port: 6003,
        host: SRV6,
        send: (100, -1),
        want: (101, 0),
    },
    Case {
        rule: "ip6tables -t mangle -A POSTROUTING -p udp --dport 6005 -j DSCP --set-dscp 0x0a",
        port: 6005,
        host: SRV6,
        send: (-1, 0x03),
        want: (64, 0x2b),
    },
    // (0xe3 & ~0xf0) ^ 0x50
    Case {
        rule: "ip6tables -t mangle -A POSTROUTING -p udp --dport 6006 -j TOS --set-tos 0x50/0xf0",
        port: 6006,
        host: SRV6,
        send: (-1, 0xe3),
        want: (64, 0x53),
    },
];

#[test]
fn ttl_hl_tos_dscp_ecn_rewritten_on_the_wire() {
    let Some(net) = lan("mangle") else { return };
    let (server, client) = (&net.server, &net.client);
    let rx = Receiver::start(server, &[6001, 6002, 6003, 6004, 6005, 6006, 6007, 6008]);
    // Unchanged without rules: the defaults the cases start from.
    send(client, SRV4, 6008, -1, -1);
    assert_eq!(rx.next().as_deref(), Some("6008 64 0"), "no rules");
    for c in CASES {
        client.nfk(c.rule);
        send(client, c.host, c.port, c.send.0, c.send.1);
        let want = format!("{} {} {}", c.port, c.want.0, c.want.1);
        assert_eq!(rx.next(), Some(want), "{}\n{}", c.rule, client.ruleset());
    }
    // Each rule counted its datagram.
    assert_eq!(
        client.rule_packets("iptables", "mangle", "POSTROUTING", 2),
        1,
        "{}",
        client.ruleset()
    );
}

/// TEE without --oif (the `dup` expression): the server gets the datagram
/// and its copy; with --oif (nft_compat's xt_TEE) too.
#[test]
fn tee_duplicates() {
    let Some(net) = lan("tee") else { return };
    let (server, client) = (&net.server, &net.client);
    let rx = Receiver::start(server, &[6101, 6102]);
    client.nfk(&format!(
        "iptables -t mangle -A POSTROUTING -p udp --dport 6101 -j TEE --gateway {SRV4}"
    ));
    client.nfk(&format!(
        "iptables -t mangle -A POSTROUTING -p udp --dport 6102 -j TEE --gateway {SRV4} --oif nfk1"
    ));
    for port in [6101, 6102] {
        send(client, SRV4, port, -1, -1);
        let got = rx.drain();
        assert_eq!(got.len(), 2, "port {port}: {got:?}\n{}", client.ruleset());
    }
}

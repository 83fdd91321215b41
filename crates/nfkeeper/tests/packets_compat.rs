//! Real packets, the extensions nfkeeper loads through nft_compat (the
//! kernel's own xtables modules, see docs/compatibility.md): `-m recent`
//! (hit counts, windows, `--update`, `--remove`), `-m nfacct` (the nfacct
//! object's counters) and `-j TCPMSS` (`--set-mss`, `--clamp-mss-to-pmtu`,
//! and the MSS option xt_TCPMSS inserts into a SYN that has none). Each
//! case gets fresh namespaces. What passes is seen with pings and TCP
//! connects; the MSS a SYN arrives with is read off the wire on the far
//! side (an AF_PACKET socket). Skips without root, `ip` or python3, and
//! the nfacct cases without the `nfacct` tool.

mod common;

use common::{lan, python, routed, Ns, Proc, SRV4, SRV6};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One step of a `-m recent` sequence, run from the client against the
/// server's rules.
#[derive(Clone, Copy)]
enum Step {
    /// COUNT pings 10 ms apart; the 0-based numbers that must be answered.
    Ping(u32, &'static [u32]),
    /// Wait until this many milliseconds after the case's first step
    /// began (for an entry's stamps to leave the `--seconds` window). Times
    /// count from the start, not from the step before, because a probe
    /// whose pings are dropped waits its timeout before it returns.
    At(u64),
    /// A TCP connect to this (closed) port: refused, the server saw the SYN.
    Tcp(u16),
    /// Whether the client's address is in the server's xt_recent list
    /// (/proc/net/xt_recent/NAME, which is per network namespace).
    Listed(&'static str, bool),
}

struct RecentCase {
    name: &'static str,
    /// Server INPUT rules (the personality is the case's family's; `PING`
    /// stands for the family's echo request match).
    rules: &'static [&'static str],
    steps: &'static [Step],
}

/// A stamp is in the `--seconds` window while `jiffies - seconds*HZ` is
/// not after it. The times below keep every stamp that must count at
/// least 0.8 s inside its window and every one that must not at least
/// 0.65 s outside, so a probe starting late on a loaded machine does not
/// change the outcome.
const RECENT_CASES: &[RecentCase] = &[
    RecentCase {
        // --set before --rcheck: every echo request is stamped first, so
        // the 3rd within the window meets --hitcount 3 and is dropped, as
        // is every later one (each adds a stamp); once the stamps have aged
        // out of the window the next passes again.
        name: "set then rcheck, hitcount 3 in 2 s",
        rules: &[
            "PING -m recent --name ping --set",
            "PING -m recent --name ping --rcheck --seconds 2 --hitcount 3 -j DROP",
        ],
        steps: &[
            Step::Listed("ping", false),
            Step::Ping(5, &[0, 1]),
            Step::Listed("ping", true),
            Step::At(3000),
            Step::Ping(3, &[0, 1]),
        ],
    },
    RecentCase {
        // --update checks like --rcheck but stamps only when it matches:
        // the two pings dropped at 1.5 s keep the entry hot, so at 3.7 s
        // (when the first stamps are out of the 3 s window) the ping is
        // still dropped.
        name: "update keeps a dropped source dropped",
        rules: &[
            "PING -m recent --name u --update --seconds 3 --hitcount 2 -j DROP",
            "PING -m recent --name u --set",
        ],
        steps: &[
            Step::Ping(3, &[0, 1]),
            Step::At(1500),
            Step::Ping(2, &[]),
            Step::At(3700),
            Step::Ping(1, &[]),
        ],
    },
    RecentCase {
        // The same with --rcheck, which never stamps: the pings dropped at
        // 1.5 s leave no trace, and at 3.7 s the source passes. This is
        // what tells --update from --rcheck in the case above.
        name: "rcheck does not stamp dropped packets",
        rules: &[
            "PING -m recent --name u --rcheck --seconds 3 --hitcount 2 -j DROP",
            "PING -m recent --name u --set",
        ],
        steps: &[
            Step::Ping(3, &[0, 1]),
            Step::At(1500),
            Step::Ping(2, &[]),
            Step::At(3700),
            Step::Ping(1, &[0]),
        ],
    },
    RecentCase {
        // A SYN to port 81 lists the client, one to port 82 unlists it;
        // pings are dropped exactly while it is listed (plain --rcheck, no
        // window or count).
        name: "set and remove from other rules",
        rules: &[
            "-p tcp --dport 81 -m recent --name r --set",
            "-p tcp --dport 82 -m recent --name r --remove",
            "PING -m recent --name r --rcheck -j DROP",
        ],
        steps: &[
            Step::Ping(1, &[0]),
            Step::Tcp(81),
            Step::Listed("r", true),
            Step::Ping(1, &[]),
            Step::Tcp(82),
            Step::Listed("r", false),
            Step::Ping(1, &[0]),
            Step::Tcp(81),
            Step::Ping(1, &[]),
        ],
    },
    RecentCase {
        // `!` inverts: only listed sources are accepted, the rest fall to
        // the DROP after it.
        name: "negated rcheck",
        rules: &[
            "-p tcp --dport 81 -m recent --name n --set",
            "PING -m recent ! --rcheck --name n -j DROP",
        ],
        steps: &[Step::Ping(2, &[]), Step::Tcp(81), Step::Ping(2, &[0, 1])],
    },
];

/// Per family: personality, server address, echo request match, the
/// xt_recent list's spelling of the client.
struct Family {
    personality: &'static str,
    server: &'static str,
    ping: &'static str,
    listed: &'static str,
}

const V4: Family = Family {
    personality: "iptables",
    server: SRV4,
    ping: "-p icmp --icmp-type echo-request",
    listed: "src=10.89.0.2 ",
};

const V6: Family = Family {
    personality: "ip6tables",
    server: SRV6,
    ping: "-p ipv6-icmp --icmpv6-type echo-request",
    listed: "src=fd89:0000:0000:0000:0000:0000:0000:0002 ",
};

#[test]
fn recent_ipv4() {
    recent("rc4", &V4);
}

#[test]
fn recent_ipv6() {
    recent("rc6", &V6);
}

fn recent(tag: &str, fam: &Family) {
    for (i, case) in RECENT_CASES.iter().enumerate() {
        let Some(net) = lan(&format!("{tag}{i}")) else {
            return;
        };
        let (server, client) = (&net.server, &net.client);
        for rule in case.rules {
            let rule = rule.replace("PING", fam.ping);
            server.nfk(&format!("{} -A INPUT {rule}", fam.personality));
        }
        let start = Instant::now();
        for (n, step) in case.steps.iter().enumerate() {
            let at = format!("{}: step {n}", case.name);
            match *step {
                Step::Ping(count, want) => {
                    let got = client.ping(fam.server, count, "0.01");
                    assert_eq!(got, want, "{at}: answered pings\n{}", server.ruleset());
                }
                Step::At(ms) => {
                    let at = start + Duration::from_millis(ms);
                    std::thread::sleep(at.saturating_duration_since(Instant::now()));
                }
                Step::Tcp(port) => {
                    assert_eq!(
                        client.tcp(fam.server, port),
                        "refused",
                        "{at}: SYN to {port}"
                    );
                }
                Step::Listed(list, want) => {
                    let path = format!("/proc/net/xt_recent/{list}");
                    let o = server.exec(&["cat", &path]);
                    let text = String::from_utf8_lossy(&o.stdout);
                    assert!(o.status.success(), "{at}: {path} missing");
                    assert_eq!(
                        text.contains(fam.listed),
                        want,
                        "{at}: client in {path}:\n{text}"
                    );
                }
            }
        }
        // Counters stay readable and the rules save as written.
        let saved = server.nfk_output(&format!("{}-save", fam.personality));
        assert!(saved.status.success(), "{}: save", case.name);
    }
}

/// `nfacct get NAME` in NS: (packets, bytes).
fn nfacct_get(ns: &Ns, name: &str) -> (u64, u64) {
    let o = ns.exec(&["nfacct", "get", name]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "nfacct get {name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // `{ pkts = 00000000000000000005, bytes = 00000000000000000180 } = NAME;`
    let field = |key: &str| -> u64 {
        text.split(key)
            .nth(1)
            .and_then(|r| r.split([',', ' ']).find(|w| !w.is_empty()))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in `{}`", text.trim()))
    };
    (field("pkts = "), field("bytes = "))
}

fn nfacct_installed() -> bool {
    let ok = Command::new("nfacct")
        .arg("list")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !ok {
        eprintln!("SKIP: the nfacct tool is not installed (.ci/run installs it)");
    }
    ok
}

/// `-m nfacct` adds every packet the rule sees to the named nfacct object
/// (made with the nfacct tool, as kube-proxy's users do): N pings move its
/// counters by N packets and N times the echo request's IP length, a rule
/// whose other matches fail leaves its object alone, and one object named
/// by rules of both families counts both.
#[test]
fn nfacct_counters_move() {
    if !nfacct_installed() {
        return;
    }
    let Some(net) = lan("nfacct") else { return };
    let (server, client) = (&net.server, &net.client);
    for name in ["pings", "never", "both"] {
        let o = server.exec(&["nfacct", "add", name]);
        assert!(o.status.success(), "nfacct add {name}");
    }
    server.nfk_all(
        "
        iptables -A INPUT -p icmp --icmp-type echo-request -m nfacct --nfacct-name pings
        iptables -A INPUT -s 10.9.9.9 -m nfacct --nfacct-name never
        iptables -A INPUT -p icmp --icmp-type echo-request -m nfacct --nfacct-name both -j ACCEPT
        ip6tables -A INPUT -p ipv6-icmp --icmpv6-type echo-request -m nfacct --nfacct-name both -j ACCEPT
        ",
    );
    assert_eq!(client.ping(SRV4, 5, "0.01").len(), 5);
    assert_eq!(client.ping(SRV6, 3, "0.01").len(), 3);
    // An echo request is 8 bytes of ICMP header and 8 of payload ("nfkeeper"),
    // after a 20-byte IPv4 or 40-byte IPv6 header.
    let cases = [
        ("pings", (5, 5 * 36)),
        ("never", (0, 0)),
        ("both", (5 + 3, 5 * 36 + 3 * 56)),
    ];
    for (name, want) in cases {
        assert_eq!(
            nfacct_get(server, name),
            want,
            "nfacct {name}: (packets, bytes)\n{}",
            server.ruleset()
        );
    }
    // The rule's own counters count what the nfacct match saw.
    assert_eq!(server.rule_packets("iptables", "filter", "INPUT", 1), 5);
}

/// Sniffer: IFACE PORT SECONDS. Prints `ready` once its AF_PACKET socket
/// is bound, then, for the first TCP SYN (no ACK) to PORT over IPv4 or
/// IPv6 on IFACE, `mss N` or `mss none`; `timeout` when none comes.
const SNIFFER: &str = r#"
import select, socket, struct, sys, time
iface, port, wait = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((iface, 0))
print("ready", flush=True)
end = time.time() + wait
def mss(tcp):
    off = (tcp[12] >> 4) * 4
    opts, i = tcp[20:off], 0
    while i < len(opts):
        kind = opts[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2:
            break
        if kind == 2 and opts[i + 1] == 4:
            return str(struct.unpack_from("!H", opts, i + 2)[0])
        i += opts[i + 1]
    return "none"
while True:
    left = end - time.time()
    r, _, _ = select.select([s], [], [], max(left, 0))
    if not r:
        print("timeout", flush=True)
        sys.exit(0)
    f = s.recv(65535)
    eth = struct.unpack_from("!H", f, 12)[0]
    if eth == 0x0800 and f[23] == 6:
        tcp = f[14 + (f[14] & 15) * 4:]
    elif eth == 0x86dd and f[20] == 6:
        tcp = f[54:]
    else:
        continue
    dport, flags = struct.unpack_from("!H", tcp, 2)[0], tcp[13]
    if dport == port and flags & 0x12 == 0x02:
        print("mss", mss(tcp), flush=True)
        sys.exit(0)
"#;

/// Bare SYN: SRC DST PORT — one TCP SYN with no options at all (a 20-byte
/// header) through a raw socket, checksum over the pseudo-header.
const BARE_SYN: &str = r#"
import socket, struct, sys
src, dst, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
tcp = struct.pack("!HHIIBBHHH", 40000, port, 1, 0, 5 << 4, 0x02, 64240, 0, 0)
a, b = socket.inet_pton(fam, src), socket.inet_pton(fam, dst)
if fam == socket.AF_INET:
    pseudo = a + b + struct.pack("!BBH", 0, 6, len(tcp))
else:
    pseudo = a + b + struct.pack("!I3xB", len(tcp), 6)
data = pseudo + tcp
t = sum(struct.unpack("!%dH" % (len(data) // 2), data))
t = (t >> 16) + (t & 0xffff); t += t >> 16
tcp = tcp[:16] + struct.pack("!H", ~t & 0xffff) + tcp[18:]
s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_TCP)
s.sendto(tcp, (dst, 0))
"#;

/// Start the sniffer in NS on IFACE for SYNs to PORT; returns it once its
/// socket is bound, with its output.
fn sniff(ns: &Ns, iface: &str, port: u16) -> (Proc, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new("ip")
        .args(["netns", "exec", &ns.name])
        .args([python().expect("python3"), "-S", "-c", SNIFFER, iface])
        .args([&port.to_string(), "3"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn sniffer");
    let mut out = BufReader::new(child.stdout.take().expect("sniffer stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("sniffer output");
    assert_eq!(line.trim(), "ready", "sniffer did not start");
    (Proc::wrap(child), out)
}

/// How the client makes its SYN.
#[derive(Clone, Copy, Debug)]
enum Syn {
    /// A connect(): the stack's SYN, MSS option 1460 (interface MTU 1500)
    /// for IPv4, 1440 for IPv6.
    Connect,
    /// [`BARE_SYN`]: no MSS option.
    Bare,
}

struct MssCase {
    /// Router FORWARD rule (empty: none, the control).
    rule: &'static str,
    /// MTU of the router's link to the server.
    mtu: u32,
    syn: Syn,
    /// MSS on the server's side per family (v4, v6): `mss N` / `mss none`.
    want: (&'static str, &'static str),
    why: &'static str,
}

const MSS_CASES: &[MssCase] = &[
    MssCase {
        rule: "",
        mtu: 1500,
        syn: Syn::Connect,
        want: ("mss 1460", "mss 1440"),
        why: "control: the stack's own MSS arrives unchanged",
    },
    MssCase {
        rule: "",
        mtu: 1500,
        syn: Syn::Bare,
        want: ("mss none", "mss none"),
        why: "control: a SYN without options arrives without one",
    },
    MssCase {
        rule: "--set-mss 1000",
        mtu: 1500,
        syn: Syn::Connect,
        want: ("mss 1000", "mss 1000"),
        why: "--set-mss lowers the option",
    },
    MssCase {
        rule: "--set-mss 1480",
        mtu: 1500,
        syn: Syn::Connect,
        want: ("mss 1460", "mss 1440"),
        why: "--set-mss never raises an MSS",
    },
    MssCase {
        rule: "--set-mss 1000",
        mtu: 1500,
        syn: Syn::Bare,
        want: ("mss 536", "mss 1000"),
        why: "a SYN without MSS gets one, at most the protocol's default (536 v4, 1220 v6)",
    },
    MssCase {
        rule: "--clamp-mss-to-pmtu",
        mtu: 1300,
        syn: Syn::Connect,
        want: ("mss 1260", "mss 1240"),
        why: "clamped to the outgoing route's MTU less the IP and TCP headers",
    },
    MssCase {
        rule: "--clamp-mss-to-pmtu",
        mtu: 1500,
        syn: Syn::Connect,
        want: ("mss 1460", "mss 1440"),
        why: "the path MTU allows the stack's MSS: unchanged",
    },
];

#[test]
fn tcpmss_on_forwarded_syns() {
    for (i, case) in MSS_CASES.iter().enumerate() {
        let Some(net) = routed(&format!("mss{i}")) else {
            return;
        };
        net.router.ip(&format!("link set rs0 mtu {}", case.mtu));
        if !case.rule.is_empty() {
            for ipt in ["iptables", "ip6tables"] {
                net.router.nfk(&format!(
                    "{ipt} -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS {}",
                    case.rule
                ));
            }
        }
        let fams = [
            ("10.89.1.2", "10.89.2.2", case.want.0),
            ("fd89:1::2", "fd89:2::2", case.want.1),
        ];
        for (port, (src, dst, want)) in (4000u16..).zip(fams) {
            let (_sniffer, mut out) = sniff(&net.server, "s0", port);
            match case.syn {
                Syn::Connect => {
                    net.client.tcp(dst, port);
                }
                Syn::Bare => {
                    let o = net.client.exec(&[
                        python().expect("python3"),
                        "-S",
                        "-c",
                        BARE_SYN,
                        src,
                        dst,
                        &port.to_string(),
                    ]);
                    assert!(
                        o.status.success(),
                        "bare SYN: {}",
                        String::from_utf8_lossy(&o.stderr)
                    );
                }
            }
            let mut line = String::new();
            out.read_line(&mut line).expect("sniffer output");
            assert_eq!(
                line.trim(),
                want,
                "`-j TCPMSS {}`, link MTU {}, {:?} SYN to {dst}: {}\n{}",
                case.rule,
                case.mtu,
                case.syn,
                case.why,
                net.router.ruleset()
            );
        }
    }
}

//! Real packets, `-j CT --helper` / `--timeout`: nfkeeper's form of the
//! helper (the raw table replayed just after conntrack, see
//! compile::replay and docs/compatibility.md, "`-j CT --helper`") and the
//! kernel facts it rests on, checked with an FTP-like exchange whose PORT
//! commands make the kernel's ftp helper register expectations
//! (/proc/net/nf_conntrack_expect, per network namespace) exactly when the
//! connection carrying them has the helper. iptables-nft (xt_CT through
//! nft_compat in its `raw` table) is the reference; `nft` writes the
//! forms the replay is made of. If the kernel ever lets `ct helper set`
//! act before conntrack, or nfkeeper's rules stop giving what xt_CT gives,
//! a case here fails. Also `ct timeout set`'s same limit (the conntrack's
//! remaining seconds), and that nfkeeper refuses `--timeout` and helper
//! rules it cannot replay with the reason. Skips without root, `ip`,
//! python3, `nft` or iptables-nft.

mod common;

use common::{lan, python, Ns, Proc, CLI4, SRV4};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// FTP-like server: ADDR DATA. Listens on port 21; on the control
/// connection greets, reads up to a PORT line and answers `200`. With DATA
/// `1` it then opens the data connection to the client's port 25601 from
/// port 20 and speaks the same over it (USER, waits for `331`, PORT), so
/// that a helper on the data connection would register an expectation.
/// Prints `ready` once it listens.
const FTP_SERVER: &str = r#"
import socket, sys, time
addr, data = sys.argv[1], sys.argv[2] == "1"
def upto(c, word):
    got = b""
    while word not in got:
        b = c.recv(256)
        if not b:
            return
        got += b
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, 21))
s.listen(1)
print("ready", flush=True)
c, peer = s.accept()
c.sendall(b"220 ready\r\n")
upto(c, b"PORT")
c.sendall(b"200 ok\r\n")
if data:
    d = socket.socket()
    d.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    d.bind((addr, 20))
    d.connect((peer[0], 25601))
    d.sendall(b"USER b\r\n")
    upto(d, b"331")
    d.sendall(("PORT %s,200,2\r\n" % addr.replace(".", ",")).encode())
time.sleep(30)
"#;

/// FTP-like client: SERVER ADDR DATA. Sends USER then PORT ADDR:25601 on
/// the control connection (the ftp helper ignores a direction's first
/// segment, so PORT must come second) and waits for the `200`; with DATA
/// `1` accepts the data connection, answers its USER with `331` and waits
/// for its PORT. Prints `done` then, while every connection stays open.
const FTP_CLIENT: &str = r#"
import socket, sys, time
server, addr, data = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
def upto(c, word):
    got = b""
    while word not in got:
        b = c.recv(256)
        if not b:
            return
        got += b
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind((addr, 25601))
l.listen(1)
c = socket.create_connection((server, 21), timeout=5)
upto(c, b"220")
c.sendall(b"USER a\r\n")
time.sleep(0.1)
c.sendall(("PORT %s,100,1\r\n" % addr.replace(".", ",")).encode())
upto(c, b"200")
if data:
    l.settimeout(5)
    d, _ = l.accept()
    upto(d, b"USER")
    d.sendall(b"331 ok\r\n")
    upto(d, b"PORT")
print("done", flush=True)
time.sleep(30)
"#;

/// Start SCRIPT with ARGS in NS and wait for its first line, which must
/// be WANT; the process is killed when the handle drops.
fn start(ns: &Ns, script: &str, args: &[&str], want: &str) -> Proc {
    let mut child = Command::new("ip")
        .args(["netns", "exec", &ns.name])
        .args([python().expect("python3"), "-S", "-c", script])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn python");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read");
    let proc = Proc::wrap(child);
    assert_eq!(line.trim(), want, "{args:?} in {}", ns.name);
    proc
}

/// The ftp expectations the server's namespace holds.
fn expectations(ns: &Ns) -> Vec<String> {
    let o = ns.exec(&["cat", "/proc/net/nf_conntrack_expect"]);
    assert!(o.status.success(), "no /proc/net/nf_conntrack_expect");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// A candidate native form: one table `t` with the `ct helper` object
/// `ftp-std` and base chains on prerouting and output at PRIORITY whose
/// rule is `MATCH ct helper set "ftp-std"`.
fn nft_form(priority: i32, matches: &str) -> String {
    format!(
        "table ip t {{ ct helper ftp-std {{ type \"ftp\" protocol tcp; }}; \
         chain pre {{ type filter hook prerouting priority {priority}; {matches} ct helper set \"ftp-std\"; }}; \
         chain out {{ type filter hook output priority {priority}; {matches} ct helper set \"ftp-std\"; }}; }}"
    )
}

enum Setup {
    /// iptables-nft commands (the reference: xt_CT in its raw table).
    Xt(&'static [&'static str]),
    /// The same through nfkeeper (whose `verify` must then be clean).
    Nfk(&'static [&'static str]),
    /// `nft` ruleset text.
    Nft(String),
}

struct Case {
    name: &'static str,
    setup: Setup,
    /// Whether the server also opens a data connection speaking FTP.
    data: bool,
    /// Expectations left once the exchange is done: the control
    /// connection's PORT makes one (which the data connection, when made,
    /// uses up); a data connection with a helper makes another.
    want: usize,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "control: no helper, no expectation",
            setup: Setup::Xt(&[]),
            data: false,
            want: 0,
        },
        Case {
            name: "xt_CT --helper in raw: the control connection has the helper",
            setup: Setup::Xt(&["-t raw -A PREROUTING -p tcp --dport 21 -j CT --helper ftp"]),
            data: false,
            want: 1,
        },
        Case {
            name: "ct helper set at raw's priority (-300) does nothing: no conntrack yet",
            setup: Setup::Nft(nft_form(-300, "tcp dport 21")),
            data: false,
            want: 0,
        },
        Case {
            name: "ct helper set just after conntrack (-199) assigns it",
            setup: Setup::Nft(nft_form(-199, "tcp dport 21")),
            data: false,
            want: 1,
        },
        Case {
            name: "xt_CT's template is not used for an expected (data) connection",
            setup: Setup::Xt(&[
                "-t raw -A PREROUTING -p tcp -j CT --helper ftp",
                "-t raw -A OUTPUT -p tcp -j CT --helper ftp",
            ]),
            data: true,
            want: 0,
        },
        Case {
            name: "ct helper set at -199 also gives the expected data connection the helper",
            setup: Setup::Nft(nft_form(-199, "meta l4proto tcp")),
            data: true,
            want: 1,
        },
        Case {
            name: "... unless the rule also requires ct status not expected",
            setup: Setup::Nft(nft_form(-199, "meta l4proto tcp ct status & expected == 0")),
            data: true,
            want: 0,
        },
        Case {
            name: "xt_CT: the first CT target a packet meets wins (a bare -j CT before it)",
            setup: Setup::Xt(&[
                "-t raw -A PREROUTING -p tcp --dport 21 -j CT",
                "-t raw -A PREROUTING -p tcp --dport 21 -j CT --helper ftp",
            ]),
            data: false,
            want: 0,
        },
        Case {
            name: "nfkeeper --helper in raw: the control connection has the helper",
            setup: Setup::Nfk(&["-t raw -A PREROUTING -p tcp --dport 21 -j CT --helper ftp"]),
            data: false,
            want: 1,
        },
        Case {
            name: "nfkeeper: through user chains, as a firewall's dump has it",
            setup: Setup::Nfk(&[
                "-t raw -N zones",
                "-t raw -N allow",
                "-t raw -A PREROUTING -j LOG",
                "-t raw -A PREROUTING -i nomatch+ -j ACCEPT",
                "-t raw -A PREROUTING -g zones",
                "-t raw -A zones -j allow",
                "-t raw -A allow -p udp --dport 137 -j CT --helper netbios-ns",
                "-t raw -A allow -p tcp --dport 21 -j CT --helper ftp",
            ]),
            data: false,
            want: 1,
        },
        Case {
            name: "nfkeeper: as xt_CT, no helper for the expected data connection",
            setup: Setup::Nfk(&[
                "-t raw -A PREROUTING -p tcp -j CT --helper ftp",
                "-t raw -A OUTPUT -p tcp -j CT --helper ftp",
            ]),
            data: true,
            want: 0,
        },
        Case {
            name: "nfkeeper: as xt_CT, the first CT target wins",
            setup: Setup::Nfk(&[
                "-t raw -A PREROUTING -p tcp --dport 21 -j CT",
                "-t raw -A PREROUTING -p tcp --dport 21 -j CT --helper ftp",
            ]),
            data: false,
            want: 0,
        },
        Case {
            name: "nfkeeper: a RETURN before the helper rule skips it",
            setup: Setup::Nfk(&[
                "-t raw -N h",
                "-t raw -A PREROUTING -j h",
                "-t raw -A h -p tcp -j RETURN",
                "-t raw -A h -p tcp --dport 21 -j CT --helper ftp",
            ]),
            data: false,
            want: 0,
        },
    ]
}

fn tool(name: &str) -> bool {
    let ok = Command::new(name)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP: {name} is not installed");
    }
    ok
}

#[test]
fn helper_assignment_facts() {
    if !tool("nft") || !tool("iptables-nft") {
        return;
    }
    for (i, case) in cases().iter().enumerate() {
        let Some(net) = lan(&format!("cth{i}")) else {
            return;
        };
        let (server, client) = (&net.server, &net.client);
        match &case.setup {
            Setup::Xt(lines) => {
                for line in *lines {
                    let mut argv = vec!["iptables-nft"];
                    argv.extend(line.split_whitespace());
                    let o = server.exec(&argv);
                    assert!(o.status.success(), "{}: {line}", case.name);
                }
            }
            Setup::Nfk(lines) => {
                for line in *lines {
                    let o = server.nfk_output(&format!("iptables {line}"));
                    assert!(
                        o.status.success(),
                        "{}: {line}: {}",
                        case.name,
                        String::from_utf8_lossy(&o.stderr)
                    );
                }
                let o = server.nfk_output("verify");
                assert!(
                    o.status.success(),
                    "{}: verify: {}{}",
                    case.name,
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                );
            }
            Setup::Nft(text) => {
                let o = server.exec(&["nft", text]);
                assert!(
                    o.status.success(),
                    "{}: nft: {}",
                    case.name,
                    String::from_utf8_lossy(&o.stderr)
                );
            }
        }
        let data = if case.data { "1" } else { "0" };
        let _srv = start(server, FTP_SERVER, &[SRV4, data], "ready");
        let _cli = start(client, FTP_CLIENT, &[SRV4, CLI4, data], "done");
        let got = expectations(server);
        assert_eq!(got.len(), case.want, "{}: expectations {got:?}", case.name);
        assert!(got.iter().all(|l| l.ends_with(" ftp")), "{got:?}");
    }
}

/// nfkeeper refuses `--timeout` and helper rules it cannot replay (exit 2,
/// iptables' usage hint) with the reason, in both families, and a refused
/// command changes nothing.
#[test]
fn nfkeeper_refuses_what_it_cannot_replay() {
    let Some(net) = lan("ctref") else { return };
    let cases = [
        (
            "iptables -t raw -A PREROUTING -p udp -j CT --timeout udp-short",
            "-j CT --timeout udp-short has no native nftables form in nfkeeper: the timeout policy",
        ),
        (
            "ip6tables -t raw -A OUTPUT -j CT --helper ftp",
            "-j CT --helper ftp has no native nftables form in nfkeeper: the helper's protocol",
        ),
        (
            "iptables -t raw -A PREROUTING -p tcp -m statistic --mode nth --every 2 --packet 0 -j CT --helper ftp",
            "-m statistic reads the conntrack or keeps state",
        ),
    ];
    for (line, reason) in cases {
        let o = net.server.nfk_output(line);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "`{line}`: {err}");
        assert!(err.contains(reason), "`{line}`: {err}");
    }
    // A rule in front that the replay cannot repeat: refused, and the
    // ruleset (and its replay) stay as they were.
    let ok = "iptables -t raw -A PREROUTING -p tcp --dport 21 -j CT --helper ftp";
    assert!(net.server.nfk_output(ok).status.success());
    let before = net.server.exec(&["nft", "list", "ruleset"]);
    let o = net
        .server
        .nfk_output("iptables -t raw -I PREROUTING -m limit --limit 1/s -j ACCEPT");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("rule 1 of chain PREROUTING cannot be replayed: -m limit"),
        "{err}"
    );
    let after = net.server.exec(&["nft", "list", "ruleset"]);
    assert_eq!(before.stdout, after.stdout);
    // The last helper rule gone, the replay table goes too.
    assert!(net.server.nfk_output("iptables -t raw -F").status.success());
    let tables = net.server.exec(&["nft", "list", "tables"]);
    let tables = String::from_utf8_lossy(&tables.stdout);
    assert!(!tables.contains("nfkeeper_raw_helpers"), "{tables}");
}

/// `ct timeout set` has the same limit as `ct helper set`: at raw's
/// priority the packet has no conntrack and the policy is lost (the
/// conntrack gets the default 30 s of an unreplied UDP flow); just after
/// conntrack it applies (100 s). Read off /proc/net/nf_conntrack (the
/// remaining seconds, fifth column) after one datagram leaves the server.
#[test]
fn ct_timeout_set_needs_a_conntrack() {
    if !tool("nft") {
        return;
    }
    // (priority, remaining seconds within)
    let cases = [(-300, 1..=30), (-199, 90..=100)];
    for (priority, want) in cases {
        let Some(net) = lan(&format!("ctt{}", -priority)) else {
            return;
        };
        let server = &net.server;
        let text = format!(
            "table ip t {{ ct timeout udp-long {{ protocol udp; l3proto ip; \
             policy = {{ unreplied : 100, replied : 200 }}; }}; \
             chain out {{ type filter hook output priority {priority}; \
             udp dport 9999 ct timeout set \"udp-long\"; }}; }}"
        );
        let o = server.exec(&["nft", &text]);
        assert!(
            o.status.success(),
            "nft: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let send = format!(
            "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('{CLI4}', 9999))"
        );
        let o = server.exec(&[python().expect("python3"), "-S", "-c", &send]);
        assert!(o.status.success(), "send");
        let o = server.exec(&["cat", "/proc/net/nf_conntrack"]);
        let table = String::from_utf8_lossy(&o.stdout);
        let secs: u32 = table
            .lines()
            .find(|l| l.contains("dport=9999"))
            .and_then(|l| l.split_whitespace().nth(4))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no conntrack of the datagram:\n{table}"));
        assert!(
            want.contains(&secs),
            "ct timeout set at priority {priority}: {secs} s left, want {want:?}"
        );
    }
}

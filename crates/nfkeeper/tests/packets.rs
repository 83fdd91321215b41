//! Real packets: two network namespaces joined by a veth pair; rules written
//! with nfkeeper (direct mode) in the server's namespace; TCP connections
//! from the client must be accepted, dropped (time out), rejected (reset)
//! exactly as the rules say, and counters must count. Uses python3 for the
//! listener and the client. Skips without root, `ip` or python3.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Ns(String);

impl Ns {
    fn new(tag: &str) -> Option<Ns> {
        let name = format!("nfk-pkt-{}-{tag}", std::process::id());
        let ok = Command::new("ip")
            .args(["netns", "add", &name])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        ok.then_some(Ns(name))
    }

    fn ip(&self, args: &[&str]) -> bool {
        Command::new("ip")
            .args(["-n", &self.0])
            .args(args)
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }

    fn exec(&self, argv: &[&str]) -> std::process::Output {
        Command::new("ip")
            .args(["netns", "exec", &self.0])
            .args(argv)
            .output()
            .expect("ip netns exec")
    }

    fn spawn(&self, argv: &[&str]) -> Child {
        Command::new("ip")
            .args(["netns", "exec", &self.0])
            .args(argv)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn")
    }
}

impl Drop for Ns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// Accepts on every port given, forever (killed at the end).
const SERVER: &str = r#"
import socket, sys, threading
def serve(p):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", p)); s.listen(16)
    while True:
        c, _ = s.accept(); c.close()
for p in sys.argv[1:]:
    threading.Thread(target=serve, args=(int(p),), daemon=True).start()
threading.Event().wait()
"#;

/// Prints ok / refused / timeout for a TCP connect.
const CLIENT: &str = r#"
import socket, sys
s = socket.socket(); s.settimeout(1.0)
try:
    s.connect((sys.argv[1], int(sys.argv[2]))); print("ok")
except ConnectionRefusedError: print("refused")
except socket.timeout: print("timeout")
except OSError as e: print("error", e)
"#;

fn connect(client: &Ns, port: u16) -> String {
    let p = port.to_string();
    let o = client.exec(&["python3", "-c", CLIENT, "10.89.0.1", &p]);
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn nfk(server: &Ns, args: &[&str]) {
    let bin = env!("CARGO_BIN_EXE_nfkeeper");
    let mut argv = vec![bin];
    argv.extend_from_slice(args);
    let o = server.exec(&argv);
    assert!(
        o.status.success(),
        "nfkeeper {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn tcp_verdicts_and_counters_over_veth() {
    if !testkit::is_root() {
        eprintln!("SKIP: needs root");
        return;
    }
    if Command::new("python3").arg("-c").arg("1").status().is_err() {
        eprintln!("SKIP: python3 is not installed");
        return;
    }
    let (Some(server), Some(client)) = (Ns::new("srv"), Ns::new("cli")) else {
        eprintln!("SKIP: cannot create network namespaces");
        return;
    };
    let veth_ok = Command::new("ip")
        .args([
            "link", "add", "nfkv0", "netns", &server.0, "type", "veth", "peer", "name", "nfkv1",
            "netns", &client.0,
        ])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(veth_ok, "veth pair");
    assert!(server.ip(&["addr", "add", "10.89.0.1/24", "dev", "nfkv0"]));
    assert!(client.ip(&["addr", "add", "10.89.0.2/24", "dev", "nfkv1"]));
    for (ns, dev) in [(&server, "nfkv0"), (&client, "nfkv1")] {
        assert!(ns.ip(&["link", "set", dev, "up"]));
        assert!(ns.ip(&["link", "set", "lo", "up"]));
    }
    let mut listener = server.spawn(&["python3", "-c", SERVER, "80", "81", "82", "83", "84"]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(connect(&client, 80), "ok", "no rules yet");

    nfk(
        &server,
        &[
            "iptables", "-A", "INPUT", "-p", "tcp", "--dport", "81", "-j", "DROP",
        ],
    );
    nfk(
        &server,
        &[
            "iptables",
            "-A",
            "INPUT",
            "-p",
            "tcp",
            "--dport",
            "82",
            "-j",
            "REJECT",
            "--reject-with",
            "tcp-reset",
        ],
    );
    nfk(&server, &["iptables", "-N", "web"]);
    nfk(
        &server,
        &["iptables", "-A", "web", "-s", "10.89.0.2", "-j", "DROP"],
    );
    nfk(
        &server,
        &[
            "iptables",
            "-A",
            "INPUT",
            "-p",
            "tcp",
            "-m",
            "multiport",
            "--dports",
            "83,84",
            "-j",
            "web",
        ],
    );
    nfk(
        &server,
        &[
            "iptables", "-I", "web", "1", "-p", "tcp", "--dport", "84", "-j", "RETURN",
        ],
    );

    let cases = [
        (80, "ok"),
        (81, "timeout"),
        (82, "refused"),
        (83, "timeout"),
        (84, "ok"),
    ];
    for (port, want) in cases {
        assert_eq!(connect(&client, port), want, "port {port}");
    }

    // The DROP rule saw the SYN and its retransmissions: counters count.
    let o = server.exec(&[
        env!("CARGO_BIN_EXE_nfkeeper"),
        "iptables",
        "-v",
        "-S",
        "INPUT",
    ]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let drop_line = text
        .lines()
        .find(|l| l.contains("--dport 81"))
        .expect("drop rule listed");
    let packets: u64 = drop_line
        .split(" -c ")
        .nth(1)
        .and_then(|c| c.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(packets >= 1, "DROP rule counted nothing: {drop_line}");

    // Policy DROP on INPUT with an exception for established traffic and port
    // 80: only new connections to 80 get through.
    nfk(&server, &["iptables", "-F", "INPUT"]);
    nfk(
        &server,
        &[
            "iptables",
            "-A",
            "INPUT",
            "-m",
            "conntrack",
            "--ctstate",
            "ESTABLISHED,RELATED",
            "-j",
            "ACCEPT",
        ],
    );
    nfk(
        &server,
        &[
            "iptables", "-A", "INPUT", "-p", "tcp", "--dport", "80", "-j", "ACCEPT",
        ],
    );
    nfk(&server, &["iptables", "-P", "INPUT", "DROP"]);
    assert_eq!(
        connect(&client, 80),
        "ok",
        "allowed by rule under policy DROP"
    );
    assert_eq!(connect(&client, 82), "timeout", "dropped by policy");

    let _ = listener.kill();
    let _ = listener.wait();
}

//! Shared support for the real-packet tests (`packets*.rs`): network
//! namespaces (deleted on drop, also when a test panics), veth topologies,
//! nfkeeper invocations in a namespace, and python3 helpers that send real
//! packets and report what came back.
//!
//! Contract: nothing here touches the host's own network namespace. Every
//! link is created inside a namespace made here (`ip -n NS link add ...
//! peer ... netns OTHER`), every rule is written by `ip netns exec NS
//! nfkeeper ...`. Namespace names carry the test process id and a tag, so
//! tests run in parallel.

// Each test binary includes this module and uses a different subset of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

/// How long a probe waits for an answer before reporting `timeout`. Dropped
/// packets cost this much, so it stays short; veth answers in microseconds.
pub const PROBE_TIMEOUT: &str = "0.7";

/// Addresses of the two-namespace LAN ([`lan`]).
pub const SRV4: &str = "10.89.0.1";
pub const CLI4: &str = "10.89.0.2";
pub const SRV6: &str = "fd89::1";
pub const CLI6: &str = "fd89::2";

/// The python3 interpreter itself (not a wrapper script such as a pyenv
/// shim, which costs a fraction of a second per probe); `None` when python3
/// is missing.
pub fn python() -> Option<&'static str> {
    static PYTHON: OnceLock<Option<String>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let o = Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .ok()?;
            let path = String::from_utf8_lossy(&o.stdout).trim().to_string();
            (o.status.success() && !path.is_empty()).then_some(path)
        })
        .as_deref()
}

/// Whether the kernel tests can run here: root, `ip` and python3. Prints why
/// not (the test then returns early, which is the skip).
pub fn prerequisites() -> bool {
    if !testkit::is_root() {
        eprintln!("SKIP: real-packet tests need root");
        return false;
    }
    let ip = Command::new("ip")
        .arg("-V")
        .stdout(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ip {
        eprintln!("SKIP: `ip` (iproute2) is not installed");
        return false;
    }
    if python().is_none() {
        eprintln!("SKIP: python3 is not installed");
        return false;
    }
    true
}

/// A network namespace made for one test; deleted (after killing whatever
/// still runs in it) on drop.
pub struct Ns {
    pub name: String,
}

impl Ns {
    /// Panics when the namespace cannot be made: [`prerequisites`] said we
    /// are root with `ip`, so that is a real failure.
    pub fn new(tag: &str) -> Ns {
        let name = format!("nfk-pkt-{}-{tag}", std::process::id());
        let o = Command::new("ip")
            .args(["netns", "add", &name])
            .output()
            .expect("run ip");
        assert!(
            o.status.success(),
            "ip netns add {name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        Ns { name }
    }

    /// `ip -n NS ARGS...`, which must succeed.
    pub fn ip(&self, args: &str) {
        let o = Command::new("ip")
            .args(["-n", &self.name])
            .args(args.split_whitespace())
            .output()
            .expect("run ip");
        assert!(
            o.status.success(),
            "ip -n {} {args}: {}",
            self.name,
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// Run ARGV inside the namespace and collect its output.
    pub fn exec(&self, argv: &[&str]) -> Output {
        Command::new("ip")
            .args(["netns", "exec", &self.name])
            .args(argv)
            .stdin(Stdio::null())
            .output()
            .expect("ip netns exec")
    }

    /// Set a (per-namespace) sysctl, which must succeed.
    pub fn sysctl(&self, key_value: &str) {
        let o = self.exec(&["sysctl", "-q", "-w", key_value]);
        assert!(
            o.status.success(),
            "sysctl {key_value} in {}: {}",
            self.name,
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// Run nfkeeper with the words of LINE (the first one is the
    /// personality, e.g. `iptables -A INPUT -j DROP`); it must succeed.
    pub fn nfk(&self, line: &str) {
        let o = self.nfk_output(line);
        assert!(
            o.status.success(),
            "`nfkeeper {line}` failed in {}: {}",
            self.name,
            String::from_utf8_lossy(&o.stderr)
        );
    }

    pub fn nfk_output(&self, line: &str) -> Output {
        let mut argv = vec![env!("CARGO_BIN_EXE_nfkeeper")];
        argv.extend(line.split_whitespace());
        self.exec(&argv)
    }

    /// Run every line of RULES (blank lines skipped) with [`Ns::nfk`].
    pub fn nfk_all(&self, rules: &str) {
        for line in rules.lines().map(str::trim).filter(|l| !l.is_empty()) {
            self.nfk(line);
        }
    }

    /// Packet counter of rule NUM in CHAIN, read back through nfkeeper
    /// (`PERSONALITY -t TABLE -v -S CHAIN NUM`, the `-c PACKETS BYTES` part).
    pub fn rule_packets(&self, personality: &str, table: &str, chain: &str, num: u32) -> u64 {
        let line = format!("{personality} -t {table} -v -S {chain} {num}");
        let o = self.nfk_output(&line);
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            o.status.success(),
            "`nfkeeper {line}`: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        text.split(" -c ")
            .nth(1)
            .and_then(|c| c.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no counters in `{}`", text.trim()))
    }

    /// The kernel's view (`nft list ruleset`), for failure messages only.
    pub fn ruleset(&self) -> String {
        let o = self.exec(&["nft", "list", "ruleset"]);
        format!(
            "--- nft list ruleset in {} ---\n{}",
            self.name,
            String::from_utf8_lossy(&o.stdout)
        )
    }

    /// Run the probe script with ARGS; returns its one-line answer.
    pub fn probe(&self, args: &[&str]) -> String {
        self.probe_within(PROBE_TIMEOUT, args)
    }

    /// [`Ns::probe`] waiting up to TIMEOUT seconds for an answer.
    pub fn probe_within(&self, timeout: &str, args: &[&str]) -> String {
        let mut argv = vec![python().expect("python3"), "-S", "-c", PROBE, timeout];
        argv.extend_from_slice(args);
        let o = self.exec(&argv);
        let out = String::from_utf8_lossy(&o.stdout).trim().to_string();
        assert!(
            o.status.success() && !out.is_empty(),
            "probe {args:?} in {} failed: {}",
            self.name,
            String::from_utf8_lossy(&o.stderr)
        );
        out
    }

    /// TCP connect: `ok`, `refused` (reset), `timeout` or `error ERRNO`.
    pub fn tcp(&self, host: &str, port: u16) -> String {
        self.probe(&["tcp", host, &port.to_string()])
    }

    /// [`Ns::tcp`] with a longer wait, for answers that may only come to the
    /// SYN's retransmission (after 1 s).
    /// Each (port, outcome, why): a TCP connect from here to `host:port`
    /// ends as `outcome`; a mismatch shows `server`'s ruleset.
    pub fn expect_tcp(&self, server: &Ns, host: &str, cases: &[(u16, &str, &str)]) {
        for &(port, want, why) in cases {
            assert_eq!(
                self.tcp(host, port),
                want,
                "port {port}: {why}\n{}",
                server.ruleset()
            );
        }
    }

    pub fn tcp_within(&self, timeout: &str, host: &str, port: u16) -> String {
        self.probe_within(timeout, &["tcp", host, &port.to_string()])
    }

    /// TCP connect, send a line, print the server's answer (see [`Ns::serve`]:
    /// `LOCALADDR:LOCALPORT PEERADDR`), or `refused` / `timeout`.
    pub fn talk(&self, host: &str, port: u16) -> String {
        self.probe(&["talk", host, &port.to_string()])
    }

    /// One UDP datagram: `reply` (echoed), `timeout`, or the ICMP error it
    /// caused as `icmp TYPE CODE` / `icmp6 TYPE CODE` (from the socket's
    /// error queue, so it is the error for this very datagram).
    pub fn udp(&self, host: &str, port: u16) -> String {
        self.probe(&["udp", host, &port.to_string()])
    }

    /// COUNT echo requests, GAP seconds apart; returns the sequence numbers
    /// (0-based) that were answered.
    pub fn ping(&self, host: &str, count: u32, gap: &str) -> Vec<u32> {
        let out = self.probe(&["ping", host, &count.to_string(), gap]);
        out.split_whitespace()
            .skip(1)
            .map(|n| n.parse().expect("sequence number"))
            .collect()
    }

    /// Start the server script on SPECS (`t80` TCP, `u53` UDP echo; dual
    /// stack) and wait until it listens. Killed when the handle drops.
    pub fn serve(&self, specs: &[&str]) -> Proc {
        let mut child = Command::new("ip")
            .args(["netns", "exec", &self.name])
            .args([python().expect("python3"), "-S", "-c", SERVER])
            .args(specs)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn server");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("server stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("server output");
        let proc = Proc(child);
        assert_eq!(line.trim(), "ready", "server {specs:?} did not start");
        proc
    }
}

impl Drop for Ns {
    fn drop(&mut self) {
        // A namespace lives on while processes run in it: end ours first,
        // politely (a daemon then removes its socket file from the host's
        // /run), then for sure.
        let pids = || -> Vec<String> {
            Command::new("ip")
                .args(["netns", "pids", &self.name])
                .output()
                .map(|o| {
                    String::from_utf8_lossy(&o.stdout)
                        .split_whitespace()
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut left = pids();
        if !left.is_empty() {
            let _ = Command::new("kill").arg("-TERM").args(&left).status();
            let t0 = std::time::Instant::now();
            while !left.is_empty() && t0.elapsed() < std::time::Duration::from_secs(2) {
                std::thread::sleep(std::time::Duration::from_millis(10));
                left = pids();
            }
            if !left.is_empty() {
                let _ = Command::new("kill").arg("-9").args(&left).status();
            }
        }
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// A process started in a namespace; killed and reaped on drop.
pub struct Proc(Child);

impl Proc {
    /// Own `child` (started in a namespace by the caller).
    pub fn wrap(child: Child) -> Proc {
        Proc(child)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Join A (device A_DEV) and B (device B_DEV) with a veth pair, created
/// inside A so the host namespace never holds it, and bring both ends up.
pub fn veth(a: &Ns, a_dev: &str, b: &Ns, b_dev: &str) {
    a.ip(&format!(
        "link add {a_dev} type veth peer name {b_dev} netns {}",
        b.name
    ));
    a.ip(&format!("link set {a_dev} up"));
    b.ip(&format!("link set {b_dev} up"));
}

/// Fresh namespace with loopback up and ICMP error rate limits off (REJECT
/// tests send several errors to one peer within a second).
fn node(tag: &str) -> Ns {
    let ns = Ns::new(tag);
    ns.ip("link set lo up");
    ns.sysctl("net.ipv4.icmp_ratelimit=0");
    ns.sysctl("net.ipv6.icmp.ratelimit=0");
    ns
}

/// Two namespaces on one veth: server SRV4/SRV6 (`nfk0`), client CLI4/CLI6
/// (`nfk1`). Returns once both families answer pings.
pub struct Lan {
    pub client: Ns,
    pub server: Ns,
}

pub fn lan(tag: &str) -> Option<Lan> {
    if !prerequisites() {
        return None;
    }
    let client = node(&format!("{tag}-c"));
    let server = node(&format!("{tag}-s"));
    veth(&server, "nfk0", &client, "nfk1");
    for (ns, dev, v4, v6) in [(&server, "nfk0", SRV4, SRV6), (&client, "nfk1", CLI4, CLI6)] {
        ns.ip(&format!("addr add {v4}/24 dev {dev}"));
        ns.ip(&format!("addr add {v6}/64 dev {dev} nodad"));
    }
    wait_reachable(&client, &[SRV4, SRV6]);
    Some(Lan { client, server })
}

/// Client 10.89.1.2 — (10.89.1.1) router (10.89.2.1, also 10.89.2.9) —
/// server 10.89.2.2, and the same in IPv6 with fd89:1::/64, fd89:2::/64
/// (router also fd89:2::9). The router forwards; both ends route through it.
pub struct Routed {
    pub client: Ns,
    pub router: Ns,
    pub server: Ns,
}

pub fn routed(tag: &str) -> Option<Routed> {
    if !prerequisites() {
        return None;
    }
    let client = node(&format!("{tag}-c"));
    let router = node(&format!("{tag}-r"));
    let server = node(&format!("{tag}-s"));
    veth(&router, "rc0", &client, "c0");
    veth(&router, "rs0", &server, "s0");
    client.ip("addr add 10.89.1.2/24 dev c0");
    client.ip("addr add fd89:1::2/64 dev c0 nodad");
    client.ip("route add default via 10.89.1.1");
    client.ip("-6 route add default via fd89:1::1");
    router.ip("addr add 10.89.1.1/24 dev rc0");
    router.ip("addr add fd89:1::1/64 dev rc0 nodad");
    router.ip("addr add 10.89.2.1/24 dev rs0");
    router.ip("addr add fd89:2::1/64 dev rs0 nodad");
    router.ip("addr add 10.89.2.9/32 dev rs0");
    // Deprecated, so source address selection (MASQUERADE) never picks it.
    router.ip("addr add fd89:2::9/128 dev rs0 nodad preferred_lft 0");
    router.sysctl("net.ipv4.ip_forward=1");
    router.sysctl("net.ipv6.conf.all.forwarding=1");
    server.ip("addr add 10.89.2.2/24 dev s0");
    server.ip("addr add fd89:2::2/64 dev s0 nodad");
    server.ip("route add default via 10.89.2.1");
    server.ip("-6 route add default via fd89:2::1");
    wait_reachable(&client, &["10.89.2.2", "fd89:2::2"]);
    Some(Routed {
        client,
        router,
        server,
    })
}

/// Ping until every host answers (links and neighbours settle), at most a
/// few seconds; panics otherwise.
fn wait_reachable(from: &Ns, hosts: &[&str]) {
    for host in hosts {
        let ok = (0..20).any(|_| !from.ping(host, 1, "0.01").is_empty());
        assert!(ok, "{host} unreachable from {}", from.name);
    }
}

/// Listener: for every `tN` a dual-stack TCP port N that reads one line and
/// answers `LOCALADDR:LOCALPORT PEERADDR` (IPv4-mapped addresses shown as
/// IPv4), for every `uN` a dual-stack UDP echo on port N. Prints `ready`
/// once all are bound.
const SERVER: &str = r#"
import socket, sys, threading
def plain(a):
    return a[7:] if a.startswith("::ffff:") else a
def talk(c, peer):
    try:
        c.settimeout(2)
        c.recv(256)
        l = c.getsockname()
        c.sendall(("%s:%d %s\n" % (plain(l[0]), l[1], plain(peer[0]))).encode())
    except OSError:
        pass
    finally:
        c.close()
def tcp_loop(s):
    while True:
        c, peer = s.accept()
        threading.Thread(target=talk, args=(c, peer), daemon=True).start()
def udp_loop(s):
    while True:
        data, peer = s.recvfrom(2048)
        s.sendto(data, peer)
loops = []
for spec in sys.argv[1:]:
    kind = socket.SOCK_STREAM if spec[0] == "t" else socket.SOCK_DGRAM
    s = socket.socket(socket.AF_INET6, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", int(spec[1:])))
    if kind == socket.SOCK_STREAM:
        s.listen(64)
        loops.append((tcp_loop, s))
    else:
        loops.append((udp_loop, s))
for f, s in loops:
    threading.Thread(target=f, args=(s,), daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
"#;

/// Probe: argv is TIMEOUT MODE HOST ...; prints one line (see the `Ns`
/// methods tcp, talk, udp, ping).
const PROBE: &str = r#"
import errno, os, select, socket, struct, sys, time
T = float(sys.argv[1]); mode = sys.argv[2]; host = sys.argv[3]
fam = socket.AF_INET6 if ":" in host else socket.AF_INET
def done(*a):
    print(*a)
    sys.exit(0)
if mode in ("tcp", "talk"):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(T)
    try:
        s.connect((host, int(sys.argv[4])))
        if mode == "tcp":
            done("ok")
        s.sendall(b"hello\n")
        done(s.recv(256).decode().strip() or "closed")
    except ConnectionRefusedError:
        done("refused")
    except socket.timeout:
        done("timeout")
    except OSError as e:
        done("error", errno.errorcode.get(e.errno, e.errno))
if mode == "udp":
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if fam == socket.AF_INET:
        s.setsockopt(socket.SOL_IP, 11, 1)          # IP_RECVERR
    else:
        s.setsockopt(socket.IPPROTO_IPV6, 25, 1)    # IPV6_RECVERR
    s.connect((host, int(sys.argv[4])))
    s.send(b"nfkeeper")
    r, _, _ = select.select([s], [], [], T)
    if not r:
        done("timeout")
    try:
        done("reply", s.recv(256).decode())
    except OSError:
        pass
    _, anc, _, _ = s.recvmsg(256, 512, socket.MSG_ERRQUEUE)
    for _level, _type, data in anc:
        _errno, origin, t, c = struct.unpack_from("=IBBB", data)
        done({2: "icmp", 3: "icmp6"}.get(origin, "origin%d" % origin), t, c)
    done("error-without-icmp")
if mode == "ping":
    n = int(sys.argv[4]); gap = float(sys.argv[5])
    if fam == socket.AF_INET:
        s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_ICMP); req, rep = 8, 0
    else:
        s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_ICMPV6); req, rep = 128, 129
    ident = os.getpid() & 0xffff
    got = set()
    def csum(b):
        t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
        t = (t >> 16) + (t & 0xffff); t += t >> 16
        return ~t & 0xffff
    def drain(wait):
        end = time.time() + wait
        while True:
            r, _, _ = select.select([s], [], [], max(end - time.time(), 0))
            if not r:
                return
            p = s.recv(2048)
            if fam == socket.AF_INET:
                p = p[(p[0] & 15) * 4:]
            t, _c, _k, i, q = struct.unpack_from("!BBHHH", p)
            if t == rep and i == ident:
                got.add(q)
                if len(got) == n:
                    return
    for q in range(n):
        m = struct.pack("!BBHHH", req, 0, 0, ident, q) + b"nfkeeper"
        if fam == socket.AF_INET:
            m = m[:2] + struct.pack("!H", csum(m)) + m[4:]
        s.sendto(m, (host, 0))
        drain(gap)
    if len(got) < n:
        drain(T)
    done(len(got), *sorted(got))
done("unknown mode", mode)
"#;

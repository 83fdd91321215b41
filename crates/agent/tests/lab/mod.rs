//! A fleet on one machine, for the etcd tests and the scale benchmark.
//!
//! Every simulated host is a network namespace of its own (its firewall
//! stays there); a "core" namespace holds a bridge and etcd, which listens
//! on the bridge address (198.18.0.1, the benchmarking range; nothing
//! outside these namespaces can reach it) and on the core's loopback. The
//! root namespace gets no address, no route, no rule: every `ip` command
//! names its namespace (`ip -n`), and processes start under `ip netns
//! exec`. Dropping the lab kills every process it started (by process
//! group) and deletes its namespaces, also when a test fails.

#![allow(dead_code)]

use agent::layout::Status;
use etcd_client::{Client, GetOptions};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub const PORT: u16 = 2379;
pub const CORE_ADDR: &str = "198.18.0.1";

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// Why the lab cannot run here, if it cannot.
pub fn unavailable() -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return Some("needs root (network namespaces)".into());
    }
    for (bin, pkg) in [("etcd", "etcd-server"), ("ip", "iproute2")] {
        if which(bin).is_none() {
            return Some(format!("no {bin} binary (Debian package {pkg})"));
        }
    }
    if nfkeeper().is_none() {
        return Some(
            "no nfkeeper binary: build the main workspace first (cargo build --profile ci -p nfkeeper) or set NFKEEPER_BIN"
                .into(),
        );
    }
    None
}

pub fn which_openssl() -> Option<PathBuf> {
    which("openssl")
}

fn which(bin: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(bin))
        .find(|p| p.exists())
}

/// The main workspace's `nfkeeper` binary: `$NFKEEPER_BIN`, or a ci (the
/// README's test command), release or debug build next to this test's
/// target directory or in the repository's `target/`.
pub fn nfkeeper() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NFKEEPER_BIN") {
        return Some(PathBuf::from(p));
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).map(Path::to_path_buf));
    }
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        roots.push(PathBuf::from(t));
    }
    roots.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    for profile in ["ci", "release", "debug"] {
        for r in &roots {
            let p = r.join(profile).join("nfkeeper");
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// The agent binary: cargo's for tests, else next to an example's
/// directory (build it with `--bins`).
pub fn agent_bin() -> PathBuf {
    if let Some(p) = option_env!("CARGO_BIN_EXE_nfkeeper-agent") {
        return PathBuf::from(p);
    }
    std::env::current_exe()
        .ok()
        .and_then(|e| {
            e.ancestors()
                .skip(1)
                .map(|d| d.join("nfkeeper-agent"))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| PathBuf::from("nfkeeper-agent"))
}

fn run(args: &[&str]) -> Result<String, String> {
    let o = Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", args[0]))?;
    if !o.status.success() {
        return Err(format!(
            "{args:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// One simulated host.
pub struct HostNs {
    pub name: String,
    pub ns: String,
    pub addr: String,
    pub daemon: Option<Child>,
    pub agent: Option<Child>,
    pub agent_args: Vec<String>,
}

pub struct Lab {
    pub id: String,
    pub core: String,
    pub dir: PathBuf,
    pub etcd: Option<Child>,
    pub hosts: Vec<HostNs>,
    pub rt: tokio::runtime::Runtime,
    pub client: Option<Client>,
    /// Where agents' and etcd's output goes.
    pub logs: PathBuf,
    /// etcd requests the lab itself made (to tell them from the fleet's).
    pub calls: usize,
    /// With TLS: the directory of ca.pem, server.pem/.key, client.pem/.key;
    /// etcd then serves the hosts over TLS with client certificates (and
    /// the lab over plain HTTP on the core's loopback).
    pub tls: Option<PathBuf>,
    /// With etcd's authentication on: the lab's user and password (the
    /// lab's client and `fleet` commands use them).
    pub user: Option<(String, String)>,
}

fn spawn_in(ns: &str, args: &[&str], log: &Path) -> Child {
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("log file");
    let err = out.try_clone().expect("log file");
    Command::new("ip")
        .args(["netns", "exec", ns])
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .expect("spawn under ip netns exec")
}

/// SIGTERM `c`'s whole process group, wait up to 2 s for `c` to end
/// (a daemon then removes its socket file from the host's /run), then
/// [`kill_group`].
pub fn stop_group(c: &mut Child) {
    if let Some(pid) = rustix::process::Pid::from_raw(c.id() as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
        let t0 = Instant::now();
        while matches!(c.try_wait(), Ok(None)) && t0.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    kill_group(c);
}

/// SIGKILL `c`'s whole process group, then reap it.
pub fn kill_group(c: &mut Child) {
    if let Some(pid) = rustix::process::Pid::from_raw(c.id() as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = c.kill();
    let _ = c.wait();
}

impl Lab {
    /// A core namespace with etcd, and no hosts yet.
    pub fn new() -> Lab {
        Lab::build(false)
    }

    /// A lab whose etcd wants TLS and client certificates from the hosts
    /// (certificates made with the openssl command).
    pub fn with_tls() -> Lab {
        Lab::build(true)
    }

    fn build(tls: bool) -> Lab {
        let id = format!(
            "nfkf{}x{}",
            std::process::id() % 100000,
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let dir = std::env::temp_dir().join(format!("{id}-lab"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("lab dir");
        let core = format!("{id}c");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let mut lab = Lab {
            logs: dir.join("log"),
            id,
            core: core.clone(),
            dir,
            etcd: None,
            hosts: Vec::new(),
            rt,
            client: None,
            calls: 0,
            tls: None,
            user: None,
        };
        if tls {
            lab.tls = Some(make_certs(&lab.dir.join("tls")));
        }
        run(&["ip", "netns", "add", &core]).expect("core namespace");
        for a in [
            vec!["ip", "-n", &core, "link", "set", "lo", "up"],
            vec!["ip", "-n", &core, "link", "add", "br0", "type", "bridge"],
            vec![
                "ip",
                "-n",
                &core,
                "addr",
                "add",
                "198.18.0.1/16",
                "dev",
                "br0",
            ],
            vec!["ip", "-n", &core, "link", "set", "br0", "up"],
        ] {
            run(&a).expect("core set-up");
        }
        lab.start_etcd();
        lab
    }

    pub fn start_etcd(&mut self) {
        let data = self.dir.join("etcd");
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let client_urls = format!("{scheme}://{CORE_ADDR}:{PORT},http://127.0.0.1:{PORT}");
        let adv = format!("{scheme}://{CORE_ADDR}:{PORT}");
        let log = self.dir.join("etcd.log");
        let mut tls_args: Vec<String> = Vec::new();
        if let Some(d) = &self.tls {
            let f = |n: &str| d.join(n).to_str().expect("utf-8").to_string();
            tls_args = vec![
                "--client-cert-auth".into(),
                format!("--trusted-ca-file={}", f("ca.pem")),
                format!("--cert-file={}", f("server.pem")),
                format!("--key-file={}", f("server.key")),
            ];
        }
        let mut argv: Vec<&str> = tls_args.iter().map(String::as_str).collect();
        self.etcd = Some(spawn_in(
            &self.core,
            &[
                "etcd",
                "--name",
                "lab",
                "--data-dir",
                data.to_str().expect("utf-8 path"),
                "--listen-client-urls",
                &client_urls,
                "--advertise-client-urls",
                &adv,
                "--listen-peer-urls",
                "http://127.0.0.1:2380",
                "--initial-advertise-peer-urls",
                "http://127.0.0.1:2380",
                "--initial-cluster",
                "lab=http://127.0.0.1:2380",
                "--listen-metrics-urls",
                "http://127.0.0.1:2381",
                "--log-level",
                "error",
                "--logger",
                "zap",
            ]
            .into_iter()
            .chain(argv.drain(..))
            .collect::<Vec<&str>>(),
            &log,
        ));
        self.client = None;
        let t0 = Instant::now();
        while self.connect().is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "etcd did not start; see {}",
                log.display()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn stop_etcd(&mut self) {
        if let Some(mut c) = self.etcd.take() {
            kill_group(&mut c);
        }
        self.client = None;
    }

    fn connect(&mut self) -> Result<(), String> {
        if self.client.is_some() {
            return Ok(());
        }
        // The runtime's sockets are made by the thread that drives it;
        // connect from a core thread, then drive the client from there
        // too (see `etcd`).
        let ep = format!("127.0.0.1:{PORT}");
        let path = format!("/run/netns/{}", self.core);
        let user = self.user.clone();
        let rt = &self.rt;
        let c = std::thread::scope(|s| {
            s.spawn(|| {
                let ns = std::fs::File::open(&path).expect("core namespace");
                rustix::thread::move_into_link_name_space(
                    std::os::fd::AsFd::as_fd(&ns),
                    Some(rustix::thread::LinkNameSpaceType::Network),
                )
                .expect("setns core");
                rt.block_on(async {
                    let mut o = etcd_client::ConnectOptions::new()
                        .with_connect_timeout(Duration::from_secs(1));
                    if let Some((u, p)) = user {
                        o = o.with_user(u, p);
                    }
                    let mut c = Client::connect([ep], Some(o))
                        .await
                        .map_err(|e| e.to_string())?;
                    c.status().await.map_err(|e| e.to_string())?;
                    Ok::<_, String>(c)
                })
            })
            .join()
            .expect("connect thread")
        })?;
        self.client = Some(c);
        Ok(())
    }

    /// Run an etcd operation from a thread in the core namespace (a
    /// connection broken by an etcd restart is re-made there).
    pub fn etcd<T: Send>(
        &mut self,
        f: impl for<'a> FnOnce(
                &'a mut Client,
            )
                -> std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>
            + Send,
    ) -> T {
        self.connect().expect("etcd");
        self.calls += 1;
        let path = format!("/run/netns/{}", self.core);
        let rt = &self.rt;
        let c = self.client.as_mut().expect("connected");
        std::thread::scope(|s| {
            s.spawn(move || {
                let ns = std::fs::File::open(&path).expect("core namespace");
                rustix::thread::move_into_link_name_space(
                    std::os::fd::AsFd::as_fd(&ns),
                    Some(rustix::thread::LinkNameSpaceType::Network),
                )
                .expect("setns core");
                rt.block_on(f(c))
            })
            .join()
            .expect("etcd thread")
        })
    }

    /// etcd's Prometheus metrics (its metrics URL on the core's loopback).
    pub fn etcd_metrics(&self) -> String {
        http_get(&self.core, "127.0.0.1:2381")
    }

    /// An HTTP GET of `/metrics` at `addr` in host `i`'s namespace.
    pub fn host_metrics(&self, i: usize, addr: &str) -> String {
        http_get(&self.hosts[i].ns, addr)
    }

    /// Every host's status (absent hosts left out).
    pub fn statuses(&mut self) -> Vec<Status> {
        self.etcd(|c| {
            Box::pin(async move {
                let r = c
                    .get("/nfkeeper/status/", Some(GetOptions::new().with_prefix()))
                    .await
                    .expect("get statuses");
                r.kvs()
                    .iter()
                    .filter_map(|kv| serde_json::from_slice(kv.value()).ok())
                    .collect()
            })
        })
    }

    pub fn status(&mut self, host: &str) -> Option<Status> {
        self.statuses().into_iter().find(|s| s.host == host)
    }

    pub fn put(&mut self, key: &str, value: &str) {
        let (k, v) = (key.to_string(), value.to_string());
        self.etcd(move |c| {
            Box::pin(async move { c.put(k, v, None).await.map(|_| ()).expect("put") })
        });
    }

    /// `nfkeeper-agent fleet ARGS` in the core namespace: (exit code,
    /// stdout + stderr).
    pub fn fleet(&self, args: &[&str]) -> (i32, String) {
        let ep = format!("--endpoints=127.0.0.1:{PORT}");
        let o = Command::new("ip")
            .args(["netns", "exec", &self.core])
            .arg(agent_bin())
            .arg("fleet")
            .arg(&ep)
            .args(self.user.iter().map(|(u, p)| format!("--user={u}:{p}")))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("fleet");
        (
            o.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        )
    }

    /// `fleet ARGS` that must succeed.
    pub fn fleet_ok(&self, args: &[&str]) -> String {
        let (code, out) = self.fleet(args);
        assert_eq!(code, 0, "fleet {args:?}: {out}");
        out
    }

    /// Write `text` to a file in the lab directory; its path.
    pub fn file(&self, name: &str, text: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, text).expect("write");
        p.to_str().expect("utf-8").to_string()
    }

    /// Add host `name` (namespace, veth on the bridge); with a daemon if
    /// `daemon`. Its agent is not started.
    pub fn add_host(&mut self, name: &str, daemon: bool) -> usize {
        let i = self.hosts.len();
        let ns = format!("{}h{i}", self.id);
        let addr = format!("198.18.{}.{}", 1 + i / 250, 1 + i % 250);
        run(&["ip", "netns", "add", &ns]).expect("host namespace");
        let veth = format!("v{i}");
        for a in [
            vec![
                "ip", "-n", &self.core, "link", "add", &veth, "type", "veth", "peer", "name",
                "eth0", "netns", &ns,
            ],
            vec![
                "ip", "-n", &self.core, "link", "set", &veth, "master", "br0", "up",
            ],
            vec!["ip", "-n", &ns, "link", "set", "lo", "up"],
            vec![
                "ip",
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{addr}/16"),
                "dev",
                "eth0",
            ],
            vec!["ip", "-n", &ns, "link", "set", "eth0", "up"],
        ] {
            run(&a).expect("host set-up");
        }
        let mut h = HostNs {
            name: name.to_string(),
            ns,
            addr,
            daemon: None,
            agent: None,
            agent_args: Vec::new(),
        };
        if daemon {
            let bin = nfkeeper().expect("nfkeeper");
            h.daemon = Some(spawn_in(
                &h.ns,
                &[bin.to_str().expect("utf-8"), "serve", "--quiet"],
                &self.logs,
            ));
        }
        self.hosts.push(h);
        if daemon {
            let t0 = Instant::now();
            while self.nfk(i, &["status"]).is_err() {
                assert!(
                    t0.elapsed() < Duration::from_secs(20),
                    "daemon of {name} did not start"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        i
    }

    /// Start (or restart) host `i`'s agent with extra `args`.
    pub fn start_agent(&mut self, i: usize, args: &[&str]) {
        let bin = agent_bin();
        let nfk = nfkeeper().expect("nfkeeper");
        let tls = self.tls.clone();
        let h = &mut self.hosts[i];
        if !args.is_empty() || h.agent_args.is_empty() {
            h.agent_args = args.iter().map(|s| s.to_string()).collect();
        }
        let mut argv: Vec<String> = vec![
            bin.to_str().expect("utf-8").into(),
            "--host".into(),
            h.name.clone(),
            format!("--endpoints={CORE_ADDR}:{PORT}"),
            format!("--nfkeeper={}", nfk.display()),
            "--lease-ttl=3".into(),
            "--keepalive-time=1s".into(),
            "--keepalive-timeout=2s".into(),
            "--command-timeout=2s".into(),
        ];
        if let Some(d) = &tls {
            for (opt, file) in [
                ("--cacert", "ca.pem"),
                ("--cert", "client.pem"),
                ("--key", "client.key"),
            ] {
                argv.push(format!("{opt}={}", d.join(file).display()));
            }
        }
        argv.extend(h.agent_args.iter().cloned());
        let refs: Vec<&str> = argv.iter().map(String::as_str).collect();
        h.agent = Some(spawn_in(&h.ns, &refs, &self.logs));
    }

    /// Whether a process of host `i`'s agent's process group has `needle`
    /// in its command line (e.g. the nfkeeper restore it runs).
    pub fn agent_runs(&self, i: usize, needle: &str) -> bool {
        let Some(pgid) = self.hosts[i].agent.as_ref().map(|c| c.id()) else {
            return false;
        };
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return false;
        };
        dir.flatten().any(|e| {
            let p = e.path();
            let stat = std::fs::read_to_string(p.join("stat")).unwrap_or_default();
            // pid (comm) state ppid pgrp ...: comm may hold spaces.
            let pgrp = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(2))
                .and_then(|v| v.parse::<u32>().ok());
            pgrp == Some(pgid)
                && std::fs::read(p.join("cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).contains(needle))
                    .unwrap_or(false)
        })
    }

    pub fn kill_agent(&mut self, i: usize) {
        if let Some(mut c) = self.hosts[i].agent.take() {
            kill_group(&mut c);
        }
    }

    /// `nfkeeper ARGS` in host `i`'s namespace (stdout, or the error).
    pub fn nfk(&self, i: usize, args: &[&str]) -> Result<String, String> {
        let bin = nfkeeper().expect("nfkeeper");
        let mut a = vec![
            "ip",
            "netns",
            "exec",
            &self.hosts[i].ns,
            bin.to_str().expect("utf-8"),
        ];
        a.extend_from_slice(args);
        run(&a)
    }

    /// Host `i`'s v4 rules as iptables-save prints them, comments dropped
    /// and the chains' policy counters zeroed (the host's own traffic moves
    /// them between two reads; the kernel counts what reaches a policy).
    pub fn rules(&self, i: usize) -> String {
        self.nfk(i, &["iptables-save"])
            .expect("iptables-save")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| match (l.starts_with(':'), l.rfind(" [")) {
                (true, Some(at)) => format!("{} [0:0]\n", &l[..at]),
                _ => format!("{l}\n"),
            })
            .collect()
    }

    /// Wait up to `t` for `ok` over the statuses; the last statuses if it
    /// never held.
    pub fn wait(
        &mut self,
        t: Duration,
        mut ok: impl FnMut(&[Status]) -> bool,
    ) -> Result<Vec<Status>, Vec<Status>> {
        let t0 = Instant::now();
        loop {
            let s = self.statuses();
            if ok(&s) {
                return Ok(s);
            }
            if t0.elapsed() > t {
                return Err(s);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Wait until every host in `names` reports `rev` healthy.
    pub fn wait_rev(&mut self, names: &[&str], rev: i64, t: Duration) -> Vec<Status> {
        let r = self.wait(t, |s| {
            names
                .iter()
                .all(|n| s.iter().any(|st| st.host == *n && st.healthy_on(rev)))
        });
        match r {
            Ok(s) => s,
            Err(s) => panic!(
                "hosts {names:?} not on release {rev} in {t:?}: {s:#?}\nlogs: {}",
                self.logs.display()
            ),
        }
    }

    /// Set link `eth0` of host `i` up or down (a partition).
    pub fn link(&self, i: usize, up: bool) {
        run(&[
            "ip",
            "-n",
            &self.hosts[i].ns,
            "link",
            "set",
            "eth0",
            if up { "up" } else { "down" },
        ])
        .expect("link");
    }

    /// The mod revision of the ruleset head (what `fleet rollout` names
    /// the release).
    pub fn head_rev(&mut self, name: &str) -> i64 {
        let k = format!("/nfkeeper/rulesets/{name}/");
        self.etcd(move |c| {
            Box::pin(async move {
                let r = c
                    .get(k, Some(GetOptions::new().with_prefix()))
                    .await
                    .expect("get");
                r.kvs()
                    .iter()
                    .map(|kv| kv.mod_revision())
                    .max()
                    .unwrap_or(0)
            })
        })
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for h in &mut self.hosts {
            for c in [h.agent.take(), h.daemon.take()].into_iter().flatten() {
                let mut c = c;
                stop_group(&mut c);
            }
        }
        self.stop_etcd();
        for h in &self.hosts {
            let _ = run(&["ip", "netns", "del", &h.ns]);
        }
        let _ = run(&["ip", "netns", "del", &self.core]);
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A CA, a server certificate for the core's address and a client
/// certificate (P-256, one day), in `dir`; returns `dir`.
fn make_certs(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).expect("tls dir");
    let d = |n: &str| dir.join(n).to_str().expect("utf-8").to_string();
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["openssl", "req", "-x509"];
    let (cak, cap) = (d("ca.key"), d("ca.pem"));
    ca.extend_from_slice(&ec);
    ca.extend_from_slice(&[
        "-keyout",
        &cak,
        "-out",
        &cap,
        "-days",
        "1",
        "-subj",
        "/CN=lab-ca",
    ]);
    run(&ca).expect("CA");
    for (name, ext) in [
        (
            "server",
            format!("subjectAltName=IP:{CORE_ADDR},IP:127.0.0.1\nextendedKeyUsage=serverAuth"),
        ),
        ("client", "extendedKeyUsage=clientAuth".to_string()),
    ] {
        let (key, csr, pem, extf) = (
            d(&format!("{name}.key")),
            d(&format!("{name}.csr")),
            d(&format!("{name}.pem")),
            d(&format!("{name}.ext")),
        );
        std::fs::write(&extf, format!("{ext}\n")).expect("ext");
        let mut req = vec!["openssl", "req"];
        req.extend_from_slice(&ec);
        let subj = format!("/CN={name}");
        req.extend_from_slice(&["-keyout", &key, "-out", &csr, "-subj", &subj]);
        run(&req).expect("csr");
        run(&[
            "openssl",
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &cap,
            "-CAkey",
            &cak,
            "-CAcreateserial",
            "-out",
            &pem,
            "-days",
            "1",
            "-extfile",
            &extf,
        ])
        .expect("sign");
    }
    dir.to_path_buf()
}

/// `GET /metrics` at `addr` from a thread in namespace `ns`: the body.
fn http_get(ns: &str, addr: &str) -> String {
    let path = format!("/run/netns/{ns}");
    let addr = addr.to_string();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        let ns = std::fs::File::open(&path).expect("namespace");
        rustix::thread::move_into_link_name_space(
            std::os::fd::AsFd::as_fd(&ns),
            Some(rustix::thread::LinkNameSpaceType::Network),
        )
        .expect("setns");
        let mut s = std::net::TcpStream::connect(&addr).expect("metrics endpoint");
        s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n")
            .expect("request");
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        match out.split_once("\r\n\r\n") {
            Some((_, body)) => body.to_string(),
            None => out,
        }
    })
    .join()
    .expect("metrics thread")
}

//! `nfkeeper bench daemon`: what `nfkeeper serve` buys, in fresh
//! namespaces, against iptables-nft in the same run.
//!
//! Cases (sizes in brackets are `--quick`):
//! - **concurrent appends**: C = 1, 8, 64 API clients (threads, one
//!   connection each) appending distinct rules into a chain that already
//!   holds P = 100 000 [10 000] rules; acknowledged appends per second and
//!   p50/p99 latency. Baseline: C concurrent `iptables-nft -w -A`
//!   processes into the same kind of chain.
//! - **single operation**: one API client on a 1 000-rule ruleset,
//!   alternating append and delete by spec; p50/p99, and the kernel floor
//!   of the same append and delete.
//! - **one process per rule**: `nfkeeper iptables -A` processes through
//!   the daemon, in direct mode, and `iptables-nft -w -A`, onto chains of
//!   1 000, 3 000 and 100 000 [10 000] rules; median per call, and beyond
//!   the kernel floor (one in-process commit of the same append).
//! - **parallel** ([`parallel`]): `--procs` N processes at once, each
//!   running `--cmds` M `iptables -w -A` commands and then M `-D` by spec,
//!   for nfkeeper direct, through its daemon, iptables-nft and
//!   iptables-legacy: failures, wall time, appends/s.
//! - **memory**: the daemon's resident set after loading R = 1 000 000
//!   [100 000] rules in 1 000 chains, and its load time.
//! - **hostile** ([`hostile`]): the daemon's resident set and CPU under
//!   peers that stall, flood, trickle, or exhaust its descriptors.
//!
//! With $NFKEEPER_OLD_BIN set (another nfkeeper build), parallel and
//! hostile measure it too, in the same run.
//!
//! Every process is spawned into the namespace by a thread that entered
//! it (`setns`; no wrapper process), the daemon included.

mod hostile;
mod parallel;

use crate::netns::Netns;
use crate::netns::{enter, spawn_in_netns};
use std::fmt::Write as _;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Sizes {
    preload: usize,
    appends: usize,
    single_ops: usize,
    calls: usize,
    /// Chain lengths of the one-process-per-rule case.
    process_sizes: Vec<usize>,
    memory_rules: usize,
    /// Processes at once and commands each, of the parallel case.
    procs: usize,
    cmds: usize,
}

fn ns_path(ns: &Netns) -> PathBuf {
    Path::new("/run/netns").join(ns.name())
}

/// Restore `text` in direct mode (or with iptables-nft-restore).
fn preload(ns: &Netns, text: &str, tool: &[&str]) -> Result<(), String> {
    let p = ns
        .stage("preload", text.as_bytes())
        .map_err(|e| e.to_string())?;
    let r = ns
        .run(tool, Some(&p), Duration::from_secs(1800))
        .map_err(|e| e.to_string())?;
    if !r.status.success() {
        return Err(format!("{}: {}", tool.join(" "), r.stderr.trim()));
    }
    Ok(())
}

/// `n` CF-shaped rules in chain X, plus `chains` empty chains.
fn chain_x(n: usize) -> String {
    let mut s = String::from("*filter\n:X - [0:0]\n");
    for i in 0..n {
        let a = workload::cf_addr(i);
        let _ = writeln!(
            s,
            "-A X -s {}.{}.{}.{}/32 -p tcp -m tcp --dport 8080 -j ACCEPT",
            a[0], a[1], a[2], a[3]
        );
    }
    s.push_str("COMMIT\n");
    s
}

/// A running daemon; killed on drop.
struct Daemon {
    child: Child,
    sock: PathBuf,
    load: Duration,
}

impl Daemon {
    fn start(ns: &Netns) -> Result<Daemon, String> {
        Daemon::start_with(ns, &super::adapters::nfkeeper_bin(), &[])
    }

    /// `bin serve` with `extra` options, in `ns`, on a socket of its own;
    /// returns once the socket answers (the model is loaded).
    fn start_with(ns: &Netns, bin: &str, extra: &[&str]) -> Result<Daemon, String> {
        let sock = std::env::temp_dir().join(format!("{}.sock", ns.name()));
        let s = sock.to_string_lossy().into_owned();
        let t0 = Instant::now();
        let f = std::fs::File::open(ns_path(ns)).map_err(|e| format!("{}: {e}", ns.name()))?;
        let mut cmd = Command::new(bin);
        cmd.args(["serve", "--quiet", "--socket", &s])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let (child, _) =
            spawn_in_netns(f.as_fd(), &mut cmd).map_err(|e| format!("nfkeeper serve: {e}"))?;
        let mut d = Daemon {
            child,
            sock,
            load: Duration::ZERO,
        };
        while std::os::unix::net::UnixStream::connect(&d.sock).is_err() {
            if t0.elapsed() > Duration::from_secs(900) {
                return Err("nfkeeper serve did not start".into());
            }
            if let Ok(Some(st)) = d.child.try_wait() {
                return Err(format!("nfkeeper serve exited: {st}"));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        d.load = t0.elapsed();
        Ok(d)
    }

    fn rss_mb(&self) -> f64 {
        rss_mb(self.child.id())
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it still runs (a daemon that died is reported, not waited for).
    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

/// Resident set of process `pid` in MiB (VmRSS of /proc/PID/status; 0
/// when it is gone).
fn rss_mb(pid: u32) -> f64 {
    let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    st.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.sock);
    }
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// A distinct CF-shaped rule for client `c`, operation `i`.
fn rule(c: usize, i: usize) -> Vec<String> {
    format!(
        "-s 11.{}.{}.{}/32 -p tcp -m tcp --dport 8080 -j ACCEPT",
        c % 256,
        (i / 256) % 256,
        i % 256
    )
    .split(' ')
    .map(String::from)
    .collect()
}

/// (appends/s, p50 µs, p99 µs) of `clients` API clients.
fn api_appends(sock: &Path, clients: usize, total: usize) -> Result<(f64, f64, f64), String> {
    let per = total.div_ceil(clients);
    let t0 = Instant::now();
    let lat: Vec<Result<Vec<f64>, String>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..clients)
            .map(|c| {
                s.spawn(move || {
                    let mut cl = proto::client::Client::connect(sock).map_err(|e| e.to_string())?;
                    let mut v = Vec::with_capacity(per);
                    for i in 0..per {
                        let r = rule(c, i);
                        let words: Vec<&str> = r.iter().map(String::as_str).collect();
                        let t = Instant::now();
                        cl.append(proto::Fam::V4, "filter", "X", &words)
                            .map_err(|e| e.to_string())?;
                        v.push(t.elapsed().as_secs_f64() * 1e6);
                    }
                    Ok(v)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("panic".into())))
            .collect()
    });
    let wall = t0.elapsed().as_secs_f64();
    let mut all = Vec::new();
    for l in lat {
        all.extend(l?);
    }
    let n = all.len() as f64;
    Ok((n / wall, pct(&mut all, 0.5), pct(&mut all, 0.99)))
}

/// Appends/s of `procs` concurrent iptables-nft processes.
fn nft_appends(ns: &Netns, procs: usize, total: usize) -> Result<f64, String> {
    let per = total.div_ceil(procs);
    let path = ns_path(ns);
    let t0 = Instant::now();
    let res: Vec<Result<(), String>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..procs)
            .map(|c| {
                let path = path.clone();
                s.spawn(move || {
                    // This thread enters the namespace and its processes
                    // inherit it: spawned without a fork of the harness
                    // (see crate::netns::spawn_in_netns).
                    // Only this thread's namespace changes, and the
                    // thread ends here.
                    enter(&path).map_err(|e| format!("setns: {e}"))?;
                    for i in 0..per {
                        let r = rule(c, i);
                        let o = Command::new("iptables-nft")
                            .args(["-w", "-A", "X"])
                            .args(&r)
                            .stdin(Stdio::null())
                            .stdout(Stdio::null())
                            .output()
                            .map_err(|e| e.to_string())?;
                        if !o.status.success() {
                            return Err(String::from_utf8_lossy(&o.stderr).trim().to_string());
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("panic".into())))
            .collect()
    });
    for r in res {
        r?;
    }
    Ok((per * procs) as f64 / t0.elapsed().as_secs_f64())
}

/// Median seconds per `nfkeeper`/`iptables-nft` append process.
fn per_call(ns: &Netns, argv0: &[&str], env: &[(&str, &str)], calls: usize) -> Result<f64, String> {
    let f = std::fs::File::open(ns_path(ns)).map_err(|e| e.to_string())?;
    let mut v = Vec::with_capacity(calls);
    for i in 0..calls {
        let r = rule(250, i);
        let mut argv = argv0.to_vec();
        argv.extend(["-w", "-A", "X"]);
        argv.extend(r.iter().map(String::as_str));
        let mut c = Command::new(argv[0]);
        c.args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, val) in env {
            c.env(k, val);
        }
        // Spawned without a fork of this process (see spawn_in_netns).
        let (child, t) = spawn_in_netns(f.as_fd(), &mut c).map_err(|e| e.to_string())?;
        let o = child.wait_with_output().map_err(|e| e.to_string())?;
        v.push(t.elapsed().as_secs_f64());
        if !o.status.success() {
            return Err(String::from_utf8_lossy(&o.stderr).trim().to_string());
        }
    }
    Ok(pct(&mut v, 0.5))
}

/// The kernel's own cost of the append these cases measure: median µs of
/// the smallest transaction that adds one CF-shaped rule at the end of
/// `chain` (table `nfkeeper_filter`, as nfkeeper lays it out) and of the
/// one that deletes it again, `reps` times, from a thread inside `ns` on
/// this crate's netlink codec — no process start, no reading, no model.
/// When the chain ends in a compiled run (the default), that is one
/// element of the run's set (with its rule's id and text as userdata, as
/// nfkeeper writes it); else one kernel rule, deleted by handle. What a
/// write costs beyond this is nfkeeper's (or the other tool's) own. The
/// second value says which: "element" or "rule".
fn kernel_floor(ns: &Netns, chain: &str, reps: usize) -> Result<(f64, f64, &'static str), String> {
    use nft::batch::Placement;
    use nft::expr::base;
    use nft::{Expr, Family, Rule, SetElem, SetElems, Socket, Verdict};
    let path = ns_path(ns);
    let chain = chain.to_string();
    std::thread::spawn(move || -> Result<(f64, f64, &'static str), String> {
        // Only this thread's network namespace changes, and the thread
        // ends here.
        enter(&path).map_err(|e| format!("setns: {e}"))?;
        let mut s = Socket::open().map_err(|e| e.to_string())?;
        let (mut add, mut del) = (Vec::new(), Vec::new());
        let run = s
            .sets(Family::Ipv4, Some("nfkeeper_filter"))
            .map_err(|e| e.to_string())?
            .into_iter()
            .find(|x| x.name.starts_with("__nfk_run"));
        if let Some(set) = run {
            for i in 0..reps {
                let a = [10u8, 250, (i >> 8) as u8, i as u8];
                let elems = |ud: bool| {
                    let mut el = SetElem::key(&a);
                    if ud {
                        // Id and text, about the size nfkeeper writes.
                        let text = format!(
                            "-A {chain} -s {}.{}.{}.{}/32 -p tcp -m tcp --dport 8080 -j ACCEPT",
                            a[0], a[1], a[2], a[3]
                        );
                        let mut u = vec![0u8; 10];
                        u.extend_from_slice(text.as_bytes());
                        el.userdata = Some(u);
                    }
                    SetElems::new(Family::Ipv4, "nfkeeper_filter", &set.name, vec![el])
                };
                // µs of committing `b`; a refusal ends the measurement.
                let timed = |s: &mut Socket, mut b: nft::Batch, what: &str| {
                    let t = Instant::now();
                    let rep = s.commit(&mut b).map_err(|e| e.to_string())?;
                    let us = t.elapsed().as_secs_f64() * 1e6;
                    if !rep.outcome.is_ok() {
                        return Err(format!("floor {what} refused: {:?}", rep.outcome.errors));
                    }
                    Ok(us)
                };
                let mut b = s.batch(None);
                b.create(&elems(true), 0);
                add.push(timed(&mut s, b, "element add")?);
                let mut b = s.batch(None);
                b.delete(&elems(false), 0);
                del.push(timed(&mut s, b, "element delete")?);
            }
            return Ok((pct(&mut add, 0.5), pct(&mut del, 0.5), "element"));
        }
        for i in 0..reps {
            let a = [10u8, 250, (i >> 8) as u8, i as u8];
            let rule = Rule {
                userdata: Some(
                    format!(
                        "-A {chain} -s {}.{}.{}.{}/32 -p tcp -m tcp --dport 8080 -j ACCEPT",
                        a[0], a[1], a[2], a[3]
                    )
                    .into_bytes(),
                ),
                ..Rule::new(
                    Family::Ipv4,
                    "nfkeeper_filter",
                    &chain,
                    vec![
                        Expr::load(base::NETWORK, 12, 4),
                        Expr::cmp_eq(&a),
                        Expr::load(base::NETWORK, 9, 1),
                        Expr::cmp_eq(&[6]),
                        Expr::load(base::TRANSPORT, 2, 2),
                        Expr::cmp_eq(&8080u16.to_be_bytes()),
                        Expr::counter(),
                        Expr::verdict(Verdict::Accept),
                    ],
                )
            };
            let mut b = s.batch(None);
            b.add_rule(&rule, Placement::Append, true, 0);
            let t = Instant::now();
            let rep = s.commit(&mut b).map_err(|e| e.to_string())?;
            add.push(t.elapsed().as_secs_f64() * 1e6);
            let h = rep
                .outcome
                .echoes
                .first()
                .and_then(|e| e.handle)
                .ok_or_else(|| format!("floor append refused: {:?}", rep.outcome.errors))?;
            let mut b = s.batch(None);
            b.delete(
                &Rule::key(Family::Ipv4, "nfkeeper_filter", &chain, Some(h)),
                0,
            );
            let t = Instant::now();
            let rep = s.commit(&mut b).map_err(|e| e.to_string())?;
            del.push(t.elapsed().as_secs_f64() * 1e6);
            if !rep.outcome.is_ok() {
                return Err(format!("floor delete refused: {:?}", rep.outcome.errors));
            }
        }
        Ok((pct(&mut add, 0.5), pct(&mut del, 0.5), "rule"))
    })
    .join()
    .map_err(|_| "floor thread panicked".to_string())?
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The options of `nfkeeper bench daemon`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DaemonArgs {
    pub quick: bool,
    /// `--case`: these cases only, in this order (empty: all of [`CASES`]).
    pub cases: Vec<String>,
    /// `--procs`, `--cmds`: the parallel case's processes at once and
    /// commands each (default 8 and 200; 4 and 50 with `--quick`).
    pub procs: Option<usize>,
    pub cmds: Option<usize>,
    /// `--rcu-expedited`: RCU grace periods expedited for the run (as the
    /// kernel suites' own `--rcu-expedited`, see [`crate::rcu`]); off: the
    /// host's setting, which every deleting process pays at exit.
    pub rcu_expedited: bool,
    pub out: Option<String>,
}

impl DaemonArgs {
    /// The options as clap arguments, with their help.
    pub fn args() -> Vec<clap::Arg> {
        use crate::args::{flag, value, words};
        vec![
            flag("quick").help("Smaller sizes (10k preloaded rules instead of 100k)"),
            words("case", "C,...")
                .value_parser(CASES)
                .help("Only these cases [default: all]"),
            value("procs", "N", crate::args::count).help(
                "parallel: processes at once, each running its commands one after another \
                 [default: 8; 4 with --quick]",
            ),
            value("cmds", "M", crate::args::count).help(
                "parallel: `-A` commands of each process, then as many `-D` \
                 [default: 200; 50 with --quick]",
            ),
            flag("rcu-expedited").help(
                "Expedite the kernel's RCU grace periods for the run (restored at the end), \
                 as the cf/ruleset/packet suites do by default [default: the host's setting]",
            ),
            value(
                "out",
                "DIR",
                clap::builder::NonEmptyStringValueParser::new(),
            )
            .help("Also write the table to DIR/daemon.md"),
        ]
    }

    /// The options from what clap matched with [`DaemonArgs::args`].
    pub fn from_matches(m: &clap::ArgMatches) -> DaemonArgs {
        DaemonArgs {
            quick: m.get_flag("quick"),
            cases: crate::args::get_words(m, "case"),
            procs: m.get_one::<usize>("procs").copied(),
            cmds: m.get_one::<usize>("cmds").copied(),
            rcu_expedited: m.get_flag("rcu-expedited"),
            out: m.get_one::<String>("out").cloned(),
        }
    }
}

/// Runs the suite; Markdown on stdout (and in `--out DIR/daemon.md`).
/// Returns the exit code: 0, or 1 when a case could not be measured.
pub fn main(args: &DaemonArgs) -> i32 {
    let quick = args.quick;
    let out = args.out.clone();
    if !crate::netns::is_root() {
        eprintln!(
            "nfkeeper bench daemon needs root: every case runs in a network namespace it creates"
        );
        return 1;
    }
    crate::netns::watch_signals();
    crate::netns::cleanup_stale();
    let sz = if quick {
        Sizes {
            preload: 10_000,
            appends: 640,
            single_ops: 1000,
            calls: 100,
            process_sizes: vec![1000, 3000, 10_000],
            memory_rules: 100_000,
            procs: args.procs.unwrap_or(4),
            cmds: args.cmds.unwrap_or(50),
        }
    } else {
        Sizes {
            preload: 100_000,
            appends: 3200,
            single_ops: 2000,
            calls: 200,
            process_sizes: vec![1000, 3000, 100_000],
            memory_rules: 1_000_000,
            procs: args.procs.unwrap_or(8),
            cmds: args.cmds.unwrap_or(200),
        }
    };
    let cases: Vec<String> = if args.cases.is_empty() {
        CASES.iter().map(|c| c.to_string()).collect()
    } else {
        args.cases.clone()
    };
    let _rcu = if args.rcu_expedited {
        match crate::rcu::expedite() {
            Ok(g) => Some(g),
            Err(e) => {
                eprintln!("/sys/kernel/rcu_expedited: {e}");
                return 1;
            }
        }
    } else {
        None
    };
    let rcu = std::fs::read_to_string("/sys/kernel/rcu_expedited")
        .map_or("?".into(), |v| v.trim().to_string());
    let load0 = crate::loadavg();
    let start = crate::suites::machine::utc(crate::suites::machine::now_secs(), false);
    match run(&sz, &cases) {
        Ok(md) => {
            let mut argv: Vec<String> = std::env::args().collect();
            if let Some(a) = argv.first_mut() {
                *a = a.rsplit('/').next().unwrap_or("").to_string();
            }
            let md = format!(
                "{md}\nCommand: `{}` (started {start}); nfkeeper: {}{}; /sys/kernel/rcu_expedited {rcu}; load average {load0} at the start, {} at the end.\n",
                crate::suites::machine::shell_line(&argv),
                super::adapters::nfkeeper_bin(),
                super::adapters::nfkeeper_old_bin()
                    .map_or(String::new(), |b| format!(", NFKEEPER_OLD_BIN: {b}")),
                crate::loadavg()
            );
            print!("{md}");
            if let Some(d) = out {
                let _ = std::fs::create_dir_all(&d);
                if let Err(e) = std::fs::write(Path::new(&d).join("daemon.md"), &md) {
                    eprintln!("{d}: {e}");
                    return 1;
                }
            }
            0
        }
        Err(e) => {
            eprintln!("nfkeeper bench daemon: {e}");
            1
        }
    }
}

fn ns() -> Result<Netns, String> {
    Netns::new().map_err(|e| e.to_string())
}

/// The cases, in report order; `--case` picks some.
pub const CASES: [&str; 6] = [
    "concurrent",
    "single",
    "process",
    "parallel",
    "memory",
    "hostile",
];

fn run(sz: &Sizes, cases: &[String]) -> Result<String, String> {
    let mut md = String::new();
    for c in cases {
        match c.as_str() {
            "concurrent" => concurrent(sz, &mut md)?,
            "single" => single(sz, &mut md)?,
            "process" => process(sz, &mut md)?,
            "parallel" => parallel::run(sz.procs, sz.cmds, &mut md)?,
            "memory" => memory(sz, &mut md)?,
            "hostile" => hostile::run(&mut md)?,
            other => {
                return Err(format!(
                    "unknown case `{other}' (cases: {})",
                    CASES.join(", ")
                ))
            }
        }
    }
    Ok(md)
}

/// Concurrent appends into a long chain: API clients vs iptables-nft processes.
fn concurrent(sz: &Sizes, md: &mut String) -> Result<(), String> {
    let nft = have("iptables-nft");
    // Concurrent appends into a long chain.
    let _ = writeln!(
        md,
        "### Concurrent appends into a chain holding {} rules ({} appends per row)\n\n| clients | nfkeeper serve (API) appends/s | p50 µs | p99 µs | iptables-nft processes appends/s | ratio |\n|--:|--:|--:|--:|--:|--:|",
        sz.preload, sz.appends
    );
    for clients in [1, 8, 64] {
        let n = ns()?;
        preload(
            &n,
            &chain_x(sz.preload),
            &[
                &super::adapters::nfkeeper_bin(),
                "--direct",
                "iptables-restore",
            ],
        )?;
        let d = Daemon::start(&n)?;
        let (rate, p50, p99) = api_appends(&d.sock, clients, sz.appends)?;
        drop(d);
        drop(n);
        let base = if nft {
            let n = ns()?;
            preload(&n, &chain_x(sz.preload), &["iptables-nft-restore"])?;
            // Fewer appends: each costs a process and a chain rebuild.
            Some(nft_appends(&n, clients, (sz.appends / 5).max(clients))?)
        } else {
            None
        };
        let _ = writeln!(
            md,
            "| {clients} | {rate:.0} | {p50:.0} | {p99:.0} | {} | {} |",
            base.map_or("n/a".into(), |b| format!("{b:.0}")),
            base.map_or("n/a".into(), |b| format!("{:.1}×", rate / b))
        );
    }
    Ok(())
}

/// One operation at a time on a small ruleset.
fn single(sz: &Sizes, md: &mut String) -> Result<(), String> {
    // One operation at a time on a small ruleset.
    {
        let n = ns()?;
        preload(
            &n,
            &chain_x(1000),
            &[
                &super::adapters::nfkeeper_bin(),
                "--direct",
                "iptables-restore",
            ],
        )?;
        let (fa, fd, what) = kernel_floor(&n, "X", 101)?;
        let d = Daemon::start(&n)?;
        let mut c = proto::client::Client::connect(&d.sock).map_err(|e| e.to_string())?;
        let (mut lat, mut add, mut del) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..sz.single_ops / 2 {
            let r = rule(300, i);
            let w: Vec<&str> = r.iter().map(String::as_str).collect();
            for (k, op) in [
                proto::Op::append("filter", "X", &w),
                proto::Op::delete("filter", "X", &w),
            ]
            .into_iter()
            .enumerate()
            {
                let t = Instant::now();
                let res = c.apply(proto::Fam::V4, &[op]).map_err(|e| e.to_string())?;
                let us = t.elapsed().as_secs_f64() * 1e6;
                lat.push(us);
                [&mut add, &mut del][k].push(us);
                if res.iter().any(|r| r.code != 0) {
                    return Err(format!("single op failed: {res:?}"));
                }
            }
        }
        let (pa, pd) = (pct(&mut add, 0.5), pct(&mut del, 0.5));
        let _ = writeln!(
            md,
            "\n### One API operation at a time on a 1 000-rule ruleset ({} operations, append / delete by spec alternating)\n\np50 {:.0} µs, p99 {:.0} µs.\n\n| operation | p50 through the daemon | kernel floor (one commit, in-process) | daemon beyond the floor |\n|---|--:|--:|--:|\n| append | {pa:.0} µs | {fa:.0} µs | {:.0} µs |\n| delete by spec | {pd:.0} µs | {fd:.0} µs | {:.0} µs |\n\nThe floor adds and deletes one {what} (the chain's rules {}).",
            lat.len(),
            pct(&mut lat, 0.5),
            pct(&mut lat, 0.99),
            pa - fa,
            pd - fd,
            if what == "element" {
                "are compiled into a set: one element per rule"
            } else {
                "are plain kernel rules; the rule is deleted by handle"
            }
        );
    }
    Ok(())
}

/// One process per rule: through the daemon, direct, iptables-nft.
fn process(sz: &Sizes, md: &mut String) -> Result<(), String> {
    let nft = have("iptables-nft");
    let bin = super::adapters::nfkeeper_bin();
    let _ = writeln!(
        md,
        "\n### One process per rule onto N rules (median of {} calls each)\n\nThe kernel floor is one commit of the same change from an in-process netlink socket (no process start, no reading): one set element when the chain is compiled into a run (flat in N), one rule when it is not (which grows with the chain because every commit rebuilds it). \"Beyond\" is a call's time minus that floor.\n\n| N | kernel floor | nfkeeper via daemon | beyond floor | nfkeeper direct | beyond floor | iptables-nft | beyond floor | iptables-nft ÷ daemon |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        sz.calls
    );
    for &rules in &sz.process_sizes {
        let n = ns()?;
        preload(&n, &chain_x(rules), &[&bin, "--direct", "iptables-restore"])?;
        let (floor, _, what) = kernel_floor(&n, "X", 21)?;
        let floor = floor / 1e6;
        let d = Daemon::start(&n)?;
        let sock = d.sock.to_string_lossy().into_owned();
        let via = per_call(
            &n,
            &[&bin, "iptables"],
            &[("NFKEEPER_MODE", "daemon"), ("NFKEEPER_SOCKET", &sock)],
            sz.calls,
        )?;
        drop(d);
        let direct = per_call(
            &n,
            &[&bin, "iptables"],
            &[("NFKEEPER_MODE", "direct")],
            sz.calls,
        )?;
        drop(n);
        let base = if nft {
            let n2 = ns()?;
            preload(&n2, &chain_x(rules), &["iptables-nft-restore"])?;
            Some(per_call(&n2, &["iptables-nft"], &[], sz.calls)?)
        } else {
            None
        };
        let ms = |v: f64| format!("{:.2} ms", v * 1e3);
        let _ = writeln!(
            md,
            "| {rules} | {} ({what}) | {} | {} | {} | {} | {} | {} | {} |",
            ms(floor),
            ms(via),
            ms(via - floor),
            ms(direct),
            ms(direct - floor),
            base.map_or("n/a".into(), ms),
            base.map_or("n/a".into(), |b| ms(b - floor)),
            base.map_or("n/a".into(), |b| format!("{:.2}×", b / via))
        );
    }
    Ok(())
}

/// The daemon's resident set with many rules loaded.
fn memory(sz: &Sizes, md: &mut String) -> Result<(), String> {
    // Memory.
    {
        let n = ns()?;
        let chains = 1000;
        let per = sz.memory_rules / chains;
        let mut text = String::from("*filter\n");
        for c in 0..chains {
            let _ = writeln!(text, ":C{c:04} - [0:0]");
        }
        for c in 0..chains {
            for i in 0..per {
                let a = workload::cf_addr(c * per + i);
                let _ = writeln!(
                    text,
                    "-A C{c:04} -s {}.{}.{}.{}/32 -p tcp -m tcp --dport 8080 -j ACCEPT",
                    a[0], a[1], a[2], a[3]
                );
            }
        }
        text.push_str("COMMIT\n");
        preload(
            &n,
            &text,
            &[
                &super::adapters::nfkeeper_bin(),
                "--direct",
                "iptables-restore",
            ],
        )?;
        drop(text);
        let d = Daemon::start(&n)?;
        let _ = writeln!(
            md,
            "\n### Daemon memory\n\n{} rules in {chains} chains: loaded in {:.1} s, resident {:.0} MB ({:.0} bytes per rule).",
            sz.memory_rules,
            d.load.as_secs_f64(),
            d.rss_mb(),
            d.rss_mb() * 1048576.0 / sz.memory_rules as f64
        );
    }
    Ok(())
}

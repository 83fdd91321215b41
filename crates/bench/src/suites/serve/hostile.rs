//! `nfkeeper bench daemon --case hostile`: what peers that misbehave cost
//! `nfkeeper serve` — its resident set (VmRSS of /proc/PID/status) and
//! CPU — in a fresh namespace, measured from this process's own sockets:
//!
//! - **rest**: the daemon's resident set once it answers;
//! - **(a) stall**: 20 connections each send only a frame's first 6 bytes
//!   (a length announcing 64 MiB, the version and the restore type) and
//!   send nothing more: the peak during 2 s, and after they close;
//! - **(b) flood**: 12 connections each send one restore request of
//!   ~57 MiB (comment lines around one rule, `--noflush`) at once, read
//!   the answer and stay connected, idle: the peak, and 1 s after the
//!   last answer with all 12 still connected;
//! - **(c) trickle**: with `--idle-timeout 3`, a client sends one byte of
//!   a frame every 2 s: when the daemon cuts it off (bounded at
//!   [`TRICKLE_CAP`]; a daemon that resets its timeout on every byte holds
//!   it forever);
//! - **(d) descriptors**: the daemon's descriptor limit lowered (prlimit,
//!   soft = hard) to its open descriptors + [`SPARE_FDS`] while
//!   `--max-clients` stays 1024, then [`HOLD`] idle connections: the
//!   daemon's CPU while the accept queue waits (a daemon that retries
//!   accept at once spins), and the time from closing them until a new
//!   client is answered.
//!
//! With $NFKEEPER_OLD_BIN set, the same steps for that build, side by side.

use super::{ns, rss_mb, Daemon};
use crate::netns::cpu_ns;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const STALLERS: usize = 20;
const ANNOUNCED: u32 = 64 << 20;
const FLOODERS: usize = 12;
const FLOOD_BYTES: usize = 57 << 20;
/// How long a trickling client is followed at most.
const TRICKLE_CAP: Duration = Duration::from_secs(20);
const TRICKLE_EVERY: Duration = Duration::from_secs(2);
/// Descriptors the daemon may open beyond those it has at rest, in (d).
const SPARE_FDS: u64 = 16;
/// Idle connections opened in (d): more than the spare descriptors, fewer
/// than the listen backlog.
const HOLD: usize = 64;
/// How long the daemon's CPU is watched in (d).
const WATCH: Duration = Duration::from_secs(3);

/// One build's measurements (MiB, seconds, percent of a CPU); text cells.
struct Column {
    label: String,
    rows: Vec<String>,
}

/// Samples a process's resident set every 10 ms until dropped; `peak`
/// is the largest seen so far.
struct Peak {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<f64>>,
}

impl Peak {
    fn watch(pid: u32) -> Peak {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut max = rss_mb(pid);
            while !s.load(Ordering::Relaxed) {
                max = max.max(rss_mb(pid));
                std::thread::sleep(Duration::from_millis(10));
            }
            max.max(rss_mb(pid))
        });
        Peak {
            stop,
            thread: Some(thread),
        }
    }

    fn peak(mut self) -> f64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or(f64::NAN)
    }
}

impl Drop for Peak {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn mb(v: f64) -> String {
    format!("{v:.0} MB")
}

fn connect(sock: &Path) -> Result<UnixStream, String> {
    UnixStream::connect(sock).map_err(|e| format!("connect {}: {e}", sock.display()))
}

/// (a): peak and after, with the stalled connections open and closed.
fn stall(d: &Daemon) -> Result<(f64, f64), String> {
    let mut head = ANNOUNCED.to_be_bytes().to_vec();
    // The version and request type that follow a length (docs/protocol.md;
    // 2 = restore).
    head.extend_from_slice(&[proto::VERSION, 0x02]);
    let peak = Peak::watch(d.pid());
    let mut conns = Vec::new();
    for _ in 0..STALLERS {
        let mut s = connect(&d.sock)?;
        s.write_all(&head).map_err(|e| e.to_string())?;
        conns.push(s);
    }
    std::thread::sleep(Duration::from_secs(2));
    let during = peak.peak();
    drop(conns);
    std::thread::sleep(Duration::from_millis(500));
    Ok((during, rss_mb(d.pid())))
}

/// (b): peak while the requests arrive and run, RSS with the clients
/// idle afterwards, and the exit codes of the answers.
fn flood(d: &Daemon) -> Result<(f64, f64, String), String> {
    let mut payload = String::from("*filter\n:H - [0:0]\n");
    let pad = format!("# {}\n", "x".repeat(77));
    while payload.len() + pad.len() < FLOOD_BYTES {
        payload.push_str(&pad);
    }
    payload.push_str("-A H -s 10.7.7.7/32 -j ACCEPT\nCOMMIT\n");
    let req = proto::Request::Restore {
        family: proto::Fam::V4,
        prog: "iptables-restore".into(),
        noflush: true,
        counters: false,
        test: false,
        table: None,
        payload: payload.into_bytes(),
    };
    let mut frame = Vec::new();
    proto::encode_request(&req, &mut frame);
    drop(req);
    let frame = &frame;
    let peak = Peak::watch(d.pid());
    let sock = &d.sock;
    let go = std::sync::Barrier::new(FLOODERS);
    let conns: Vec<Result<(UnixStream, i32), String>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..FLOODERS)
            .map(|_| {
                let go = &go;
                s.spawn(move || {
                    let c = connect(sock);
                    go.wait();
                    let mut c = c?;
                    c.write_all(frame).map_err(|e| format!("send: {e}"))?;
                    let code = exit_of(&mut c)?;
                    Ok((c, code))
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("panic".into())))
            .collect()
    });
    let mut codes = std::collections::BTreeMap::new();
    let mut idle = Vec::new();
    for c in conns {
        match c {
            Ok((s, code)) => {
                *codes.entry(format!("exit {code}")).or_insert(0) += 1;
                idle.push(s);
            }
            Err(e) => *codes.entry(e).or_insert(0) += 1,
        }
    }
    std::thread::sleep(Duration::from_secs(1));
    let after = rss_mb(d.pid());
    let during = peak.peak();
    drop(idle);
    let codes: Vec<String> = codes.iter().map(|(k, n)| format!("{n}× {k}")).collect();
    Ok((during, after, codes.join(", ")))
}

/// Reads replies until the exit code (or a protocol error's code).
fn exit_of(c: &mut UnixStream) -> Result<i32, String> {
    loop {
        match proto::read_reply(c, 64 << 20).map_err(|e| format!("reply: {e}"))? {
            proto::Reply::Exit(code) => return Ok(code),
            proto::Reply::Error { code, message } => {
                return Err(format!("error {code}: {message}"))
            }
            _ => {}
        }
    }
}

/// (c): seconds from the first byte until the daemon answers or closes,
/// bytes sent, and what it said (`None` when it still held the connection
/// at [`TRICKLE_CAP`]).
fn trickle(sock: &Path) -> Result<(Option<f64>, usize, String), String> {
    let mut c = connect(sock)?;
    let mut head = (1u32 << 10).to_be_bytes().to_vec();
    head.extend_from_slice(&[proto::VERSION, 0x04]);
    let bytes = head.into_iter().chain(std::iter::repeat(0u8));
    let t0 = Instant::now();
    let mut sent = 0;
    let mut buf = [0u8; 4096];
    for b in bytes {
        if c.write_all(&[b]).is_err() {
            return Ok((Some(t0.elapsed().as_secs_f64()), sent, "closed".into()));
        }
        sent += 1;
        // The wait between bytes is a read: an answer or a close ends it.
        let _ = c.set_read_timeout(Some(TRICKLE_EVERY));
        match c.read(&mut buf) {
            Ok(0) => return Ok((Some(t0.elapsed().as_secs_f64()), sent, "closed".into())),
            Ok(k) => {
                let at = t0.elapsed().as_secs_f64();
                let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
                let said = match proto::read_reply(&mut (&buf[..k]).chain(&mut c), 1 << 20) {
                    Ok(proto::Reply::Error { code, message }) => format!("error {code}: {message}"),
                    Ok(other) => format!("{other:?}"),
                    Err(e) => format!("unreadable answer: {e}"),
                };
                return Ok((Some(at), sent, said));
            }
            Err(_) => {}
        }
        if t0.elapsed() >= TRICKLE_CAP {
            return Ok((None, sent, String::new()));
        }
    }
    Ok((None, sent, String::new()))
}

/// Descriptors open in process `pid`.
fn fds(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count() as u64)
}

/// (d): the daemon's CPU (percent of one CPU over [`WATCH`]) while
/// [`HOLD`] connections wait on a daemon out of descriptors, the
/// descriptors it held then, and seconds from their close until a new
/// client is answered.
fn exhaust(d: &Daemon) -> Result<(f64, u64, u64, f64), String> {
    use rustix::process::{prlimit, Pid, Resource, Rlimit};
    let pid = d.pid();
    let limit = fds(pid) + SPARE_FDS;
    let p = Pid::from_raw(pid as i32).ok_or("no pid")?;
    let lim = Rlimit {
        current: Some(limit),
        maximum: Some(limit),
    };
    prlimit(Some(p), Resource::Nofile, lim).map_err(|e| format!("prlimit: {e}"))?;
    let mut conns = Vec::new();
    for _ in 0..HOLD {
        conns.push(connect(&d.sock)?);
    }
    // Let the accepts happen and fail, then watch.
    std::thread::sleep(Duration::from_millis(500));
    let held = fds(pid);
    let c0 = cpu_ns(pid).unwrap_or(0);
    std::thread::sleep(WATCH);
    let cpu = cpu_ns(pid).unwrap_or(0).saturating_sub(c0) as f64 / WATCH.as_nanos() as f64;
    let t0 = Instant::now();
    drop(conns);
    let mut c = proto::client::Client::connect(&d.sock).map_err(|e| e.to_string())?;
    c.set_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    c.status()
        .map_err(|e| format!("status after recovery: {e}"))?;
    Ok((cpu * 100.0, held, limit, t0.elapsed().as_secs_f64()))
}

/// Every step for the nfkeeper at `bin`.
fn column(label: &str, bin: &str) -> Result<Column, String> {
    let n = ns()?;
    let mut rows = Vec::new();
    let mut d = Daemon::start_with(&n, bin, &[])?;
    std::thread::sleep(Duration::from_millis(500));
    rows.push(mb(d.rss_mb()));
    let (during, after) = stall(&d)?;
    rows.push(mb(during));
    rows.push(mb(after));
    let (during, after, codes) = flood(&d)?;
    rows.push(mb(during));
    rows.push(mb(after));
    rows.push(codes);
    let alive = d.alive();
    drop(d);
    if !alive {
        return Err(format!("{label}: the daemon died during (a) or (b)"));
    }
    let d = Daemon::start_with(&n, bin, &["--idle-timeout", "3"])?;
    let (cut, sent, said) = trickle(&d.sock)?;
    rows.push(match cut {
        Some(t) => format!("cut off after {t:.1} s ({sent} bytes sent)"),
        None => format!(
            "still held after {:.0} s ({sent} bytes sent)",
            TRICKLE_CAP.as_secs_f64()
        ),
    });
    rows.push(if said.is_empty() {
        "—".into()
    } else {
        format!("`{}`", said.chars().take(80).collect::<String>())
    });
    drop(d);
    let d = Daemon::start_with(&n, bin, &[])?;
    let (cpu, held, limit, back) = exhaust(&d)?;
    rows.push(format!("{cpu:.1}%"));
    rows.push(format!("{held} (limit {limit})"));
    rows.push(format!("{:.0} ms", back * 1e3));
    rows.push(mb(d.rss_mb()));
    Ok(Column {
        label: label.into(),
        rows,
    })
}

/// The row names, in [`column`]'s order.
const ROWS: [&str; 12] = [
    "at rest, RSS",
    "(a) 20 connections stalled after a 6-byte header announcing 64 MiB: peak RSS over 2 s",
    "(a) … after they closed",
    "(b) 12 restore requests of 57 MiB each at once: peak RSS",
    "(b) … 1 s after the last answer, all 12 still connected (idle)",
    "(b) answers",
    "(c) one byte every 2 s, `--idle-timeout 3`",
    "(c) what the daemon said",
    "(d) descriptors exhausted, 64 idle connections waiting: daemon CPU over 3 s",
    "(d) descriptors open then (limit set by prlimit)",
    "(d) from closing them to a new client answered",
    "(d) RSS at the end",
];

/// The case: a table with one column per nfkeeper build.
pub(super) fn run(md: &mut String) -> Result<(), String> {
    let mut cols = vec![column("nfkeeper", &super::super::adapters::nfkeeper_bin())?];
    if let Some(old) = super::super::adapters::nfkeeper_old_bin() {
        cols.push(column("nfkeeper-old ($NFKEEPER_OLD_BIN)", &old)?);
    }
    let _ = writeln!(
        md,
        "\n### Hostile peers: the daemon's resident set and CPU\n\nOne namespace per build; (a) and (b) with the default options (`--idle-timeout 60`, 64 MiB `--max-request`), (c) with `--idle-timeout 3`, (d) with the descriptor limit lowered to what the daemon has open + {SPARE_FDS} and `--max-clients` 1024.\n\n| step | {} |\n|---|{}",
        cols.iter()
            .map(|c| c.label.as_str())
            .collect::<Vec<_>>()
            .join(" | "),
        "--:|".repeat(cols.len())
    );
    for (i, name) in ROWS.iter().enumerate() {
        let cells: Vec<&str> = cols
            .iter()
            .map(|c| c.rows.get(i).map_or("", String::as_str))
            .collect();
        let _ = writeln!(md, "| {name} | {} |", cells.join(" | "));
    }
    Ok(())
}

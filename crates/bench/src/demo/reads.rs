//! The demo's reads as a user runs them: `iptables-save` and a listing as
//! separate `nfkeeper` processes, in direct mode and through a daemon
//! (`nfkeeper serve`) started for the purpose, side by side.
//!
//! Runs on the demo's kernel-round thread, which is in a private network
//! namespace: processes it starts inherit that namespace (fork copies the
//! calling thread's namespaces), so the daemon manages the demo's tables
//! and nothing on the host. The daemon is stopped on every path.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Timed repetitions of each read; the fastest is printed (noise only adds
/// time).
const REPS: usize = 3;

/// The reads: what is printed, and the arguments after `nfkeeper --MODE`.
const READS: &[(&str, &[&str])] = &[
    ("iptables-save", &["iptables-save"]),
    (
        "iptables -L FORWARD -n",
        &["iptables", "-L", "FORWARD", "-n"],
    ),
    ("iptables -S FORWARD 1", &["iptables", "-S", "FORWARD", "1"]),
];

/// A daemon child, killed and reaped when dropped.
struct Daemon {
    child: Child,
    socket: PathBuf,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.socket);
    }
}

fn start_daemon(bin: &str, socket: &Path) -> Result<Daemon, String> {
    let _ = std::fs::remove_file(socket);
    let child = Command::new(bin)
        .args(["serve", "--quiet", "--socket"])
        .arg(socket)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // Its log (a start line even with --quiet) is not the demo's.
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{bin} serve: {e}"))?;
    let mut d = Daemon {
        child,
        socket: socket.to_path_buf(),
    };
    let t0 = Instant::now();
    // Its socket answers once its model of the tables is loaded.
    while std::os::unix::net::UnixStream::connect(socket).is_err() {
        if let Ok(Some(st)) = d.child.try_wait() {
            return Err(format!("nfkeeper serve exited: {st}"));
        }
        if t0.elapsed() > Duration::from_secs(60) {
            return Err("nfkeeper serve did not answer within 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(d)
}

/// Fastest of [`REPS`] runs of `nfkeeper --MODE ARGS`, in ms; fails on a
/// non-zero exit.
fn time(bin: &str, mode: &str, args: &[&str], socket: &Path) -> Result<f64, String> {
    let mut best = f64::INFINITY;
    for _ in 0..REPS {
        let t = Instant::now();
        let out = Command::new(bin)
            .arg(mode)
            .args(args)
            .env("NFKEEPER_SOCKET", socket)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("{bin}: {e}"))?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if !out.status.success() {
            return Err(format!(
                "nfkeeper {mode} {}: {}: {}",
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        best = best.min(ms);
    }
    Ok(best)
}

/// Prints each read's time in direct mode and through a daemon.
pub fn direct_and_daemon(bin: &str) -> Result<(), String> {
    let socket = std::env::temp_dir().join(format!("nfkeeper-demo-{}.sock", std::process::id()));
    let head = format!("as separate processes, fastest of {REPS} (ms):");
    eprintln!("  {head:<48}{:>9}  {:>9}", "direct", "daemon");
    let direct: Vec<f64> = READS
        .iter()
        .map(|(_, a)| time(bin, "--direct", a, &socket))
        .collect::<Result<_, _>>()?;
    let daemon = start_daemon(bin, &socket)?;
    let via: Vec<f64> = READS
        .iter()
        .map(|(_, a)| time(bin, "--daemon", a, &socket))
        .collect::<Result<_, _>>()?;
    drop(daemon);
    for ((name, _), (d, v)) in READS.iter().zip(direct.iter().zip(&via)) {
        eprintln!("  {name:<48}{d:>9.1}  {v:>9.1}");
    }
    Ok(())
}

//! The daemon path of the iptables personalities: when `nfkeeper serve`
//! answers on the socket of this network namespace, requests go there
//! (warm model, group commit) and its output is printed exactly as direct
//! mode prints it; otherwise direct mode runs.
//!
//! Cost when no daemon runs: two stat calls (the namespace inode and the
//! socket path). Selection: `nfkeeper --direct ...` / `--daemon ...`, else
//! $NFKEEPER_MODE (direct, daemon, auto), else auto.

use proto::client::{Client, ClientError};
use proto::{Reply, Request};
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

/// How long the CLI polls for the daemon's reply before it blocks: about
/// what one small command takes through the daemon (p50 ~75 µs, BENCHMARKS
/// §4), so most replies arrive while polling.
const SPIN: std::time::Duration = std::time::Duration::from_micros(300);

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Auto = 0,
    Direct = 1,
    Daemon = 2,
}

static FORCED: AtomicU8 = AtomicU8::new(u8::MAX);

/// Force a mode for this process (the `--direct` / `--daemon` flags).
pub fn force(m: Mode) {
    FORCED.store(m as u8, Ordering::Relaxed);
}

fn mode() -> Mode {
    match FORCED.load(Ordering::Relaxed) {
        1 => return Mode::Direct,
        2 => return Mode::Daemon,
        0 => return Mode::Auto,
        _ => {}
    }
    match std::env::var("NFKEEPER_MODE").as_deref() {
        Ok("direct") => Mode::Direct,
        Ok("daemon") => Mode::Daemon,
        _ => Mode::Auto,
    }
}

/// Run `req` through the daemon. `Some(exit code)` when the daemon (or the
/// attempt to reach it in forced daemon mode) decided; `None`: use direct
/// mode.
pub fn run(req: &Request, prog: &str) -> Option<i32> {
    let m = mode();
    if m == Mode::Direct || std::env::var_os("NFKEEPER_OFFLINE_STATE").is_some() {
        return None;
    }
    let path = proto::client::default_path();
    if m == Mode::Auto && !path.exists() {
        return None;
    }
    let mut c = match Client::connect(&path) {
        Ok(c) => c,
        Err(_) if m == Mode::Auto => return None,
        Err(e) => {
            eprintln!(
                "{prog}: no nfkeeper daemon answers at {}: {e}",
                path.display()
            );
            return Some(1);
        }
    };
    // A single command's reply comes within a commit or two: poll for it
    // rather than sleep (see Client::spin_for_reply).
    c.spin_for_reply(SPIN);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let r = c.call(req, &mut |rep| match rep {
        Reply::Stdout(b) => {
            let _ = out.write_all(b);
        }
        Reply::Stderr(b) => {
            let _ = out.flush();
            let _ = std::io::stderr().write_all(b);
        }
        _ => {}
    });
    let _ = out.flush();
    Some(match r {
        Ok((code, _)) => code,
        Err(ClientError::Refused { code, message }) => {
            eprintln!("{prog}: {message}");
            code
        }
        // Nothing was sent: the daemon went away between stat and connect.
        Err(ClientError::Connect(_)) if m == Mode::Auto => return None,
        Err(e) => {
            eprintln!("{prog}: {e}");
            1
        }
    })
}

/// What the daemon serving this namespace prints for `req` (its stdout),
/// for a caller that compares it: `None` when no daemon answers, `Err`
/// when the daemon refused or failed (its message).
pub fn capture(req: &Request) -> Option<Result<String, String>> {
    let path = proto::client::default_path();
    if !path.exists() {
        return None;
    }
    let mut c = Client::connect(&path).ok()?;
    let mut out = Vec::new();
    let r = c.call(req, &mut |rep| {
        if let Reply::Stdout(b) = rep {
            out.extend_from_slice(b);
        }
    });
    Some(match r {
        Ok((0, _)) => Ok(String::from_utf8_lossy(&out).into_owned()),
        Ok((code, _)) => Err(format!("exit status {code}")),
        Err(ClientError::Refused { message, .. }) => Err(message),
        Err(e) => Err(e.to_string()),
    })
}

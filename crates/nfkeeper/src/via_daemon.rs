//! The daemon path of the iptables and ipset personalities: when `nfkeeper serve`
//! answers on the socket of this network namespace, requests go there
//! (warm model, group commit) and its output is printed exactly as direct
//! mode prints it; otherwise direct mode runs.
//!
//! Cost when no daemon runs: two stat calls (the namespace inode and the
//! socket path). Selection: `nfkeeper --direct ...` / `--daemon ...`, else
//! $NFKEEPER_MODE (direct, daemon, auto), else auto.

use crate::settings::Settings;
use proto::client::{Client, ClientError};
use proto::{Reply, Request};
use std::io::Write;

/// How long the CLI polls for the daemon's reply before it blocks: about
/// what one small command takes through the daemon (p50 ~75 µs, BENCHMARKS
/// §4), so most replies arrive while polling.
const SPIN: std::time::Duration = std::time::Duration::from_micros(300);

/// How the iptables personalities reach the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Through the daemon when one answers, else directly.
    Auto,
    Direct,
    Daemon,
}

impl Mode {
    /// `NFKEEPER_MODE`'s values.
    pub fn from_name(s: &str) -> Option<Mode> {
        match s {
            "auto" => Some(Mode::Auto),
            "direct" => Some(Mode::Direct),
            "daemon" => Some(Mode::Daemon),
            _ => None,
        }
    }
}

/// A connection to the daemon as the mode asks: `None` to use direct
/// mode, `Some(Err(code))` when forced daemon mode found none (after the
/// message), else the connection.
fn connect(prog: &str, s: &Settings) -> Option<Result<Client, i32>> {
    let m = s.mode;
    if m == Mode::Direct || s.offline.is_some() {
        return None;
    }
    let path = &s.socket;
    if m == Mode::Auto && !path.exists() {
        return None;
    }
    match Client::connect(path) {
        Ok(mut c) => {
            // A single command's reply comes within a commit or two: poll
            // for it rather than sleep (see Client::spin_for_reply).
            c.spin_for_reply(SPIN);
            Some(Ok(c))
        }
        Err(_) if m == Mode::Auto => None,
        Err(e) => {
            eprintln!(
                "{prog}: no nfkeeper daemon answers at {}: {e}",
                path.display()
            );
            Some(Err(1))
        }
    }
}

/// Run `req` through the daemon. `Some(exit code)` when the daemon (or the
/// attempt to reach it in forced daemon mode) decided; `None`: use direct
/// mode.
pub fn run(req: &Request, prog: &str, s: &Settings, out: &mut dyn Write) -> Option<i32> {
    let mut c = match connect(prog, s)? {
        Ok(c) => c,
        Err(code) => return Some(code),
    };
    let r = c.call(req, &mut |rep| match rep {
        Reply::Stdout(b) => {
            let _ = out.write_all(b);
        }
        Reply::Stderr(b) => {
            let _ = out.flush();
            let _ = iptables::bytes::Unmap::new(std::io::stderr()).write_all(b);
        }
        _ => {}
    });
    let _ = out.flush();
    finish(r, prog, s.mode)
}

/// The exit code of a call's result (a failure worded on stderr); `None`
/// in auto mode when nothing was sent or the daemon, stopping, did
/// nothing for it (use direct mode).
fn finish(r: Result<(i32, Vec<proto::OpResult>), ClientError>, prog: &str, m: Mode) -> Option<i32> {
    Some(match r {
        Ok((code, _)) => code,
        // The daemon is going away and did nothing: as if it were gone.
        Err(ClientError::Refused { code, .. }) if code == proto::STOPPING && m == Mode::Auto => {
            return None
        }
        // Forced daemon mode: iptables' exit code for a resource problem.
        Err(ClientError::Refused { code, message }) if code == proto::STOPPING => {
            eprintln!("{prog}: {message}");
            4
        }
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

/// Run `req` through the daemon and collect what it printed: `None`: use
/// direct mode; `Err(code)`: the exchange failed (worded on stderr).
pub fn collect(
    req: &Request,
    prog: &str,
    s: &Settings,
) -> Option<Result<(String, String, i32), i32>> {
    let mut c = match connect(prog, s)? {
        Ok(c) => c,
        Err(code) => return Some(Err(code)),
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let r = c.call(req, &mut |rep| match rep {
        Reply::Stdout(b) => out.extend_from_slice(b),
        Reply::Stderr(b) => err.extend_from_slice(b),
        _ => {}
    });
    // A daemon older than this client refuses the request type before
    // doing anything: in auto mode, run directly instead.
    if let Err(ClientError::Refused { message, .. }) = &r {
        if s.mode == Mode::Auto && message.contains("unknown request type") {
            return None;
        }
    }
    let failed = r.is_err();
    let code = finish(r, prog, s.mode)?;
    Some(if failed {
        Err(code)
    } else {
        Ok((
            String::from_utf8_lossy(&out).into_owned(),
            String::from_utf8_lossy(&err).into_owned(),
            code,
        ))
    })
}

/// What the daemon serving this namespace prints for `req` (its stdout),
/// for a caller that compares it: `None` when no daemon answers, `Err`
/// when the daemon refused or failed (its message).
pub fn capture(req: &Request, s: &Settings) -> Option<Result<String, String>> {
    if !s.socket.exists() {
        return None;
    }
    let mut c = Client::connect(&s.socket).ok()?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(code: i32) -> Result<(i32, Vec<proto::OpResult>), ClientError> {
        Err(ClientError::Refused {
            code,
            message: "m".into(),
        })
    }

    /// Only a stopping daemon's refusal sends an auto-mode command to
    /// direct mode; other refusals and answers are final.
    #[test]
    fn which_answers_fall_back_to_direct_mode() {
        let eof = || Err(ClientError::Proto(proto::ProtoError::Eof));
        let cases: Vec<(&str, Result<_, _>, Mode, Option<i32>)> = vec![
            ("stopping, auto", refused(proto::STOPPING), Mode::Auto, None),
            (
                "stopping, daemon",
                refused(proto::STOPPING),
                Mode::Daemon,
                Some(4),
            ),
            ("busy, auto", refused(4), Mode::Auto, Some(4)),
            ("permission, auto", refused(1), Mode::Auto, Some(1)),
            ("answered", Ok((2, Vec::new())), Mode::Auto, Some(2)),
            ("cut off, auto", eof(), Mode::Auto, Some(1)),
        ];
        for (what, r, m, want) in cases {
            assert_eq!(finish(r, "iptables", m), want, "{what}");
        }
    }
}

//! How the agent reads and replaces the host's tables: through the local
//! daemon's protocol (crates/proto: a plain restore is one kernel
//! transaction in the daemon's writer; save reads its warm model), or,
//! when no daemon answers, through the `nfkeeper` binary in direct mode
//! (`nfkeeper --direct iptables-restore`, also one transaction). Blocking
//! calls: the agent runs them off its async thread.
//!
//! Contract: [`Kernel::restore`] returns [`ApplyError::Refused`] only when
//! the restore changed nothing (iptables-restore's all-or-nothing);
//! [`ApplyError::Unknown`] when it may or may not have been applied (the
//! exchange broke): the caller reads the kernel back to know.

use proto::client::{Client, ClientError};
use proto::{Fam, Request};
use ruleset::Family;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApplyError {
    /// Refused as a whole (iptables-restore's message); nothing changed.
    Refused(String),
    /// The outcome is not known.
    Unknown(String),
}

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApplyError::Refused(m) | ApplyError::Unknown(m) => f.write_str(m),
        }
    }
}

/// The host's tables, as the agent sees them.
pub trait Kernel: Send {
    /// iptables-save text of family `f`, without counters.
    fn save(&mut self, f: Family) -> Result<String, String>;
    /// A plain iptables-restore of `text` for family `f`: one transaction.
    fn restore(&mut self, f: Family, text: &str) -> Result<(), ApplyError>;
    /// "daemon" or "direct": how the last call went.
    fn mode(&self) -> &'static str;
}

fn fam(f: Family) -> Fam {
    match f {
        Family::Ipv4 => Fam::V4,
        Family::Ipv6 => Fam::V6,
    }
}

fn progs(f: Family) -> (&'static str, &'static str) {
    match f {
        Family::Ipv4 => ("iptables-save", "iptables-restore"),
        Family::Ipv6 => ("ip6tables-save", "ip6tables-restore"),
    }
}

/// The daemon when it answers at `socket`, else `nfkeeper` in direct mode.
pub struct Local {
    pub socket: PathBuf,
    /// The `nfkeeper` binary for direct mode.
    pub nfkeeper: PathBuf,
    /// Bound on one exchange with the daemon.
    pub timeout: Duration,
    /// Never use the daemon (`--direct`).
    pub direct_only: bool,
    last: &'static str,
}

impl Local {
    pub fn new(socket: PathBuf, nfkeeper: PathBuf, direct_only: bool) -> Local {
        Local {
            socket,
            nfkeeper,
            timeout: Duration::from_secs(120),
            direct_only,
            last: "daemon",
        }
    }

    /// A connected client, or `None` when no daemon answers (then direct).
    fn client(&mut self) -> Option<Client> {
        if self.direct_only {
            self.last = "direct";
            return None;
        }
        match Client::connect(&self.socket) {
            Ok(mut c) => {
                let _ = c.set_timeout(Some(self.timeout));
                self.last = "daemon";
                Some(c)
            }
            Err(_) => {
                self.last = "direct";
                None
            }
        }
    }

    fn direct(&self, prog: &str, input: Option<&str>) -> Result<(i32, String, String), String> {
        let mut cmd = Command::new(&self.nfkeeper);
        cmd.arg("--direct").arg(prog);
        cmd.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("{}: {e}", self.nfkeeper.display()))?;
        if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
            // The child reads all its input before it commits; a failed
            // write shows in its exit code.
            let _ = stdin.write_all(text.as_bytes());
        }
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        Ok((
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }
}

impl Kernel for Local {
    fn save(&mut self, f: Family) -> Result<String, String> {
        let (save, _) = progs(f);
        if let Some(mut c) = self.client() {
            let req = Request::Save {
                family: fam(f),
                prog: save.into(),
                counters: false,
                table: None,
            };
            return match c.run(&req) {
                Ok(o) if o.code == 0 => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
                Ok(o) => Err(String::from_utf8_lossy(&o.stderr).trim_end().to_string()),
                Err(e) => Err(e.to_string()),
            };
        }
        match self.direct(save, None)? {
            (0, out, _) => Ok(out),
            (_, _, err) => Err(err.trim_end().to_string()),
        }
    }

    fn restore(&mut self, f: Family, text: &str) -> Result<(), ApplyError> {
        let (_, restore) = progs(f);
        if let Some(mut c) = self.client() {
            let req = Request::Restore {
                family: fam(f),
                prog: restore.into(),
                noflush: false,
                counters: false,
                test: false,
                table: None,
                payload: text.as_bytes().to_vec(),
            };
            return match c.run(&req) {
                Ok(o) if o.code == 0 => Ok(()),
                Ok(o) => Err(ApplyError::Refused(
                    String::from_utf8_lossy(&o.stderr).trim_end().to_string(),
                )),
                Err(ClientError::Refused { message, .. }) => Err(ApplyError::Refused(message)),
                Err(e) => Err(ApplyError::Unknown(e.to_string())),
            };
        }
        match self.direct(restore, Some(text)) {
            Ok((0, _, _)) => Ok(()),
            // Killed by a signal: it may have committed.
            Ok((-1, _, err)) => Err(ApplyError::Unknown(err.trim_end().to_string())),
            Ok((_, _, err)) => Err(ApplyError::Refused(err.trim_end().to_string())),
            Err(e) => Err(ApplyError::Refused(e)),
        }
    }

    fn mode(&self) -> &'static str {
        self.last
    }
}

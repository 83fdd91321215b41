//! The engine's errors. What the command itself got wrong (the model's
//! answer, already in iptables' words) is kept apart from what the kernel
//! refused (an errno and the message it refused) and from failures to talk
//! to the kernel at all; each is worded as iptables words it only at the
//! edge ([`Error::to_iptables`], [`Failure::render`]).

use iptables::ExitKind;
use std::fmt;

/// One failed kernel message, described as iptables-nft names its
/// operations (`RULE_APPEND`, `CHAIN_DEL` …) with the object it concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The errno the kernel answered (positive, a `libc::E*`).
    pub errno: i32,
    /// iptables-nft's name of the operation, when known.
    pub op: Option<&'static str>,
    /// The object: `rule in chain X`, `chain X`, `table nfkeeper_filter`,
    /// `set S` (empty when unknown).
    pub object: String,
}

/// Why a write or read failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The command failed in the model, with iptables' message.
    Command(iptables::Error),
    /// Command `index` (0-based) of a write of several commands (typed
    /// operations) failed in the model, with iptables' message; the write
    /// applied none of them.
    CommandAt { index: usize, err: iptables::Error },
    /// The kernel refused the transaction (nothing of it was applied).
    Refused(Refusal),
    /// The ruleset kept changing under the command until its retries ran
    /// out (nothing was applied).
    Busy,
    /// Talking to the kernel failed before anything could be applied.
    Netlink(String),
    /// The batch was sent but its fate is unknown (the connection failed
    /// while waiting for the verdict): the change may or may not be in.
    Unconfirmed(String),
    /// Not permitted (no CAP_NET_ADMIN).
    Permission,
}

impl From<iptables::Error> for Error {
    fn from(e: iptables::Error) -> Self {
        Error::Command(e)
    }
}

impl Error {
    /// A kernel error answer to a read (a dump or a get).
    pub fn from_nft(e: nft::Error) -> Error {
        match e {
            nft::Error::Io(io) if is_permission(io.raw_os_error()) => Error::Permission,
            nft::Error::Kernel { code, .. } if is_permission(Some(-code)) => Error::Permission,
            nft::Error::DumpInterrupted => Error::Busy,
            other => Error::Netlink(other.to_string()),
        }
    }

    /// A refusal without details (the errno alone).
    pub fn refused(errno: i32) -> Error {
        Error::Refused(Refusal {
            errno,
            op: None,
            object: String::new(),
        })
    }

    /// The errno of a kernel refusal.
    pub fn errno(&self) -> Option<i32> {
        match self {
            Error::Refused(r) => Some(r.errno),
            _ => None,
        }
    }

    /// iptables' wording and exit class for a single command.
    ///
    /// The refusals a model that saw everything would have caught (a chain
    /// still in use, a loop, an existing chain) are worded as iptables
    /// words the model's own error; anything else as iptables-nft reports
    /// a failed kernel operation (`OP failed (strerror): object`, exit 4).
    pub fn to_iptables(&self) -> iptables::Error {
        match self {
            Error::Command(e) | Error::CommandAt { err: e, .. } => e.clone(),
            Error::Permission => iptables::Error::op("Permission denied (you must be root)."),
            Error::Busy => resource(
                "Resource temporarily unavailable: the ruleset changed concurrently; try again.",
            ),
            Error::Netlink(m) => iptables::Error::other(format!("netlink: {m}")),
            Error::Unconfirmed(m) => iptables::Error::other(format!(
                "netlink: {m}; the change may or may not be in the kernel"
            )),
            Error::Refused(r) => match (r.errno, r.op) {
                (libc::EPERM | libc::EACCES, _) => {
                    iptables::Error::op("Permission denied (you must be root).")
                }
                (libc::ENOENT, None) => iptables::Error::op("No chain/target/match by that name."),
                (libc::EBUSY, None) => iptables::Error::op("Directory not empty."),
                (libc::EEXIST, None) => iptables::Error::op("Chain already exists."),
                (libc::ELOOP, None) => iptables::Error::op("Loop found in table."),
                (libc::EMLINK, None) => iptables::Error::op("Too many links."),
                (libc::EAGAIN | libc::ERESTART, _) => resource(
                    "Resource temporarily unavailable: the ruleset changed concurrently; try again.",
                ),
                (e, Some(op)) => {
                    let mut m = format!(" {op} failed ({})", strerror(e));
                    if !r.object.is_empty() {
                        m.push_str(": ");
                        m.push_str(&r.object);
                    }
                    iptables::Error {
                        kind: ExitKind::Resource,
                        style: iptables::error::Style::Versioned,
                        msg: m,
                    }
                }
                (e, None) => iptables::Error::op(format!("{}.", strerror(e))),
            },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_iptables().msg)
    }
}

impl std::error::Error for Error {}

fn resource(msg: &str) -> iptables::Error {
    iptables::Error {
        kind: ExitKind::Resource,
        ..iptables::Error::op(msg)
    }
}

fn is_permission(errno: Option<i32>) -> bool {
    matches!(errno, Some(libc::EPERM | libc::EACCES))
}

/// strerror's text, as iptables prints it (std adds "(os error N)").
pub fn strerror(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    text.split(" (os error")
        .next()
        .unwrap_or_default()
        .to_string()
}

/// A restore that failed, at its input line (0: not tied to a line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub line: usize,
    pub err: Error,
}

impl Failure {
    /// The failure as iptables-restore reports it: the model's errors as
    /// they are; a kernel refusal of one line as iptables-nft reports it
    /// (`PROG v…:` then `line N: OP failed (strerror): object`, exit 4).
    pub fn to_restore_error(&self) -> iptables::exec::RestoreError {
        let err = match &self.err {
            Error::Refused(r) if r.op.is_some() && self.line > 0 => {
                let mut msg = format!(
                    "\nline {}: {} failed ({})",
                    self.line,
                    r.op.unwrap_or_default(),
                    strerror(r.errno)
                );
                if !r.object.is_empty() {
                    msg.push_str(": ");
                    msg.push_str(&r.object);
                }
                iptables::Error {
                    kind: ExitKind::Resource,
                    style: iptables::error::Style::Versioned,
                    msg,
                }
            }
            e => e.to_iptables(),
        };
        iptables::exec::RestoreError {
            line: self.line,
            err,
        }
    }
}

impl From<iptables::exec::RestoreError> for Failure {
    fn from(e: iptables::exec::RestoreError) -> Self {
        Failure {
            line: e.line,
            err: Error::Command(e.err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_worded_as_iptables() {
        let r = |errno, op: Option<&'static str>, object: &str| {
            Error::Refused(Refusal {
                errno,
                op,
                object: object.into(),
            })
        };
        let cases: &[(Error, &str, i32)] = &[
            (r(libc::EBUSY, None, ""), "iptables: Directory not empty.\n", 1),
            (r(libc::EMLINK, None, ""), "iptables: Too many links.\n", 1),
            (
                r(libc::EMLINK, Some("RULE_APPEND"), "rule in chain B"),
                "iptables v1.8.11 (nfkeeper):  RULE_APPEND failed (Too many links): rule in chain B\n",
                4,
            ),
            (
                r(libc::ERESTART, None, ""),
                "iptables: Resource temporarily unavailable: the ruleset changed concurrently; try again.\n",
                4,
            ),
            (
                Error::Busy,
                "iptables: Resource temporarily unavailable: the ruleset changed concurrently; try again.\n",
                4,
            ),
            (
                Error::Permission,
                "iptables: Permission denied (you must be root).\n",
                1,
            ),
            (
                Error::Command(iptables::Error::op("Chain already exists.")),
                "iptables: Chain already exists.\n",
                1,
            ),
        ];
        for (e, text, code) in cases {
            let i = e.to_iptables();
            assert_eq!(i.render("iptables", None), *text, "{e:?}");
            assert_eq!(i.exit_code(), *code, "{e:?}");
        }
    }

    #[test]
    fn restore_failures_name_their_line() {
        let f = Failure {
            line: 6,
            err: Error::Refused(Refusal {
                errno: libc::EMLINK,
                op: Some("RULE_APPEND"),
                object: "rule in chain B".into(),
            }),
        };
        let e = f.to_restore_error();
        assert_eq!(
            e.render("iptables-restore"),
            "iptables-restore v1.8.11 (nfkeeper): \nline 6: RULE_APPEND failed (Too many links): rule in chain B\n"
        );
        assert_eq!(e.exit_code(), 4);
        let m = Failure {
            line: 3,
            err: Error::Command(iptables::Error::op("Chain already exists.")),
        };
        let e = m.to_restore_error();
        assert_eq!(
            e.render("iptables-restore"),
            "iptables-restore: line 3 failed: Chain already exists.\n"
        );
        assert_eq!(e.exit_code(), 1);
    }
}

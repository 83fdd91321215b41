//! Errors with iptables' wording and exit codes.
//!
//! iptables distinguishes parameter problems (exit 2, printed as
//! `PROG v1.8.11 (nfkeeper): MSG` plus a "Try `PROG -h'" line) from other
//! problems (exit 1) and resource problems (exit 4). We keep the message text
//! and the class; the caller adds the program name and, in restore, the line.

use std::fmt;

/// iptables' exit status classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitKind {
    /// exit 1: OTHER_PROBLEM (also what a failed kernel/model operation gives)
    Other = 1,
    /// exit 2: PARAMETER_PROBLEM
    Parameter = 2,
    /// exit 3: VERSION_PROBLEM (e.g. an unknown table)
    Version = 3,
    /// exit 4: RESOURCE_PROBLEM
    Resource = 4,
}

/// How the message is laid out by the printer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `PROG v1.8.11 (nfkeeper): MSG` (+ try-help for parameter problems).
    Versioned,
    /// `PROG: MSG` — what iptables prints for a failed ruleset operation,
    /// e.g. `iptables: Chain already exists.`
    Plain,
    /// The message is printed as is, then the try-help line
    /// (iptables' "Bad argument `x'").
    Bare,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ExitKind,
    pub style: Style,
    pub msg: String,
}

impl Error {
    /// A parameter problem (exit 2) with iptables' message text.
    pub fn param(msg: impl Into<String>) -> Self {
        Error {
            kind: ExitKind::Parameter,
            style: Style::Versioned,
            msg: msg.into(),
        }
    }
    /// A version problem (exit 3): printed with "Perhaps ... upgraded".
    pub fn version(msg: impl Into<String>) -> Self {
        Error {
            kind: ExitKind::Version,
            style: Style::Versioned,
            msg: msg.into(),
        }
    }
    /// An "other" problem (exit 1) printed with the version banner.
    pub fn other(msg: impl Into<String>) -> Self {
        Error {
            kind: ExitKind::Other,
            style: Style::Versioned,
            msg: msg.into(),
        }
    }
    /// A failed operation on the ruleset (exit 1), printed as `PROG: MSG`.
    pub fn op(msg: impl Into<String>) -> Self {
        Error {
            kind: ExitKind::Other,
            style: Style::Plain,
            msg: msg.into(),
        }
    }
    pub fn bare(msg: impl Into<String>) -> Self {
        Error {
            kind: ExitKind::Parameter,
            style: Style::Bare,
            msg: msg.into(),
        }
    }
    /// Only the "Try `PROG -h'" line (iptables' exit_tryhelp).
    pub fn tryhelp() -> Self {
        Error {
            kind: ExitKind::Parameter,
            style: Style::Bare,
            msg: String::new(),
        }
    }
    pub fn exit_code(&self) -> i32 {
        self.kind as i32
    }

    /// Render as iptables would on stderr for program `prog` (e.g. "iptables").
    /// `line` is the restore line for parameter problems inside restore input.
    pub fn render(&self, prog: &str, line: Option<usize>) -> String {
        let mut s = String::new();
        match self.style {
            Style::Versioned => {
                s.push_str(prog);
                s.push_str(" v");
                s.push_str(crate::VERSION);
                s.push_str(": ");
                s.push_str(&self.msg);
                s.push('\n');
            }
            Style::Plain => {
                s.push_str(prog);
                s.push_str(": ");
                s.push_str(&self.msg);
                s.push('\n');
            }
            Style::Bare => {
                if !self.msg.is_empty() {
                    s.push_str(&self.msg);
                    s.push('\n');
                }
            }
        }
        if self.kind == ExitKind::Version {
            s.push_str(&format!(
                "Perhaps {prog} or your kernel needs to be upgraded.\n"
            ));
        }
        if self.kind == ExitKind::Parameter && self.style != Style::Plain {
            if let Some(l) = line {
                s.push_str(&format!("Error occurred at line: {l}\n"));
            }
            s.push_str(&format!(
                "Try `{prog} -h' or '{prog} --help' for more information.\n"
            ));
        }
        s
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.msg.trim_end())
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

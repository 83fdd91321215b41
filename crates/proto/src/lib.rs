//! The wire protocol of `nfkeeper serve` and a client library for it.
//!
//! One daemon serves one network namespace on a unix stream socket
//! ([`client::default_path`]). Every message in either direction is one
//! frame: a big-endian `u32` length (of what follows it), the version byte
//! ([`VERSION`]), a type byte and the body. A client sends one [`Request`]
//! and reads [`Reply`] frames up to the terminating `Exit` (or `Error`);
//! a connection may carry many such round trips. docs/protocol.md is the
//! specification; this crate is its reference implementation.
//!
//! Decoding never panics and never allocates more than the input can
//! justify: counts are checked against the bytes left, and a frame longer
//! than the reader's limit is refused before its body is read.

pub mod client;
mod wire;

pub use wire::{
    decode_reply, decode_request, encode_reply, encode_request, read_frame, read_reply,
    read_request, write_reply, write_request, write_stdout,
};

use std::fmt;

/// The protocol version this crate speaks (the second byte of each frame).
pub const VERSION: u8 = 1;
/// The daemon's default limit on one request frame.
pub const DEFAULT_MAX_REQUEST: usize = 64 << 20;
/// The client's default limit on one reply frame.
pub const DEFAULT_MAX_REPLY: usize = 1 << 30;

/// Error frame code: the daemon is stopping and did nothing for the
/// request (it may be sent again; the CLI runs it in direct mode).
pub const STOPPING: i32 = 3;

/// Address family of a request: wire value 4 or 6.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fam {
    V4,
    V6,
}

/// What a client asks the daemon (frame types 0x01..0x05).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// An iptables command line without argv[0]; `prog` names the program
    /// in messages (`iptables`, `ip6tables`).
    Iptables {
        family: Fam,
        prog: String,
        args: Vec<String>,
    },
    /// iptables-restore with its options; `payload` is the restore input.
    Restore {
        family: Fam,
        prog: String,
        noflush: bool,
        counters: bool,
        test: bool,
        table: Option<String>,
        payload: Vec<u8>,
    },
    /// iptables-save with its options.
    Save {
        family: Fam,
        prog: String,
        counters: bool,
        table: Option<String>,
    },
    /// The daemon's status text.
    Status,
    /// Typed operations applied as one transaction (all or none).
    Ops { family: Fam, ops: Vec<Op> },
    /// An ipset command line without argv[0]; `input` is `restore`'s
    /// input (stdin or `-file`, read by the client).
    Ipset {
        args: Vec<String>,
        input: Option<Vec<u8>>,
    },
}

/// The kind of a typed operation (wire values 1..=10 in declaration order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Append,
    Insert,
    Delete,
    DeleteNum,
    Replace,
    NewChain,
    DeleteChain,
    Flush,
    Policy,
    Check,
}

impl OpKind {
    /// Every kind, in wire order (wire value = index + 1).
    pub const ALL: [OpKind; 10] = [
        OpKind::Append,
        OpKind::Insert,
        OpKind::Delete,
        OpKind::DeleteNum,
        OpKind::Replace,
        OpKind::NewChain,
        OpKind::DeleteChain,
        OpKind::Flush,
        OpKind::Policy,
        OpKind::Check,
    ];

    /// The iptables command option of this kind.
    pub fn flag(self) -> &'static str {
        match self {
            OpKind::Append => "-A",
            OpKind::Insert => "-I",
            OpKind::Delete | OpKind::DeleteNum => "-D",
            OpKind::Replace => "-R",
            OpKind::NewChain => "-N",
            OpKind::DeleteChain => "-X",
            OpKind::Flush => "-F",
            OpKind::Policy => "-P",
            OpKind::Check => "-C",
        }
    }

    /// Whether `pos` (a rule number) is part of this kind's command line.
    pub fn has_pos(self) -> bool {
        matches!(self, OpKind::Insert | OpKind::DeleteNum | OpKind::Replace)
    }
}

/// One typed operation: an iptables command on one chain of one table.
///
/// `pos` is the rule number for Insert, DeleteNum and Replace and 0
/// otherwise; `rule` holds iptables rule options (`["-s", "10.0.0.1", "-j",
/// "ACCEPT"]`), or `[policy]` for Policy. An empty `chain` in Flush or
/// DeleteChain means every chain of the table, as `iptables -F` / `-X` do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    pub table: String,
    pub chain: String,
    pub pos: u32,
    pub rule: Vec<String>,
}

impl Op {
    fn new(kind: OpKind, table: &str, chain: &str, pos: u32, rule: &[&str]) -> Op {
        Op {
            kind,
            table: table.to_string(),
            chain: chain.to_string(),
            pos,
            rule: rule.iter().map(|w| w.to_string()).collect(),
        }
    }

    pub fn append(table: &str, chain: &str, rule: &[&str]) -> Op {
        Op::new(OpKind::Append, table, chain, 0, rule)
    }

    /// Insert at rule number `pos` (1 = first).
    pub fn insert(table: &str, chain: &str, pos: u32, rule: &[&str]) -> Op {
        Op::new(OpKind::Insert, table, chain, pos, rule)
    }

    /// Delete the first rule matching `rule`.
    pub fn delete(table: &str, chain: &str, rule: &[&str]) -> Op {
        Op::new(OpKind::Delete, table, chain, 0, rule)
    }

    /// Delete rule number `pos`.
    pub fn delete_num(table: &str, chain: &str, pos: u32) -> Op {
        Op::new(OpKind::DeleteNum, table, chain, pos, &[])
    }

    /// Replace rule number `pos` by `rule`.
    pub fn replace(table: &str, chain: &str, pos: u32, rule: &[&str]) -> Op {
        Op::new(OpKind::Replace, table, chain, pos, rule)
    }

    pub fn new_chain(table: &str, chain: &str) -> Op {
        Op::new(OpKind::NewChain, table, chain, 0, &[])
    }

    /// Delete a user chain (`chain` empty: every empty user chain).
    pub fn delete_chain(table: &str, chain: &str) -> Op {
        Op::new(OpKind::DeleteChain, table, chain, 0, &[])
    }

    /// Flush a chain (`chain` empty: every chain of the table).
    pub fn flush(table: &str, chain: &str) -> Op {
        Op::new(OpKind::Flush, table, chain, 0, &[])
    }

    /// Set a built-in chain's policy (`ACCEPT`, `DROP`).
    pub fn policy(table: &str, chain: &str, policy: &str) -> Op {
        Op::new(OpKind::Policy, table, chain, 0, &[policy])
    }

    /// Whether a rule matching `rule` exists (result code 0) or not (1).
    pub fn check(table: &str, chain: &str, rule: &[&str]) -> Op {
        Op::new(OpKind::Check, table, chain, 0, rule)
    }

    /// The equivalent iptables argv (without argv[0]):
    /// `-t table FLAG chain [pos] rule...`. The chain is left out when it is
    /// empty in Flush and DeleteChain (all chains).
    pub fn to_args(&self) -> Vec<String> {
        let mut a = Vec::with_capacity(5 + self.rule.len());
        a.push("-t".to_string());
        a.push(self.table.clone());
        a.push(self.kind.flag().to_string());
        let all_chains =
            matches!(self.kind, OpKind::Flush | OpKind::DeleteChain) && self.chain.is_empty();
        if !all_chains {
            a.push(self.chain.clone());
        }
        if self.kind.has_pos() {
            a.push(self.pos.to_string());
        }
        a.extend(self.rule.iter().cloned());
        a
    }
}

/// The outcome of one typed operation: its iptables exit code and message
/// (empty on success).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpResult {
    pub code: i32,
    pub message: String,
}

/// What the daemon sends back (frame types 0x81..0x85).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// A chunk of standard output, in production order.
    Stdout(Vec<u8>),
    /// A chunk of standard error, in production order.
    Stderr(Vec<u8>),
    /// The end of a reply: the exit code the CLI exits with.
    Exit(i32),
    /// One result per typed operation; an `Exit` follows.
    OpResults(Vec<OpResult>),
    /// A protocol-level refusal; the daemon closes the connection after it.
    Error { code: i32, message: String },
}

/// Why a frame could not be read or decoded.
#[derive(Debug)]
pub enum ProtoError {
    /// The peer closed the connection cleanly before the first byte of a
    /// frame.
    Eof,
    /// Reading failed, or the connection closed inside a frame
    /// (`UnexpectedEof`).
    Io(std::io::Error),
    /// A frame announced `len` bytes, more than the reader's limit `max`;
    /// its body was not read.
    TooLarge { len: usize, max: usize },
    /// The frame carries a version this crate does not speak.
    BadVersion(u8),
    /// The frame does not follow the format; the text says where.
    Malformed(String),
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtoError::Eof => write!(f, "the connection was closed"),
            ProtoError::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                write!(f, "the connection was closed in the middle of a message")
            }
            ProtoError::Io(e) => write!(f, "{e}"),
            ProtoError::TooLarge { len, max } => {
                write!(f, "message of {len} bytes exceeds the limit of {max} bytes")
            }
            ProtoError::BadVersion(v) => {
                write!(
                    f,
                    "unsupported protocol version {v} (this side speaks version {VERSION})"
                )
            }
            ProtoError::Malformed(why) => write!(f, "malformed message: {why}"),
        }
    }
}

impl std::error::Error for ProtoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ProtoError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for ProtoError {
    fn from(e: std::io::Error) -> ProtoError {
        ProtoError::Io(e)
    }
}

#[cfg(test)]
mod tests;

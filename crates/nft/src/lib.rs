//! nf_tables objects and their netlink codec, plus one thin socket layer.
//!
//! What it is for: turning plain Rust values (tables, chains, rules with
//! native expressions, sets, set elements) into the bytes of an nf_tables
//! netlink batch and back, and sending/receiving those bytes. The codec is
//! sans-I/O (pure encode/decode over byte buffers, tested without root); only
//! [`transport`] touches the kernel, behind a trait that tests replace with an
//! in-memory kernel. What it is not: it knows nothing of
//! iptables syntax or of the logical model; planning lives above it.
//!
//! Layout: [`netlink`] (framing, TLV writer/parser), one module per object
//! kind ([`table`], [`chain`], [`rule`], [`set`], [`setelem`], [`gen`]),
//! [`expr`] (expressions) and [`data`] (data values and verdicts), [`batch`]
//! (transactions with caller tags), [`socket`] (requests and replies) and
//! [`events`] (notifications) over a [`transport`] (the only I/O).
//!
//! Parsers never panic on malformed input; they return [`Error`].

pub mod batch;
pub mod chain;
pub mod data;
pub mod events;
pub mod expr;
pub mod gen;
pub mod ipset_index;
pub mod linger;
pub mod netlink;
pub mod prefetch;
pub mod rule;
pub mod set;
pub mod setelem;
pub mod socket;
pub mod table;
pub mod transport;

pub use batch::{Batch, BatchError, Echo, Outcome, Tag};
pub use chain::{Chain, Hook};
pub use data::{Data, Verdict};
pub use events::{Event, EventSocket};
pub use expr::Expr;
pub use gen::Gen;
pub use rule::{Rule, RuleCompat, RuleRef};
pub use set::Set;
pub use setelem::{SetElem, SetElems};
pub use socket::Socket;
pub use table::Table;
pub use transport::Transport;

use std::fmt;

/// nf_tables message types (`enum nf_tables_msg_types`).
pub mod msg {
    pub const NEWTABLE: u16 = 0;
    pub const GETTABLE: u16 = 1;
    pub const DELTABLE: u16 = 2;
    pub const NEWCHAIN: u16 = 3;
    pub const GETCHAIN: u16 = 4;
    pub const DELCHAIN: u16 = 5;
    pub const NEWRULE: u16 = 6;
    pub const GETRULE: u16 = 7;
    pub const DELRULE: u16 = 8;
    pub const NEWSET: u16 = 9;
    pub const GETSET: u16 = 10;
    pub const DELSET: u16 = 11;
    pub const NEWSETELEM: u16 = 12;
    pub const GETSETELEM: u16 = 13;
    pub const DELSETELEM: u16 = 14;
    pub const NEWGEN: u16 = 15;
    pub const GETGEN: u16 = 16;
    /// Delete set elements, with no error for missing ones (kernel 6.3+).
    pub const DESTROYSETELEM: u16 = 30;
    /// Dump set elements and reset their stateful expressions (counters)
    /// in the same walk (kernel 6.5+).
    pub const GETSETELEM_RESET: u16 = 33;
}

/// Address family of a table (`NFPROTO_*`), carried in `nfgenmsg.nfgen_family`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Family {
    #[default]
    Unspec = 0,
    Inet = 1,
    Ipv4 = 2,
    Arp = 3,
    Netdev = 5,
    Bridge = 7,
    Ipv6 = 10,
}

impl Family {
    /// Maps a raw `NFPROTO_*` value; unknown values are an error.
    pub fn from_u8(v: u8) -> Result<Family, Error> {
        Ok(match v {
            0 => Family::Unspec,
            1 => Family::Inet,
            2 => Family::Ipv4,
            3 => Family::Arp,
            5 => Family::Netdev,
            7 => Family::Bridge,
            10 => Family::Ipv6,
            _ => return Err(Error::BadFamily(v)),
        })
    }
}

/// Codec and socket errors.
#[derive(Debug)]
pub enum Error {
    /// A message or attribute runs past the end of its buffer.
    Truncated,
    /// An attribute (by type) has the wrong size or content.
    BadAttr(u16),
    /// A required attribute (by type) is missing.
    Missing(u16),
    /// Unknown `nfgenmsg` family.
    BadFamily(u8),
    /// A message of an unexpected type.
    Unexpected(u16),
    /// The kernel answered a request with an error (negative errno and the
    /// extended-ACK text, if any).
    Kernel {
        code: i32,
        text: Option<String>,
    },
    /// A dump was interrupted by a concurrent change (`NLM_F_DUMP_INTR`);
    /// the caller should retry.
    DumpInterrupted,
    Io(std::io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated => write!(f, "truncated netlink data"),
            Error::BadAttr(t) => write!(f, "malformed attribute {t}"),
            Error::Missing(t) => write!(f, "missing attribute {t}"),
            Error::BadFamily(v) => write!(f, "unknown family {v}"),
            Error::Unexpected(t) => write!(f, "unexpected message type {t:#x}"),
            Error::Kernel { code, text } => {
                write!(f, "{}", std::io::Error::from_raw_os_error(-code))?;
                if let Some(t) = text {
                    write!(f, " ({t})")?;
                }
                Ok(())
            }
            Error::DumpInterrupted => write!(f, "dump interrupted by a concurrent change"),
            Error::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

/// An nf_tables object kind with symmetric codec. `emit` writes the
/// object's attributes (after the `nfgenmsg`, which carries
/// [`Object::family`]); `parse` reads them back. Fields that are `None`
/// (or empty lists) are not emitted, so a value with only its identifying
/// fields set is what a delete or a filtered dump needs. Read-only kernel
/// fields (use counts, element expirations) are parsed but never emitted.
pub trait Object: Sized {
    /// `NFT_MSG_NEW*`, `NFT_MSG_DEL*`, `NFT_MSG_GET*` of this kind.
    const NEW: u16;
    const DEL: u16;
    const GET: u16;
    fn family(&self) -> Family;
    fn emit(&self, w: &mut netlink::Writer);
    fn parse(family: Family, attrs: netlink::Attrs) -> Result<Self, Error>;

    /// Emits the part of the object starting at item `from` that fits one
    /// message and returns where the next message must continue (`None`
    /// when done). Only element lists are ever split; the default emits
    /// everything.
    fn emit_split(&self, w: &mut netlink::Writer, from: usize) -> Option<usize> {
        let _ = from;
        self.emit(w);
        None
    }

    /// Parses a whole `NEW*` message (as received in a dump or echo).
    fn parse_msg(m: &netlink::Msg) -> Result<Self, Error> {
        let nf = m.nf()?;
        Self::parse(Family::from_u8(nf.family)?, nf.attrs)
    }
}

//! iptables syntax for nfkeeper: the structured rule (`rule`), the extensions
//! (`ext`, one module each), the command-line and restore parsers (`parse`),
//! the printers (`print`), and command semantics over the model (`exec`).
//!
//! What it is not: it does no I/O beyond what the caller hands it, and knows
//! nothing of nftables or the kernel.

pub mod bytes;
pub mod error;
pub mod exec;
pub mod ext;
pub mod opt;
pub mod parse;
pub mod print;
pub mod rule;
pub mod tool;

/// Service and protocol names live in `ruleset` (shared with the ipset front end).
pub use ruleset::names;

pub use error::{Error, ExitKind, Result};
pub use rule::{Addr, Iface, Rule, Target};

/// The iptables version whose syntax and output we follow, and our backend tag
/// (iptables prints "1.8.11 (nf_tables)" or "(legacy)").
pub const VERSION: &str = "1.8.11 (nfkeeper)";

//! Parsers: the command line (`argv.rs`) and iptables-restore input
//! (`restore.rs`, which tokenises lines and hands each to the argv parser).

pub mod argv;
mod build;
pub mod getopt;
pub mod help;
mod options;
pub mod restore;

pub use argv::{parse, ParseOpts};

use crate::rule::Rule;
use ruleset::{Counters, Policy, TableKind};

/// `-n -v -x --line-numbers`, and `-w`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListFlags {
    pub numeric: bool,
    pub verbose: bool,
    pub exact: bool,
    pub line_numbers: bool,
    /// `-w [SECONDS]`: how long to wait for a busy ruleset (iptables waits
    /// for the xtables lock; nfkeeper retries a transaction the ruleset
    /// changed under). `Some(None)`: `-w` without seconds, no limit.
    pub wait: Option<Option<u32>>,
}

/// One iptables command. Chain names are as given; rule numbers are 1-based.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Append(String),
    Check(String),
    Delete(String),
    DeleteNum(String, usize),
    Insert(String, usize),
    Replace(String, usize),
    List {
        chain: Option<String>,
        num: Option<usize>,
        zero: bool,
    },
    ListRules {
        chain: Option<String>,
        num: Option<usize>,
        zero: bool,
    },
    Flush(Option<String>),
    Zero {
        chain: Option<String>,
        num: Option<usize>,
    },
    NewChain(String),
    DeleteChain(Option<String>),
    Rename(String, String),
    /// `-P CHAIN POLICY [-c P B]`: sets the policy and always the policy
    /// counters too — to `-c`'s (or a restore line's `[P:B]` under
    /// `--counters`), else to zero, as both iptables backends do.
    Policy(String, Policy, Counters),
    Help,
    Version,
}

/// A parsed command line.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub command: Command,
    pub table: TableKind,
    /// The rule(s) of -A/-C/-D/-I/-R: several when -s/-d list several
    /// addresses (iptables adds one rule per pair).
    pub rules: Vec<Rule>,
    /// `-c P B`
    pub counters: Option<Counters>,
    pub flags: ListFlags,
    /// Warnings iptables prints on stderr while parsing (e.g. "Ignoring
    /// deprecated --wait-interval option."); the caller prints them.
    pub warnings: Vec<String>,
}

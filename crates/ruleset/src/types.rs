//! Small value types shared by the whole model.

use std::hash::Hash;

/// Address family of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    Ipv4,
    Ipv6,
}

impl Family {
    pub const ALL: [Family; 2] = [Family::Ipv4, Family::Ipv6];

    pub fn index(self) -> usize {
        self as usize
    }
}

/// The iptables tables. Built-in chains and their order are fixed per table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TableKind {
    Filter,
    Nat,
    Mangle,
    Raw,
    Security,
}

impl TableKind {
    pub const ALL: [TableKind; 5] = [
        TableKind::Filter,
        TableKind::Nat,
        TableKind::Mangle,
        TableKind::Raw,
        TableKind::Security,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            TableKind::Filter => "filter",
            TableKind::Nat => "nat",
            TableKind::Mangle => "mangle",
            TableKind::Raw => "raw",
            TableKind::Security => "security",
        }
    }

    pub fn from_name(name: &str) -> Option<TableKind> {
        TableKind::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Built-in chains in the order iptables lists them (hook order).
    pub fn builtin_chains(self) -> &'static [&'static str] {
        match self {
            TableKind::Filter => &["INPUT", "FORWARD", "OUTPUT"],
            TableKind::Nat => &["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"],
            TableKind::Mangle => &["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"],
            TableKind::Raw => &["PREROUTING", "OUTPUT"],
            TableKind::Security => &["INPUT", "FORWARD", "OUTPUT"],
        }
    }
}

/// Policy of a built-in chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    Accept,
    Drop,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Accept => "ACCEPT",
            Policy::Drop => "DROP",
        }
    }
}

/// Packet and byte counters of a rule or a built-in chain's policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counters {
    pub packets: u64,
    pub bytes: u64,
}

/// Stable identity of a rule: survives inserts, deletes and moves around it.
/// Later layers store it in the kernel rule's userdata, so a model rebuilt from
/// the kernel keeps the same ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleId(pub u64);

/// Index of a chain inside its table. Valid until that chain is deleted; never
/// reused within the life of a `Table` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChainId(pub u32);

/// What the model needs to know about a rule body.
pub trait RuleBody: Clone + Eq + Hash + std::fmt::Debug {
    /// The user chain this rule jumps or goes to (`-j CHAIN`, `-g CHAIN`), if any.
    /// Built-in verdicts and targets (ACCEPT, DROP, LOG ...) return `None`.
    fn jump_target(&self) -> Option<&str>;

    /// Point the jump/goto at a renamed chain (`-E old new`). Called only on
    /// bodies whose `jump_target()` is `Some(old)`.
    fn retarget(&mut self, new_chain: &str);
}

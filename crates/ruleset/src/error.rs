//! Model errors. Wording for users is the `iptables` crate's job; these are the
//! facts it needs to pick iptables' message and exit code.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The named chain does not exist.
    NoSuchChain,
    /// `-N` of a chain that exists (user or built-in).
    ChainExists,
    /// `-X`/`-E` of a built-in chain, or `-P` of a user chain.
    BuiltinChain,
    /// `-X` of a chain that rules still jump to.
    ChainInUse,
    /// `-X` of a chain that still has rules.
    ChainNotEmpty,
    /// `-D`/`-C` by spec: no such rule in the chain.
    NoSuchRule,
    /// Rule number out of range for `-I`/`-R`/`-D`/`-Z`/`-S`/`-L`.
    IndexOutOfRange,
    /// A jump/goto to a chain that does not exist (the name is the target).
    NoSuchTarget(String),
    /// The jump would make a loop (chain reachable from its own target).
    Loop,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NoSuchChain => write!(f, "no such chain"),
            Error::ChainExists => write!(f, "chain already exists"),
            Error::BuiltinChain => write!(f, "operation not allowed on a built-in chain"),
            Error::ChainInUse => write!(f, "chain is referenced"),
            Error::ChainNotEmpty => write!(f, "chain is not empty"),
            Error::NoSuchRule => write!(f, "no matching rule"),
            Error::IndexOutOfRange => write!(f, "rule number out of range"),
            Error::NoSuchTarget(t) => write!(f, "no chain named {t}"),
            Error::Loop => write!(f, "jump would create a loop"),
        }
    }
}

impl std::error::Error for Error {}

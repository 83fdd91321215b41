//! Command lines and restore input, read as ipset 7.21 reads them.
//!
//! `argv` turns one command line into a [`Parsed`] command: global options
//! anywhere on the line, the command word (any prefix of a command name, or
//! the old `-N`/`-A`/... letters), its set name(s), and for create and
//! add/del/test the type's keywords and the element. Reading an element
//! needs the named set's type and family, which only the model knows: the
//! caller passes a [`SetLookup`]. `restore` splits restore input into lines
//! and words (double quotes group words) and recognises `COMMIT`.

pub mod argv;
mod help;
pub mod restore;

use crate::addr::Family;
use crate::data::Data;
use crate::types::SetType;

pub use argv::{parse, verb, Cmd};
pub use help::{general_help, type_help, types_help};

/// Listing format (`-output`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMode {
    Plain,
    Save,
    Xml,
    Json,
}

/// Global options of one invocation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Env {
    /// `-exist`: tolerate creating an existing set (same parameters), adding
    /// an existing element, deleting a missing one, destroying a missing set.
    pub exist: bool,
    /// `-quiet`: print no warnings, notices or errors.
    pub quiet: bool,
    /// `-sorted`: list hash members sorted.
    pub sorted: bool,
    /// `-resolve`: accepted; addresses print numerically (no name lookups).
    pub resolve: bool,
    /// `-name`: list set names only.
    pub names_only: bool,
    /// `-terse`: list headers only.
    pub terse: bool,
    pub output: Option<OutputMode>,
    /// `-file`: restore from / list to this file (the caller does the I/O).
    pub file: Option<String>,
}

/// One command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Create {
        name: String,
        ty: SetType,
        data: Data,
    },
    Add {
        name: String,
        data: Data,
    },
    Del {
        name: String,
        data: Data,
    },
    Test {
        name: String,
        data: Data,
    },
    Destroy(Option<String>),
    Flush(Option<String>),
    List(Option<String>),
    Save(Option<String>),
    Rename {
        from: String,
        to: String,
    },
    Swap {
        from: String,
        to: String,
    },
    Restore,
    Help(Option<String>),
    Version,
    Quit,
    /// `ipset -`: ipset's interactive mode (left to the caller).
    Interactive,
}

/// A parsed command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub env: Env,
    pub cmd: Command,
    /// Warnings ipset prints after running the command (ignored options).
    pub warnings: Vec<String>,
}

/// What the parser must know about existing sets to read an element: the
/// set's type and family (`None` for family-neutral types), or `None` if
/// there is no such set.
pub trait SetLookup {
    fn set_kind(&self, name: &str) -> Option<(SetType, Option<Family>)>;
}

impl<F> SetLookup for F
where
    F: Fn(&str) -> Option<(SetType, Option<Family>)>,
{
    fn set_kind(&self, name: &str) -> Option<(SetType, Option<Family>)> {
        self(name)
    }
}

//! Errors as ipset reports them: which channel a message takes decides its
//! wording and the exit status.
//!
//! ipset has three ways to fail. Command-line problems ("parameter problems")
//! print the message and a hint to try `ipset help`, exit 2. A few semantic
//! checks of the command line ("other problems") print the message alone,
//! exit 1. Everything the library or the kernel reports (syntax errors in
//! values, kernel error codes) goes through the session report: the message
//! alone, prefixed with `Error in line N: ` while restoring, exit 1.

use std::fmt;

/// The program name and version ipset prints in front of every error.
pub const PROGRAM: &str = "ipset";
/// The ipset release whose behaviour and text this crate follows.
pub const VERSION: &str = "7.21";
/// The netlink protocol version ipset 7.21 reports in `ipset version`.
pub const PROTOCOL: u8 = 7;

/// How a failure is reported (and the exit status it maps to).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Command-line problem: message + "Try `ipset help'..." hint, exit 2.
    Parameter,
    /// Other command-line problem: message alone, exit 1.
    Other,
    /// Session report (syntax errors in values, kernel errors): exit 1; the
    /// message gets `Error in line N: ` in restore mode.
    Session,
    /// A session report that began as warnings and was turned into an error
    /// (unknown port names): exit 1, and no line number even in restore mode.
    Warned,
    /// A notice ("X is NOT in set Y."): printed bare, exit 1.
    Notice,
}

/// One failure: its channel and message (without the `ipset v7.21: ` prefix
/// and without a trailing newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: Kind,
    pub msg: String,
}

impl Error {
    pub fn parameter(msg: impl Into<String>) -> Self {
        Error {
            kind: Kind::Parameter,
            msg: msg.into(),
        }
    }

    pub fn other(msg: impl Into<String>) -> Self {
        Error {
            kind: Kind::Other,
            msg: msg.into(),
        }
    }

    pub fn session(msg: impl Into<String>) -> Self {
        Error {
            kind: Kind::Session,
            msg: msg.into(),
        }
    }

    pub fn warned(msg: impl Into<String>) -> Self {
        Error {
            kind: Kind::Warned,
            msg: msg.into(),
        }
    }

    /// Append a second report line, as ipset's session report accumulates
    /// messages of the same severity.
    pub fn then(mut self, next: Error) -> Self {
        self.msg.push('\n');
        self.msg.push_str(&next.msg);
        self
    }

    /// `Syntax error: ...`, as ipset's value parsers word it.
    pub fn syntax(msg: impl fmt::Display) -> Self {
        Error::session(format!("Syntax error: {msg}"))
    }

    /// The exit status ipset uses for this failure.
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            Kind::Parameter => 2,
            Kind::Other | Kind::Session | Kind::Warned | Kind::Notice => 1,
        }
    }

    /// The text ipset prints on stderr. `line` is the restore line number
    /// (1-based) when the command came from restore input.
    pub fn render(&self, line: Option<usize>) -> String {
        if self.kind == Kind::Notice {
            return format!("{}\n", self.msg);
        }
        let mut s = format!("{PROGRAM} v{VERSION}: ");
        if let (Kind::Session, Some(n)) = (self.kind, line) {
            s.push_str(&format!("Error in line {n}: "));
        }
        s.push_str(&self.msg);
        s.push('\n');
        if self.kind == Kind::Parameter {
            s.push_str(&format!("Try `{PROGRAM} help' for more information.\n"));
        }
        s
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Kernel error codes ipset can receive, with the messages ipset prints for
/// them. The model produces these where the kernel would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// ENOENT: no such set.
    NoSet,
    /// EEXIST on create.
    SetExists,
    /// The set is referenced (destroy).
    Busy,
    /// Rename target exists.
    RenameExists,
    /// Rename of a referenced set.
    Referenced,
    /// Swap: the second set does not exist.
    SwapNoSecond,
    /// Swap: types (features or family) differ.
    TypeMismatch,
    InvalidCidr,
    InvalidNetmask,
    InvalidMarkmask,
    InvalidFamily,
    BitmaskNetmaskExcl,
    Timeout,
    Counter,
    Comment,
    Skbinfo,
    /// IPSET_ERR_EXIST on add.
    AlreadyAdded,
    /// IPSET_ERR_EXIST on del.
    NotAdded,
    BitmapRange,
    BitmapRangeSize,
    HashFull,
    HashElem,
    InvalidProto,
    MissingProto,
    HashRangeUnsupported,
    HashRange,
    /// list:set: the member set does not exist.
    ListName,
    /// list:set: a list:set cannot be a member.
    ListLoop,
    /// list:set: before without a reference set.
    ListBefore,
    /// list:set: the reference set does not exist.
    ListNameRef,
    /// list:set: the reference set is not in the list.
    ListRefExist,
    /// EINVAL (a zero address in some types).
    Invalid,
    /// ERANGE: a range too large to walk.
    RangeTooLarge,
}

impl Kernel {
    /// ipset's message for this error code.
    pub fn message(self) -> &'static str {
        match self {
            Kernel::NoSet => "The set with the given name does not exist",
            Kernel::SetExists => "Set cannot be created: set with the same name already exists",
            Kernel::Busy => "Set cannot be destroyed: it is in use by a kernel component",
            Kernel::RenameExists => "Set cannot be renamed: a set with the new name already exists",
            Kernel::Referenced => "Set cannot be renamed: it is in use by another system",
            Kernel::SwapNoSecond => "Sets cannot be swapped: the second set does not exist",
            Kernel::TypeMismatch => "The sets cannot be swapped: their type does not match",
            Kernel::InvalidCidr => "The value of the CIDR parameter of the IP address is invalid",
            Kernel::InvalidNetmask => "The value of the netmask parameter is invalid",
            Kernel::InvalidMarkmask => "The value of the markmask parameter is invalid",
            Kernel::InvalidFamily => "Protocol family not supported by the set type",
            Kernel::BitmaskNetmaskExcl => {
                "netmask and bitmask options are mutually exclusive, provide only one"
            }
            Kernel::Timeout => "Timeout cannot be used: set was created without timeout support",
            Kernel::Counter => {
                "Packet/byte counters cannot be used: set was created without counter support"
            }
            Kernel::Comment => "Comment cannot be used: set was created without comment support",
            Kernel::Skbinfo => {
                "Skbinfo mapping cannot be used: set was created without skbinfo support"
            }
            Kernel::AlreadyAdded => "Element cannot be added to the set: it's already added",
            Kernel::NotAdded => "Element cannot be deleted from the set: it's not added",
            Kernel::BitmapRange => "Element is out of the range of the set",
            Kernel::BitmapRangeSize => {
                "The range you specified exceeds the size limit of the set type"
            }
            Kernel::HashFull => "Hash is full, cannot add more elements",
            Kernel::HashElem => "Null-valued element, cannot be stored in a hash type of set",
            Kernel::InvalidProto => "Invalid protocol specified",
            Kernel::MissingProto => "Protocol missing, but must be specified",
            Kernel::HashRangeUnsupported => {
                "Range is not supported in the \"net\" component of the element"
            }
            Kernel::HashRange => "Invalid range, covers the whole address space",
            Kernel::ListName => "Set to be added/deleted/tested as element does not exist.",
            Kernel::ListLoop => "Sets with list:set type cannot be added to the set.",
            Kernel::ListBefore => "No reference set specified.",
            Kernel::ListNameRef => {
                "The set to which you referred with 'before' or 'after' does not exist."
            }
            Kernel::ListRefExist => {
                "The set to which you referred with 'before' or 'after' is not added to the set."
            }
            Kernel::Invalid => "Kernel error received: Invalid argument",
            Kernel::RangeTooLarge => {
                "The specified range is too large, split it up into smaller ranges"
            }
        }
    }
}

impl From<Kernel> for Error {
    fn from(k: Kernel) -> Self {
        Error::session(k.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendering_follows_the_channel() {
        let cases = [
            (
                Error::parameter("No command specified."),
                None,
                "ipset v7.21: No command specified.\nTry `ipset help' for more information.\n",
                2,
            ),
            (
                Error::other("FROM-TO IP range is not allowed"),
                Some(3),
                "ipset v7.21: FROM-TO IP range is not allowed\n",
                1,
            ),
            (
                Kernel::NoSet.into(),
                Some(4),
                "ipset v7.21: Error in line 4: The set with the given name does not exist\n",
                1,
            ),
            (
                Error::syntax("'x' is invalid as number"),
                None,
                "ipset v7.21: Syntax error: 'x' is invalid as number\n",
                1,
            ),
        ];
        for (e, line, text, code) in cases {
            assert_eq!(e.render(line), text);
            assert_eq!(e.exit_code(), code);
        }
    }
}

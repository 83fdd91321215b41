//! The main (non-extension) options of the iptables command line: long and
//! short names, option and command bits, and iptables' rules for which
//! option goes with which command.

use crate::error::{Error, Result};
use crate::ext::{self, Arg};
use crate::opt;
use crate::rule::inv;

/// Maximum chain/target name length + 1 (XT_EXTENSION_MAXNAMELEN).
pub const MAXNAMELEN: usize = 29;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Main {
    Append,
    Check,
    Delete,
    Insert,
    Replace,
    List,
    ListRules,
    Flush,
    Zero,
    NewChain,
    DeleteChain,
    Rename,
    Policy,
    Source,
    Dest,
    Proto,
    InIface,
    Jump,
    Table,
    Match,
    Numeric,
    OutIface,
    Verbose,
    Wait,
    WaitInterval,
    Exact,
    Frag,
    Version,
    Help,
    LineNumbers,
    Modprobe,
    Counters,
    Goto,
    Ipv4,
    Ipv6,
}

/// (long name, has_arg, id). Order matters for prefix matching, as in getopt.
pub(super) const MAIN_LONG: &[(&str, Arg, Main)] = &[
    ("append", Arg::Required, Main::Append),
    ("delete", Arg::Required, Main::Delete),
    ("check", Arg::Required, Main::Check),
    ("insert", Arg::Required, Main::Insert),
    ("replace", Arg::Required, Main::Replace),
    ("list", Arg::Optional, Main::List),
    ("list-rules", Arg::Optional, Main::ListRules),
    ("flush", Arg::Optional, Main::Flush),
    ("zero", Arg::Optional, Main::Zero),
    ("new-chain", Arg::Required, Main::NewChain),
    ("delete-chain", Arg::Optional, Main::DeleteChain),
    ("rename-chain", Arg::Required, Main::Rename),
    ("policy", Arg::Required, Main::Policy),
    ("source", Arg::Required, Main::Source),
    ("destination", Arg::Required, Main::Dest),
    ("src", Arg::Required, Main::Source),
    ("dst", Arg::Required, Main::Dest),
    ("protocol", Arg::Required, Main::Proto),
    ("in-interface", Arg::Required, Main::InIface),
    ("jump", Arg::Required, Main::Jump),
    ("table", Arg::Required, Main::Table),
    ("match", Arg::Required, Main::Match),
    ("numeric", Arg::None, Main::Numeric),
    ("out-interface", Arg::Required, Main::OutIface),
    ("verbose", Arg::None, Main::Verbose),
    ("wait", Arg::Optional, Main::Wait),
    ("wait-interval", Arg::Optional, Main::WaitInterval),
    ("exact", Arg::None, Main::Exact),
    ("fragments", Arg::None, Main::Frag),
    ("version", Arg::None, Main::Version),
    ("help", Arg::Optional, Main::Help),
    ("line-numbers", Arg::None, Main::LineNumbers),
    ("modprobe", Arg::Required, Main::Modprobe),
    ("set-counters", Arg::Required, Main::Counters),
    ("goto", Arg::Required, Main::Goto),
    ("ipv4", Arg::None, Main::Ipv4),
    ("ipv6", Arg::None, Main::Ipv6),
];

/// Short options: (char, has_arg). From iptables' optstring.
pub(super) fn short_opt(c: char) -> Option<(Arg, Main)> {
    use Main::*;
    Some(match c {
        'A' => (Arg::Required, Append),
        'C' => (Arg::Required, Check),
        'D' => (Arg::Required, Delete),
        'E' => (Arg::Required, Rename),
        'F' => (Arg::Optional, Flush),
        'I' => (Arg::Required, Insert),
        'L' => (Arg::Optional, List),
        'M' => (Arg::Required, Modprobe),
        'N' => (Arg::Required, NewChain),
        'P' => (Arg::Required, Policy),
        'R' => (Arg::Required, Replace),
        'S' => (Arg::Optional, ListRules),
        'V' => (Arg::None, Version),
        'X' => (Arg::Optional, DeleteChain),
        'Z' => (Arg::Optional, Zero),
        'c' => (Arg::Required, Counters),
        'd' => (Arg::Required, Dest),
        'i' => (Arg::Required, InIface),
        'j' => (Arg::Required, Jump),
        'o' => (Arg::Required, OutIface),
        'p' => (Arg::Required, Proto),
        's' => (Arg::Required, Source),
        't' => (Arg::Required, Table),
        'v' => (Arg::None, Verbose),
        'W' => (Arg::Optional, WaitInterval),
        '4' => (Arg::None, Ipv4),
        '6' => (Arg::None, Ipv6),
        'f' => (Arg::None, Frag),
        'g' => (Arg::Required, Goto),
        'h' => (Arg::Optional, Help),
        'm' => (Arg::Required, Match),
        'n' => (Arg::None, Numeric),
        'w' => (Arg::Optional, Wait),
        'x' => (Arg::None, Exact),
        _ => return None,
    })
}

// Option bits for "multiple X options not allowed" and the option/command check.
pub(super) const O_NUMERIC: u32 = 1 << 0;
pub(super) const O_SOURCE: u32 = 1 << 1;
pub(super) const O_DEST: u32 = 1 << 2;
pub(super) const O_PROTO: u32 = 1 << 3;
pub(super) const O_JUMP: u32 = 1 << 4;
pub(super) const O_VERBOSE: u32 = 1 << 5;
pub(super) const O_EXACT: u32 = 1 << 6;
pub(super) const O_IN: u32 = 1 << 7;
pub(super) const O_OUT: u32 = 1 << 8;
pub(super) const O_LINENUM: u32 = 1 << 9;
pub(super) const O_COUNTERS: u32 = 1 << 10;
pub(super) const O_FRAG: u32 = 1 << 11;

pub(super) fn option_name(o: u32) -> &'static str {
    match o {
        O_NUMERIC => "--numeric",
        O_SOURCE => "--source",
        O_DEST => "--destination",
        O_PROTO => "--protocol",
        O_JUMP => "--jump",
        O_VERBOSE => "--verbose",
        O_EXACT => "--exact",
        O_IN => "--in-interface",
        O_OUT => "--out-interface",
        O_LINENUM => "--line-numbers",
        O_COUNTERS => "--set-counters",
        O_FRAG => "--fragments",
        _ => "unknown option",
    }
}

pub(super) fn option_invert(o: u32) -> Option<u8> {
    Some(match o {
        O_SOURCE => inv::SRC,
        O_DEST => inv::DST,
        O_PROTO => inv::PROTO,
        O_IN => inv::IN,
        O_OUT => inv::OUT,
        O_FRAG => inv::FRAG,
        _ => return None,
    })
}

// Command bits, in iptables' order (cmd2char relies on it).
pub(super) const C_INSERT: u32 = 1 << 0;
pub(super) const C_DELETE: u32 = 1 << 1;
pub(super) const C_DELETE_NUM: u32 = 1 << 2;
pub(super) const C_REPLACE: u32 = 1 << 3;
pub(super) const C_APPEND: u32 = 1 << 4;
pub(super) const C_LIST: u32 = 1 << 5;
pub(super) const C_FLUSH: u32 = 1 << 6;
pub(super) const C_ZERO: u32 = 1 << 7;
pub(super) const C_NEW_CHAIN: u32 = 1 << 8;
pub(super) const C_DELETE_CHAIN: u32 = 1 << 9;
pub(super) const C_SET_POLICY: u32 = 1 << 10;
pub(super) const C_RENAME: u32 = 1 << 11;
pub(super) const C_LIST_RULES: u32 = 1 << 12;
pub(super) const C_ZERO_NUM: u32 = 1 << 13;
pub(super) const C_CHECK: u32 = 1 << 14;

pub(super) fn cmd2char(cmd: u32) -> char {
    const FLAGS: [char; 15] = [
        'I', 'D', 'D', 'R', 'A', 'L', 'F', 'Z', 'N', 'X', 'P', 'E', 'S', 'Z', 'C',
    ];
    FLAGS[cmd.trailing_zeros().min(14) as usize]
}

pub(super) fn add_command(cmd: &mut u32, new: u32, others: u32, invert: bool) -> Result<()> {
    if invert {
        return Err(Error::param("unexpected '!' flag"));
    }
    if *cmd & !others != 0 {
        return Err(Error::param(format!(
            "Cannot use -{} with -{}",
            cmd2char(new),
            cmd2char(*cmd & !others)
        )));
    }
    *cmd |= new;
    Ok(())
}

/// Which commands each option is legal with (iptables' options_v_commands).
pub(super) fn allowed_commands(o: u32) -> u32 {
    let idrac = C_INSERT | C_DELETE | C_REPLACE | C_APPEND | C_CHECK;
    match o {
        O_NUMERIC | O_EXACT | O_LINENUM => C_LIST,
        O_VERBOSE => u32::MAX,
        O_COUNTERS => C_INSERT | C_REPLACE | C_APPEND | C_SET_POLICY,
        _ => idrac,
    }
}

pub(super) fn parse_rulenumber(s: &str) -> Result<usize> {
    opt::parse_uint(s, 1, i32::MAX as u64)
        .map(|v| v as usize)
        .ok_or_else(|| Error::param(format!("Invalid rule number `{s}'")))
}

/// Chain name checks of `-N` and `-E` (assert_valid_chain_name).
pub fn check_chain_name(name: &str) -> Result<()> {
    if name.len() >= MAXNAMELEN {
        return Err(Error::param(format!(
            "chain name `{name}' too long (must be under {MAXNAMELEN} chars)"
        )));
    }
    if let Some(c) = name.chars().next().filter(|c| *c == '-' || *c == '!') {
        return Err(Error::param(format!(
            "chain name not allowed to start with `{c}'"
        )));
    }
    if ext::KNOWN_TARGETS.contains(&name) {
        return Err(Error::param("chain name may not clash with target name"));
    }
    if name.chars().any(|c| c.is_ascii_whitespace()) {
        return Err(Error::param(format!("Invalid chain name `{name}'")));
    }
    Ok(())
}

pub(super) fn parse_target_name(name: &str) -> Result<&str> {
    if name.is_empty() {
        return Err(Error::param("Invalid target name (too short)"));
    }
    if name.len() >= MAXNAMELEN {
        return Err(Error::param(format!(
            "Invalid target name `{name}' ({} chars max)",
            MAXNAMELEN - 1
        )));
    }
    if name.chars().any(|c| c.is_ascii_whitespace()) {
        return Err(Error::param(format!("Invalid target name `{name}'")));
    }
    Ok(name)
}

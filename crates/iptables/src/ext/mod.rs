//! Match and target extensions: one module per extension, each defining the
//! structured value, its options, its parser and its two printers (save form
//! and `-L` form). This file holds the shared framework and the registry.
//!
//! Contract for an extension module (see `tcp.rs` for a worked example):
//! - a `pub struct` that is canonical: two values print the same iff they are
//!   equal (`Eq`/`Hash` define "same rule" for delete-by-spec);
//! - `impl Ext for ...` with its option table; generic option checks (used
//!   once, may be inverted, argument present, mandatory, exclusive, "also
//!   requires") are done by the framework with xtables' messages;
//! - printers write pieces each preceded by one space, as iptables does.

use crate::error::{Error, Result};
use ruleset::{Family, TableKind};
use std::fmt::Debug;
use std::hash::Hash;

pub mod lmap;
pub mod matches;
mod registry;
pub mod targets;
#[cfg(test)]
pub(crate) mod testutil;
pub use registry::*;

/// Which families an extension exists for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fam {
    Both,
    V4,
    V6,
}

impl Fam {
    pub fn has(self, f: Family) -> bool {
        matches!(
            (self, f),
            (Fam::Both, _) | (Fam::V4, Family::Ipv4) | (Fam::V6, Family::Ipv6)
        )
    }
}

/// Whether an option takes an argument (getopt's has_arg).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    None,
    Required,
    /// Only an attached `--opt=value` or a following word that does not start
    /// with '-' or '!' is taken (how iptables extensions read optional values).
    Optional,
}

/// One option of an extension (xtables' xt_option_entry).
#[derive(Clone, Copy, Debug)]
pub struct OptDef {
    /// Long name without the leading "--".
    pub name: &'static str,
    /// Aliases share an id; ids must be < 32. Exclusion masks use `1 << id`.
    pub id: u8,
    pub arg: Arg,
    /// May be given more than once.
    pub multi: bool,
    /// May be preceded by `!`.
    pub invert: bool,
    /// Must be given.
    pub mand: bool,
    /// Ids (bit mask) that cannot be used together with this one.
    pub excl: u32,
    /// Ids (bit mask) this one also requires.
    pub also: u32,
}

impl OptDef {
    pub const fn new(name: &'static str, id: u8, arg: Arg) -> Self {
        OptDef {
            name,
            id,
            arg,
            multi: false,
            invert: false,
            mand: false,
            excl: 0,
            also: 0,
        }
    }
    pub const fn inv(mut self) -> Self {
        self.invert = true;
        self
    }
    pub const fn multi(mut self) -> Self {
        self.multi = true;
        self
    }
    pub const fn mand(mut self) -> Self {
        self.mand = true;
        self
    }
    pub const fn excl(mut self, mask: u32) -> Self {
        self.excl = mask;
        self
    }
    pub const fn also(mut self, mask: u32) -> Self {
        self.also = mask;
        self
    }
}

/// What a parser may know about the rule being built.
#[derive(Clone, Debug)]
pub struct ParseCtx<'a> {
    pub family: Family,
    pub table: TableKind,
    /// Chain the rule goes to ("" when unknown).
    pub chain: &'a str,
    /// `-p` value so far (0 = any) and whether it is inverted. In `finish`
    /// this is the rule's final protocol.
    pub proto: u8,
    pub inv_proto: bool,
}

impl ParseCtx<'_> {
    pub fn is_v6(&self) -> bool {
        self.family == Family::Ipv6
    }
}

/// Printing context.
#[derive(Clone, Copy, Debug)]
pub struct PrintCtx {
    pub family: Family,
    /// The rule's protocol (0 = any).
    pub proto: u8,
    /// `-n`: numbers instead of names (ports, protocols, addresses).
    pub numeric: bool,
}

impl PrintCtx {
    pub fn is_v6(&self) -> bool {
        self.family == Family::Ipv6
    }
}

/// Argument words of the command line, shared by the main parser and
/// extensions that take more than one word (e.g. `--tcp-flags MASK COMP`).
#[derive(Debug)]
pub struct Cursor<'a> {
    pub words: &'a [&'a str],
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(words: &'a [&'a str]) -> Self {
        Cursor { words, pos: 0 }
    }
    pub fn peek(&self) -> Option<&'a str> {
        self.words.get(self.pos).copied()
    }
    pub fn next_word(&mut self) -> Option<&'a str> {
        let w = self.peek()?;
        self.pos += 1;
        Some(w)
    }
    /// A following word that is an argument, not an option (iptables'
    /// `xs_has_arg`: does not start with '-' or '!').
    pub fn next_plain(&mut self) -> Option<&'a str> {
        match self.peek() {
            Some(w) if !w.starts_with('-') && !w.starts_with('!') => {
                self.pos += 1;
                Some(w)
            }
            _ => None,
        }
    }
}

/// One option occurrence handed to an extension's `parse`.
pub struct Call<'a, 'c> {
    /// Extension name for messages (e.g. "tcp").
    pub ext: &'static str,
    pub opt: &'static OptDef,
    pub inv: bool,
    /// The option's argument ("" for options without one).
    pub arg: &'a str,
    /// The words after the argument, for options that take several.
    pub rest: &'c mut Cursor<'a>,
    pub ctx: &'c ParseCtx<'c>,
}

impl Call<'_, '_> {
    /// xtables' "bad value ... or out of range" message.
    pub fn bad_value(&self, lo: u64, hi: u64) -> Error {
        Error::param(format!(
            "{}: bad value for option \"--{}\", or out of range ({}-{}).\n",
            self.ext, self.opt.name, lo, hi
        ))
    }
    /// Parse the argument as an unsigned integer (base 0) in `lo..=hi`.
    pub fn uint(&self, lo: u64, hi: u64) -> Result<u64> {
        crate::opt::parse_uint(self.arg, lo, hi).ok_or_else(|| self.bad_value(lo, hi))
    }
    /// Take one more word for a multi-word option, or fail like iptables.
    pub fn extra_word(&mut self) -> Result<&str> {
        match self.rest.peek() {
            Some(w) if !w.starts_with('-') && !w.starts_with('!') => {
                self.rest.pos += 1;
                Ok(w)
            }
            _ => Err(Error::param(format!(
                "{}: option \"--{}\" requires an argument",
                self.ext, self.opt.name
            ))),
        }
    }
}

/// The interface every match and target extension implements.
pub trait Ext: Sized + Clone + PartialEq + Eq + Hash + Debug {
    /// Name after `-m`/`-j` as printed.
    const NAME: &'static str;
    /// Other names accepted on input (printed as `NAME`).
    const ALIASES: &'static [&'static str] = &[];
    const FAMILY: Fam = Fam::Both;
    /// False only while an extension is being written: the registry then
    /// treats it as unknown.
    const SUPPORTED: bool = true;
    const OPTS: &'static [OptDef];

    /// The value before any option is seen (xtables' init).
    fn new(ctx: &ParseCtx) -> Self;
    /// Apply one option. Generic checks are already done.
    fn parse(&mut self, c: &mut Call) -> Result<()>;
    /// Final check once the whole rule is read. `seen` has bit `1 << id` for
    /// each option id given. Mandatory/exclusive/also checks are already done.
    fn finish(&mut self, _seen: u32, _ctx: &ParseCtx) -> Result<()> {
        Ok(())
    }
    /// Save/`-S` form of the options, each piece preceded by a space.
    fn save(&self, ctx: &PrintCtx, out: &mut String);
    /// `-L` form, each piece preceded by a space.
    fn list(&self, ctx: &PrintCtx, out: &mut String);
}

/// Generic xtables option checks before `parse`; `seen` is the ids given so far.
pub fn precheck(ext: &str, o: &OptDef, inv: bool, seen: u32) -> Result<()> {
    let bit = 1u32 << o.id;
    if (!o.multi || o.excl & bit != 0) && seen & bit != 0 {
        return Err(Error::param(format!(
            "{}: option \"--{}\" can only be used once.\n",
            ext, o.name
        )));
    }
    if inv && !o.invert {
        return Err(Error::param(format!(
            "{}: option \"--{}\" cannot be inverted.\n",
            ext, o.name
        )));
    }
    Ok(())
}

/// Generic checks after the rule is read: mandatory, also-requires, exclusive.
pub fn postcheck(ext: &str, opts: &[OptDef], seen: u32) -> Result<()> {
    for e in opts {
        let ebit = 1u32 << e.id;
        if e.mand && seen & ebit == 0 {
            return Err(Error::param(format!(
                "{}: option \"--{}\" must be specified\n",
                ext, e.name
            )));
        }
        if seen & ebit == 0 {
            continue;
        }
        for o in opts {
            if o.id == e.id {
                continue;
            }
            let obit = 1u32 << o.id;
            if e.also & obit != 0 && seen & obit == 0 {
                return Err(Error::param(format!(
                    "{}: option \"--{}\" also requires \"--{}\".\n",
                    ext, e.name, o.name
                )));
            }
            if e.excl & obit != 0 && seen & obit != 0 {
                return Err(Error::param(format!(
                    "{}: option \"--{}\" cannot be used together with \"--{}\".\n",
                    ext, e.name, o.name
                )));
            }
        }
    }
    Ok(())
}

/// The protocol check the kernel makes for protocol matches and targets that
/// need one (legacy iptables reports it as "Invalid argument" with the detail
/// in the kernel log; we put the detail in the message).
pub fn require_proto(what: &str, ctx: &ParseCtx, protos: &[u8]) -> Result<()> {
    if protos.contains(&ctx.proto) && !ctx.inv_proto {
        return Ok(());
    }
    let want: Vec<String> = protos.iter().map(|p| p.to_string()).collect();
    Err(Error::op(format!(
        "Invalid argument: {what}: only valid for protocol {}.",
        want.join(" or ")
    )))
}

/// Print `n` as a port, by service name unless numeric.
pub fn fmt_port(out: &mut String, port: u16, proto: &str, numeric: bool) {
    use std::fmt::Write;
    match (!numeric)
        .then(|| crate::names::port_service(port, proto))
        .flatten()
    {
        Some(name) => out.push_str(name),
        None => {
            let _ = write!(out, "{port}");
        }
    }
}

/// `-L` form of a port or range: ` spt:22`, ` spts:1:2`, ` dpt:!22` (iptables'
/// print_ports for tcp/udp/sctp/dccp). Nothing for the full range uninverted.
pub fn list_ports(
    out: &mut String,
    label: &str,
    lo: u16,
    hi: u16,
    inv: bool,
    proto: &str,
    numeric: bool,
) {
    if lo == 0 && hi == 65535 && !inv {
        return;
    }
    out.push(' ');
    out.push_str(label);
    if lo == hi {
        out.push(':');
        if inv {
            out.push('!');
        }
        fmt_port(out, lo, proto, numeric);
    } else {
        out.push_str("s:");
        if inv {
            out.push('!');
        }
        fmt_port(out, lo, proto, numeric);
        out.push(':');
        fmt_port(out, hi, proto, numeric);
    }
}

/// Save form of a port or range: ` ! --dport 1:2`. Nothing for the full range
/// uninverted.
pub fn save_ports(out: &mut String, opt: &str, lo: u16, hi: u16, inv: bool) {
    use std::fmt::Write;
    if lo == 0 && hi == 65535 && !inv {
        return;
    }
    if inv {
        out.push_str(" !");
    }
    if lo == hi {
        let _ = write!(out, " --{opt} {lo}");
    } else {
        let _ = write!(out, " --{opt} {lo}:{hi}");
    }
}

/// xtables' XTTYPE_PORTRC: `port`, `lo:hi`, `lo:`, `:hi`, `:` with service
/// names from any protocol; returns (lo, hi).
pub fn parse_portrc(c: &Call) -> Result<(u16, u16)> {
    let mut range = [0u16, 65535];
    let mut n = 0usize;
    let mut prev = 0u16;
    for part in c.arg.split(':') {
        if n == 2 {
            return Err(Error::param(format!(
                "{}: Too many components for option \"--{}\" (max: 2)\n",
                c.ext, c.opt.name
            )));
        }
        if part.is_empty() {
            n += 1;
            continue;
        }
        let v = getportbyname(part).ok_or_else(|| {
            Error::param(format!("Port \"{part}\" does not resolve to anything.\n"))
        })?;
        if v < prev {
            return Err(Error::param(format!(
                "Port range {prev}-{v} is negative.\n"
            )));
        }
        prev = v;
        range[n] = v;
        n += 1;
    }
    if n == 1 {
        range[1] = range[0];
    }
    Ok((range[0], range[1]))
}

/// xtables_getportbyname: a number 0..=65535 or a service name of any protocol.
pub fn getportbyname(s: &str) -> Option<u16> {
    if let Some(v) = crate::opt::parse_uint(s, 0, 65535) {
        return Some(v as u16);
    }
    crate::names::SERVICES
        .iter()
        .find(|e| e.0 == s)
        .map(|e| e.1)
}

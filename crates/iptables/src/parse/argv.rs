//! The iptables/ip6tables command line, parsed as iptables 1.8 parses it:
//! getopt_long with unique-prefix long options, clustered short options
//! (`-nvL`, `-ptcp`), `!` before an option, options of loaded extensions
//! (newest first), implicit protocol matches, and match options after `-j`.
//!
//! Cost: O(words × options of loaded extensions); no allocation per word
//! beyond the rule being built.

use super::Parsed;
use crate::error::{Error, Result};
use crate::ext::{self, Arg, Call, Cursor, Match, OptDef, ParseCtx, TargetExt};
use crate::opt;
use crate::rule::{inv, Iface};
use ruleset::{Counters, Family, TableKind};

use super::options::*;
pub use super::options::{check_chain_name, MAXNAMELEN};

/// Options of the parse that come from how we were invoked.
#[derive(Clone, Copy, Debug)]
pub struct ParseOpts<'a> {
    pub family: Family,
    /// Inside iptables-restore input: `-w`/`-W` are errors, one `-t` only.
    pub restore: bool,
    /// Table given by the restore section (`*filter`); `None` on the command line.
    pub table: Option<TableKind>,
    pub prog: &'a str,
}

impl<'a> ParseOpts<'a> {
    /// A command line of `prog` (not restore input, no table yet).
    pub fn command(family: Family, prog: &'a str) -> Self {
        ParseOpts {
            family,
            restore: false,
            table: None,
            prog,
        }
    }
}

/// A loaded extension during parsing: the value plus the option ids seen.
pub(super) struct Loaded<T> {
    pub(super) ext: T,
    pub(super) seen: u32,
}

/// What an option word resolved to.
pub(super) enum Resolved {
    Main(Main, Arg),
    /// Match at index, option def.
    Match(usize, &'static OptDef),
    Target(&'static OptDef),
    /// No option of that name is loaded.
    Unknown,
}

pub(super) struct State<'a> {
    pub(super) o: ParseOpts<'a>,
    pub(super) cmd: u32,
    pub(super) options: u32,
    pub(super) invflags: u8,
    pub(super) chain: Option<&'a str>,
    pub(super) newname: Option<&'a str>,
    pub(super) policy: Option<&'a str>,
    pub(super) rulenum: Option<usize>,
    pub(super) table: Option<&'a str>,
    pub(super) src: Option<&'a str>,
    pub(super) dst: Option<&'a str>,
    pub(super) iniface: Iface,
    pub(super) outiface: Iface,
    pub(super) proto: u8,
    pub(super) proto_str: Option<String>,
    pub(super) proto_used: bool,
    pub(super) frag: bool,
    pub(super) matches: Vec<Loaded<Match>>,
    /// Load order of extensions for option lookup: `Some(i)` = match i, `None` = target.
    pub(super) load_order: Vec<Option<usize>>,
    pub(super) target: Option<Loaded<TargetExt>>,
    pub(super) jumpto: Option<&'a str>,
    pub(super) goto: bool,
    pub(super) counters: Option<Counters>,
    pub(super) verbose: u32,
    pub(super) wait: Option<Option<u32>>,
    pub(super) help: bool,
    pub(super) version: bool,
    pub(super) warnings: Vec<String>,
}

/// Parse one command line (without the program name).
pub fn parse(words: &[&str], o: ParseOpts) -> Result<Parsed> {
    let mut st = State {
        o,
        cmd: 0,
        options: 0,
        invflags: 0,
        chain: None,
        newname: None,
        policy: None,
        rulenum: None,
        table: None,
        src: None,
        dst: None,
        iniface: Iface::default(),
        outiface: Iface::default(),
        proto: 0,
        proto_str: None,
        proto_used: false,
        frag: false,
        matches: Vec::new(),
        load_order: Vec::new(),
        target: None,
        jumpto: None,
        goto: false,
        counters: None,
        verbose: 0,
        wait: None,
        help: false,
        version: false,
        warnings: Vec::new(),
    };
    st.run(words)?;
    st.finish()
}

impl<'a> State<'a> {
    pub(super) fn table_kind(&self) -> TableKind {
        self.o
            .table
            .or_else(|| self.table.and_then(TableKind::from_name))
            .unwrap_or(TableKind::Filter)
    }

    pub(super) fn ctx(&self) -> ParseCtx<'a> {
        ParseCtx {
            family: self.o.family,
            table: self.table_kind(),
            chain: self.chain.unwrap_or(""),
            proto: self.proto,
            inv_proto: self.invflags & inv::PROTO != 0,
        }
    }

    /// Look a long option name up as getopt_long does over the merged table:
    /// main options, then extensions newest first; an exact name wins, else a
    /// prefix shared by entries of one meaning only (else it is ambiguous,
    /// which iptables reports as an unknown option).
    fn resolve_long(&self, name: &str) -> Resolved {
        for (n, arg, m) in MAIN_LONG {
            if *n == name {
                return Resolved::Main(*m, *arg);
            }
        }
        let ext_opts = |slot: &Option<usize>| -> &'static [OptDef] {
            match slot {
                Some(i) => self.matches[*i].ext.opts(),
                None => self.target.as_ref().map(|t| t.ext.opts()).unwrap_or(&[]),
            }
        };
        let wrap = |slot: &Option<usize>, od: &'static OptDef| match slot {
            Some(i) => Resolved::Match(*i, od),
            None => Resolved::Target(od),
        };
        for slot in self.load_order.iter().rev() {
            if let Some(od) = ext_opts(slot).iter().find(|od| od.name == name) {
                return wrap(slot, od);
            }
        }
        // Prefix: the meaning of an entry is (main id) or (extension slot, option id).
        #[derive(PartialEq)]
        enum Key {
            Main(Main),
            Ext(Option<usize>, u8),
        }
        let mut found: Option<(Key, Resolved)> = None;
        for (n, arg, m) in MAIN_LONG {
            if n.starts_with(name) {
                match &found {
                    None => found = Some((Key::Main(*m), Resolved::Main(*m, *arg))),
                    Some((k, _)) if *k == Key::Main(*m) => {}
                    Some(_) => return Resolved::Unknown,
                }
            }
        }
        for slot in self.load_order.iter().rev() {
            for od in ext_opts(slot) {
                if od.name.starts_with(name) {
                    let key = Key::Ext(*slot, od.id);
                    match &found {
                        None => found = Some((key, wrap(slot, od))),
                        Some((k, _)) if *k == key => {}
                        Some(_) => return Resolved::Unknown,
                    }
                }
            }
        }
        found.map(|f| f.1).unwrap_or(Resolved::Unknown)
    }

    fn run(&mut self, words: &'a [&'a str]) -> Result<()> {
        let mut cur = Cursor::new(words);
        let mut invert = false;
        while let Some(w) = cur.next_word() {
            if w == "!" {
                if invert {
                    return Err(Error::param("multiple consecutive ! not allowed"));
                }
                invert = true;
                continue;
            }
            if let Some(long) = w.strip_prefix("--") {
                if long.is_empty() {
                    // "--" ends options in getopt; iptables then sees the
                    // rest as non-option words.
                    if let Some(next) = cur.next_word() {
                        return Err(Error::bare(format!("Bad argument `{next}'")));
                    }
                    break;
                }
                let (name, attached) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (long, None),
                };
                self.long_option(w, name, attached, invert, &mut cur)?;
                invert = false;
                continue;
            }
            if w.len() > 1 && w.starts_with('-') {
                // Clustered short options.
                let body = &w[1..];
                let mut idx = 0;
                while idx < body.len() {
                    let c = body[idx..].chars().next().unwrap_or('?');
                    idx += c.len_utf8();
                    let Some((arg, m)) = short_opt(c) else {
                        // Extensions have no short options: try the implicit
                        // protocol match, then fail like getopt's '?'.
                        if self.load_proto()? {
                            cur.pos -= 1;
                            break;
                        }
                        return Err(Error::param(format!("unknown option \"-{c}\"")));
                    };
                    let value: Option<&'a str> = match arg {
                        Arg::None => None,
                        Arg::Required => {
                            if idx < body.len() {
                                let v = &body[idx..];
                                idx = body.len();
                                Some(v)
                            } else {
                                match cur.next_word() {
                                    Some(v) => Some(v),
                                    None => {
                                        return Err(Error::param(format!(
                                            "option \"{w}\" requires an argument"
                                        )))
                                    }
                                }
                            }
                        }
                        Arg::Optional => {
                            if idx < body.len() {
                                let v = &body[idx..];
                                idx = body.len();
                                Some(v)
                            } else {
                                None
                            }
                        }
                    };
                    self.main_option(m, value, invert, &mut cur)?;
                    invert = false;
                }
                continue;
            }
            return Err(Error::bare(format!("Bad argument `{w}'")));
        }
        if invert {
            return Err(Error::param("nothing appropriate following !"));
        }
        Ok(())
    }

    fn long_option(
        &mut self,
        word: &'a str,
        name: &'a str,
        attached: Option<&'a str>,
        invert: bool,
        cur: &mut Cursor<'a>,
    ) -> Result<()> {
        loop {
            match self.resolve_long(name) {
                Resolved::Main(m, arg) => {
                    let value = match arg {
                        Arg::None => {
                            if attached.is_some() {
                                return Err(Error::param(format!("unknown option \"{word}\"")));
                            }
                            None
                        }
                        Arg::Required => match attached.or_else(|| cur.next_word()) {
                            Some(v) => Some(v),
                            None => {
                                return Err(Error::param(format!(
                                    "option \"{word}\" requires an argument"
                                )))
                            }
                        },
                        Arg::Optional => attached,
                    };
                    return self.main_option(m, value, invert, cur);
                }
                Resolved::Match(i, od) => {
                    let value = self.ext_value(word, od, attached, cur)?;
                    return self.match_option(i, od, value, invert, cur);
                }
                Resolved::Target(od) => {
                    let value = self.ext_value(word, od, attached, cur)?;
                    return self.target_option(od, value, invert, cur);
                }
                Resolved::Unknown => {
                    if self.load_proto()? {
                        continue;
                    }
                    return Err(Error::param(format!("unknown option \"{word}\"")));
                }
            }
        }
    }

    fn ext_value(
        &self,
        word: &str,
        od: &OptDef,
        attached: Option<&'a str>,
        cur: &mut Cursor<'a>,
    ) -> Result<&'a str> {
        Ok(match od.arg {
            Arg::None => {
                if attached.is_some() {
                    return Err(Error::param(format!("unknown option \"{word}\"")));
                }
                ""
            }
            Arg::Required => match attached.or_else(|| cur.next_word()) {
                Some(v) => v,
                None => {
                    return Err(Error::param(format!(
                        "option \"{word}\" requires an argument"
                    )))
                }
            },
            Arg::Optional => attached.or_else(|| cur.next_plain()).unwrap_or(""),
        })
    }

    fn match_option(
        &mut self,
        i: usize,
        od: &'static OptDef,
        value: &'a str,
        invert: bool,
        cur: &mut Cursor<'a>,
    ) -> Result<()> {
        let ctx = self.ctx();
        let l = &mut self.matches[i];
        let name = l.ext.name();
        ext::precheck(name, od, invert, l.seen)?;
        l.seen |= 1 << od.id;
        let mut call = Call {
            ext: name,
            opt: od,
            inv: invert,
            arg: value,
            rest: cur,
            ctx: &ctx,
        };
        l.ext.parse(&mut call)
    }

    fn target_option(
        &mut self,
        od: &'static OptDef,
        value: &'a str,
        invert: bool,
        cur: &mut Cursor<'a>,
    ) -> Result<()> {
        let ctx = self.ctx();
        let Some(l) = self.target.as_mut() else {
            return Ok(());
        };
        let name = l.ext.name();
        ext::precheck(name, od, invert, l.seen)?;
        l.seen |= 1 << od.id;
        let mut call = Call {
            ext: name,
            opt: od,
            inv: invert,
            arg: value,
            rest: cur,
            ctx: &ctx,
        };
        l.ext.parse(&mut call)
    }

    /// Implicit protocol match (`-p tcp --dport 22`): load it once.
    fn load_proto(&mut self) -> Result<bool> {
        let Some(p) = self.proto_str.clone() else {
            return Ok(false);
        };
        if self.proto_used {
            return Ok(false);
        }
        self.proto_used = true;
        let name: String = match opt::parse_uint(&p, 0, 255) {
            Some(n) => match opt::proto_name(n as u8, self.options & O_NUMERIC != 0) {
                Some(s) => s.to_string(),
                None => return Ok(false),
            },
            None => p,
        };
        let ctx = self.ctx();
        match ext::new_match(&name, &ctx) {
            Some(m) => {
                self.matches.push(Loaded { ext: m, seen: 0 });
                self.load_order.push(Some(self.matches.len() - 1));
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn set_option(&mut self, o: u32, invert: bool) -> Result<()> {
        if self.options & o != 0 {
            return Err(Error::param(format!(
                "multiple {} options not allowed",
                option_name(o)
            )));
        }
        self.options |= o;
        if invert {
            match option_invert(o) {
                Some(bit) => self.invflags |= bit,
                None => {
                    return Err(Error::param(format!(
                        "cannot have ! before {}",
                        option_name(o)
                    )))
                }
            }
        }
        Ok(())
    }

    fn main_option(
        &mut self,
        m: Main,
        value: Option<&'a str>,
        invert: bool,
        cur: &mut Cursor<'a>,
    ) -> Result<()> {
        let v = value.unwrap_or("");
        match m {
            Main::Append => {
                add_command(&mut self.cmd, C_APPEND, 0, invert)?;
                self.chain = Some(v);
            }
            Main::Check => {
                add_command(&mut self.cmd, C_CHECK, 0, invert)?;
                self.chain = Some(v);
            }
            Main::Delete => {
                add_command(&mut self.cmd, C_DELETE, 0, invert)?;
                self.chain = Some(v);
                if let Some(n) = cur.next_plain() {
                    if n.contains(':') {
                        return Err(Error::param("Rule ranges are not supported"));
                    }
                    self.rulenum = Some(parse_rule_number_strtol(n)?);
                    self.cmd = C_DELETE_NUM;
                }
            }
            Main::Replace => {
                add_command(&mut self.cmd, C_REPLACE, 0, invert)?;
                self.chain = Some(v);
                match cur.next_plain() {
                    Some(n) => self.rulenum = Some(parse_rulenumber(n)?),
                    None => return Err(Error::param("-R requires a rule number")),
                }
            }
            Main::Insert => {
                add_command(&mut self.cmd, C_INSERT, 0, invert)?;
                self.chain = Some(v);
                self.rulenum = Some(match cur.next_plain() {
                    Some(n) => parse_rulenumber(n)?,
                    None => 1,
                });
            }
            Main::List | Main::ListRules => {
                let c = if m == Main::List {
                    C_LIST
                } else {
                    C_LIST_RULES
                };
                add_command(&mut self.cmd, c, C_ZERO | C_ZERO_NUM, invert)?;
                // Without an argument the chain `-Z CHAIN` named stays.
                let chain = value.or_else(|| cur.next_plain());
                if chain.is_some() {
                    self.chain = chain;
                }
                if let Some(n) = cur.next_plain() {
                    self.rulenum = Some(parse_rulenumber(n)?);
                }
            }
            Main::Flush => {
                add_command(&mut self.cmd, C_FLUSH, 0, invert)?;
                self.chain = value.or_else(|| cur.next_plain());
            }
            Main::Zero => {
                add_command(&mut self.cmd, C_ZERO, C_LIST | C_LIST_RULES, invert)?;
                let chain = value.or_else(|| cur.next_plain());
                if chain.is_some() {
                    self.chain = chain;
                }
                if let Some(n) = cur.next_plain() {
                    self.rulenum = Some(parse_rulenumber(n)?);
                    // As iptables: a rule number makes the command zero
                    // that rule only, dropping a -L/-S given before it.
                    self.cmd = C_ZERO_NUM;
                }
            }
            Main::NewChain => {
                check_chain_name(v)?;
                add_command(&mut self.cmd, C_NEW_CHAIN, 0, invert)?;
                self.chain = Some(v);
            }
            Main::DeleteChain => {
                add_command(&mut self.cmd, C_DELETE_CHAIN, 0, invert)?;
                self.chain = value.or_else(|| cur.next_plain());
            }
            Main::Rename => {
                add_command(&mut self.cmd, C_RENAME, 0, invert)?;
                self.chain = Some(v);
                match cur.next_plain() {
                    Some(n) => self.newname = Some(n),
                    None => {
                        return Err(Error::param(
                            "-E requires old-chain-name and new-chain-name",
                        ))
                    }
                }
                check_chain_name(self.newname.unwrap_or(""))?;
            }
            Main::Policy => {
                add_command(&mut self.cmd, C_SET_POLICY, 0, invert)?;
                match cur.next_plain() {
                    Some(p) => {
                        self.chain = Some(v);
                        self.policy = Some(p);
                    }
                    None => return Err(Error::param("-P requires a chain and a policy")),
                }
            }
            Main::Help => self.help = true,
            Main::Version => {
                self.version = true;
            }
            Main::Proto => {
                self.set_option(O_PROTO, invert)?;
                let lower = v.to_ascii_lowercase();
                self.proto = opt::parse_protocol(&lower)?;
                if self.proto == 0 && invert {
                    return Err(Error::param("rule would never match protocol"));
                }
                if self.o.family == Family::Ipv6
                    && matches!(self.proto, 43 | 44 | 51 | 60)
                    && !invert
                {
                    self.warnings.push(format!(
                        "Warning: never matched protocol: {lower}. use extension match instead."
                    ));
                }
                self.proto_str = Some(lower);
            }
            Main::Source => {
                self.set_option(O_SOURCE, invert)?;
                self.src = Some(v);
            }
            Main::Dest => {
                self.set_option(O_DEST, invert)?;
                self.dst = Some(v);
            }
            Main::InIface | Main::OutIface => {
                if v.is_empty() {
                    return Err(Error::param("Empty interface is likely to be undesired"));
                }
                let (bit, slot) = if m == Main::InIface {
                    (O_IN, &mut self.iniface)
                } else {
                    (O_OUT, &mut self.outiface)
                };
                *slot = Iface::new(v).ok_or_else(|| {
                    Error::param(format!(
                        "interface name `{v}' must be shorter than 16 characters"
                    ))
                })?;
                if v.contains('/') || v.contains(' ') {
                    self.warnings.push(format!("Warning: weird character in interface `{v}' ('/' and ' ' are not allowed by the kernel)."));
                }
                self.set_option(bit, invert)?;
            }
            Main::Goto => {
                self.set_option(O_JUMP, invert)?;
                self.goto = true;
                self.jumpto = Some(parse_target_name(v)?);
            }
            Main::Jump => {
                self.set_option(O_JUMP, invert)?;
                if v != "CONTINUE" {
                    let name = parse_target_name(v)?;
                    self.jumpto = Some(name);
                    let ctx = self.ctx();
                    if let Some(t) = ext::new_target(name, &ctx) {
                        self.target = Some(Loaded { ext: t, seen: 0 });
                        self.load_order.push(None);
                    }
                }
            }
            Main::Frag => {
                if self.o.family == Family::Ipv6 {
                    return Err(Error::param(
                        "`-f' is not supported in IPv6, use -m frag instead",
                    ));
                }
                self.set_option(O_FRAG, invert)?;
                self.frag = true;
            }
            Main::Verbose => {
                if self.verbose == 0 {
                    self.set_option(O_VERBOSE, invert)?;
                }
                self.verbose += 1;
            }
            Main::Match => {
                if invert {
                    return Err(Error::param("unexpected ! flag before --match"));
                }
                if v.len() >= MAXNAMELEN {
                    return Err(Error::param(format!(
                        "Invalid match name \"{v}\" ({} chars max)",
                        MAXNAMELEN - 1
                    )));
                }
                let ctx = self.ctx();
                let m = ext::new_match(v, &ctx).ok_or_else(|| {
                    Error::param(format!(
                        "Couldn't load match `{v}':No such file or directory\n"
                    ))
                })?;
                self.matches.push(Loaded { ext: m, seen: 0 });
                let idx = self.matches.len() - 1;
                // A second instance of the same extension takes the options
                // from here on: drop the older one from the lookup order.
                let name = self.matches[idx].ext.name();
                let matches = &self.matches;
                self.load_order
                    .retain(|s| !matches!(s, Some(i) if matches[*i].ext.name() == name));
                self.load_order.push(Some(idx));
            }
            Main::Numeric => self.set_option(O_NUMERIC, invert)?,
            Main::Table => {
                if invert {
                    return Err(Error::param("unexpected ! flag before --table"));
                }
                if self.o.restore && (self.table.is_some() || self.o.table.is_some()) {
                    return Err(Error::param(format!(
                        "The -t option cannot be used in {}.\n",
                        self.o.prog
                    )));
                }
                self.table = Some(v);
            }
            Main::Exact => self.set_option(O_EXACT, invert)?,
            Main::Wait => {
                if self.o.restore {
                    return Err(Error::param("You cannot use `-w' from iptables-restore"));
                }
                let w = value.or_else(|| cur.next_plain());
                self.wait = Some(match w {
                    Some(w) => match parse_c_int(w) {
                        Some(n) => Some(u32::try_from(n).unwrap_or(0)),
                        None => return Err(Error::param("wait seconds not numeric")),
                    },
                    None => None,
                });
            }
            Main::WaitInterval => {
                if self.o.restore {
                    return Err(Error::param("You cannot use `-W' from iptables-restore"));
                }
                let w = value
                    .or_else(|| cur.next_plain())
                    .ok_or_else(|| Error::param("wait interval value required"))?;
                match leading_uint(w) {
                    Some(usec) if usec > 999_999 => {
                        return Err(Error::param(format!(
                            "too long usec wait {usec} > 999999 usec"
                        )))
                    }
                    Some(_) => self
                        .warnings
                        .push("Ignoring deprecated --wait-interval option.".into()),
                    None => return Err(Error::param("wait interval not numeric")),
                }
            }
            Main::LineNumbers => self.set_option(O_LINENUM, invert)?,
            Main::Modprobe => {}
            Main::Counters => {
                self.set_option(O_COUNTERS, invert)?;
                let (p, b) = match v.split_once(',') {
                    Some((p, b)) => (p, Some(b)),
                    None => (v, None),
                };
                let b = match b {
                    Some(b) => b,
                    None => cur.next_plain().ok_or_else(|| {
                        Error::param("--set-counters requires packet and byte counter")
                    })?,
                };
                let pk = leading_u64(p)
                    .ok_or_else(|| Error::param("--set-counters packet counter not numeric"))?;
                let by = leading_u64(b)
                    .ok_or_else(|| Error::param("--set-counters byte counter not numeric"))?;
                self.counters = Some(Counters {
                    packets: pk,
                    bytes: by,
                });
            }
            Main::Ipv4 => {
                if self.o.family != Family::Ipv4 {
                    return Err(Error::tryhelp());
                }
            }
            Main::Ipv6 => {
                if self.o.family != Family::Ipv6 {
                    return Err(Error::tryhelp());
                }
            }
        }
        Ok(())
    }
}

/// `strtol(s, &end, 10)` with a full match, non-zero (iptables' rule range
/// parser used by `-D chain N`).
fn parse_rule_number_strtol(s: &str) -> Result<usize> {
    match s.parse::<i64>() {
        Ok(n) if n != 0 => Ok(n.max(0) as usize),
        _ => Err(Error::param(format!("Invalid rule number `{s}'"))),
    }
}

/// `sscanf("%i")`: a leading C integer in any base.
fn parse_c_int(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (v, _) = opt::strtoul(t, 0)?;
    Some(if neg { -(v as i64) } else { v as i64 })
}

/// `sscanf("%u")`: leading decimal digits.
fn leading_uint(s: &str) -> Option<u64> {
    leading_u64(s)
}

/// `sscanf("%llu")`: leading decimal digits (after white space).
fn leading_u64(s: &str) -> Option<u64> {
    let t = s.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if end == 0 {
        return None;
    }
    t[..end].parse().ok()
}

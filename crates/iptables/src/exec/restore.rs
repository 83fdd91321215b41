//! iptables-restore semantics over the model: all or nothing for the whole
//! input (stricter than iptables, which commits table by table), tables
//! replaced wholesale unless `--noflush`, errors tied to their input line.
//!
//! Cost: O(lines) plus, with `--noflush`, O(1) undo bookkeeping per change;
//! without `--noflush` each restored table is built fresh and swapped in.

use super::execute_owned;
use crate::error::{Error, ExitKind, Style};
use crate::parse::restore::words as split_words;
use crate::parse::{argv, parse, Command, ParseOpts, Parsed};
use crate::rule::Rule;
use ruleset::{Counters, Family, Policy, Ruleset, Table, TableKind};

/// Options of iptables-restore.
#[derive(Clone, Copy, Debug)]
pub struct RestoreOpts<'a> {
    pub family: Family,
    /// `-n`: apply lines to the existing tables instead of replacing them.
    pub noflush: bool,
    /// `-c`: use `[pkts:bytes]` counters from the input.
    pub counters: bool,
    /// `-t`: parse and check only, change nothing.
    pub test: bool,
    /// `-T name`: only this table's sections.
    pub table: Option<TableKind>,
    /// Program name for messages ("iptables-restore").
    pub prog: &'a str,
}

impl<'a> RestoreOpts<'a> {
    /// A plain restore of every table (no --noflush, --counters, --test
    /// or --table) by program `prog`.
    pub fn new(family: Family, prog: &'a str) -> Self {
        RestoreOpts {
            family,
            noflush: false,
            counters: false,
            test: false,
            table: None,
            prog,
        }
    }
}

/// A restore failure tied to its input line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoreError {
    pub line: usize,
    pub err: Error,
}

impl RestoreError {
    pub fn exit_code(&self) -> i32 {
        self.err.exit_code()
    }

    /// Text for stderr, as iptables-restore prints it.
    pub fn render(&self, prog: &str) -> String {
        match (self.err.kind, self.err.style) {
            (_, Style::Plain) if self.err.msg.is_empty() => {
                format!("{prog}: line {} failed\n", self.line)
            }
            (_, Style::Plain) => format!("{prog}: line {} failed: {}\n", self.line, self.err.msg),
            (ExitKind::Parameter, _) => self.err.render(prog, Some(self.line)),
            _ => self.err.render(prog, None),
        }
    }
}

/// What a restore did, for reporting.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestoreStats {
    pub lines: usize,
    pub rules: usize,
    pub tables: usize,
    /// Parser warnings (iptables prints them on stderr), in input order.
    pub warnings: Vec<String>,
}

enum Work {
    /// Built from scratch, swapped in at the end.
    Fresh(Box<Table<Rule>>),
    /// The live table with an open model transaction.
    Live,
}

/// Where restore's changes go besides the model. [`ModelOnly`] changes the
/// model alone; the kernel backend also turns each command into kernel
/// messages. Every change of a restore goes through `apply`, including the
/// chain lines (as `-P`, `-F chain` or `-N` commands).
pub trait Apply {
    /// `*table` without `--noflush` at input line `line`: the table starts
    /// empty. Called before any line of that section.
    fn fresh_table(&mut self, _kind: TableKind, _line: usize) -> Result<(), Error> {
        Ok(())
    }
    /// Apply one command of input line `line` to the model table `t` (and
    /// wherever else).
    fn apply(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        line: usize,
    ) -> Result<(), Error>;
    /// What the implementation knows of a line `-A chain text` of table
    /// `kind` (model `t`; `counters` as the line gives them; input line
    /// `line`) without parsing it — see [`Known`].
    fn known_rule(
        &mut self,
        _kind: TableKind,
        _t: &mut Table<Rule>,
        _chain: &str,
        _text: &str,
        _counters: Option<Counters>,
        _line: usize,
    ) -> Known {
        Known::Unknown
    }
}

/// An [`Apply`]'s answer for a line `-A chain text` (`R`: what a known
/// line becomes).
pub enum Known<R = Rule> {
    /// Nothing: the line is parsed and applied.
    Unknown,
    /// The rule the line parses to (a rule the implementation read whose
    /// canonical text is exactly `text`): applied without parsing.
    Rule(R),
    /// The implementation took the line whole (it re-adds, in place, a
    /// rule the model already holds there): nothing left to do.
    Kept,
}

/// Restore into the model only.
pub struct ModelOnly;

impl Apply for ModelOnly {
    fn apply(
        &mut self,
        _kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        _line: usize,
    ) -> Result<(), Error> {
        execute_owned(t, p, &mut String::new())
    }
}

/// Apply restore input to `rs`. On any error nothing changes.
pub fn restore(
    rs: &mut Ruleset<Rule>,
    input: &str,
    o: &RestoreOpts,
) -> Result<RestoreStats, RestoreError> {
    restore_with(rs, input, o, &mut ModelOnly)
}

/// [`restore`] with every change also handed to `ap`.
pub fn restore_with(
    rs: &mut Ruleset<Rule>,
    input: &str,
    o: &RestoreOpts,
    ap: &mut dyn Apply,
) -> Result<RestoreStats, RestoreError> {
    let (stats, rev) = restore_open(rs, input, o, ap)?;
    rev.keep(rs);
    Ok(stats)
}

/// How to undo or keep a restore applied by [`restore_open`]: the tables
/// it replaced, and the tables whose model transactions it left open.
#[derive(Default)]
#[must_use = "a restore's model change must be kept or undone"]
pub struct Reverse {
    replaced: Vec<Table<Rule>>,
    open: Vec<(Family, TableKind)>,
}

impl Reverse {
    /// Keep the change (commit the open transactions). O(tables).
    pub fn keep(self, rs: &mut Ruleset<Rule>) {
        for (f, k) in self.open {
            rs.table_mut(f, k).commit();
        }
    }

    /// Undo the change: the open transactions are rolled back and the
    /// replaced tables put back. O(changes of the open transactions).
    pub fn undo(self, rs: &mut Ruleset<Rule>) {
        for (f, k) in self.open {
            rs.table_mut(f, k).rollback();
        }
        for t in self.replaced {
            rs.replace_table(t);
        }
    }
}

/// [`restore_with`] whose model change can still be undone: on success the
/// model holds the new state, and the returned [`Reverse`] either keeps it
/// or puts the old one back (for a caller that commits the same change to
/// the kernel and keeps the model only if the kernel took it). With
/// `--test` nothing changes and the [`Reverse`] is empty. On error nothing
/// changes.
pub fn restore_open(
    rs: &mut Ruleset<Rule>,
    input: &str,
    o: &RestoreOpts,
    ap: &mut dyn Apply,
) -> Result<(RestoreStats, Reverse), RestoreError> {
    // Upper bound of the rules to come, so fresh tables grow once: counting
    // newlines is a vectorised pass, far cheaper than repeated rehashing.
    let lines = input.as_bytes().iter().filter(|&&b| b == b'\n').count() + 1;
    let mut r = Restorer {
        rs,
        ap,
        o: *o,
        work: Vec::new(),
        stats: RestoreStats::default(),
        reserve: lines,
    };
    let res = r.run(input);
    match res {
        Ok(()) if !o.test => {
            let rev = r.commit();
            Ok((std::mem::take(&mut r.stats), rev))
        }
        Ok(()) => {
            r.abort();
            Ok((std::mem::take(&mut r.stats), Reverse::default()))
        }
        Err(e) => {
            r.abort();
            Err(e)
        }
    }
}

struct Restorer<'r> {
    rs: &'r mut Ruleset<Rule>,
    ap: &'r mut dyn Apply,
    o: RestoreOpts<'r>,
    work: Vec<(TableKind, Work)>,
    stats: RestoreStats,
    /// Rules to reserve room for in the next fresh table.
    reserve: usize,
}

/// The working table of `kind`: the fresh one, or the live one (opening its
/// model transaction on first use). A free function so callers can borrow
/// the applier at the same time.
fn table_in<'a>(
    rs: &'a mut Ruleset<Rule>,
    work: &'a mut Vec<(TableKind, Work)>,
    family: ruleset::Family,
    kind: TableKind,
) -> &'a mut Table<Rule> {
    match work.iter().position(|(k, _)| *k == kind) {
        Some(i) => match &mut work[i].1 {
            Work::Fresh(t) => t,
            Work::Live => rs.table_mut(family, kind),
        },
        None => {
            rs.table_mut(family, kind).begin();
            work.push((kind, Work::Live));
            rs.table_mut(family, kind)
        }
    }
}

fn err(line: usize, e: Error) -> RestoreError {
    RestoreError { line, err: e }
}

impl<'r> Restorer<'r> {
    fn table_mut(&mut self, kind: TableKind) -> &mut Table<Rule> {
        table_in(self.rs, &mut self.work, self.o.family, kind)
    }

    /// `*table` without --noflush: start the table afresh.
    fn start_fresh(&mut self, kind: TableKind) {
        let mut fresh = Table::new(self.o.family, kind);
        fresh.reserve(std::mem::take(&mut self.reserve));
        match self.work.iter().position(|(k, _)| *k == kind) {
            Some(i) => {
                if let Work::Live = self.work[i].1 {
                    self.rs.table_mut(self.o.family, kind).rollback();
                }
                self.work[i].1 = Work::Fresh(Box::new(fresh));
            }
            None => self.work.push((kind, Work::Fresh(Box::new(fresh)))),
        }
    }

    /// Swap the fresh tables in; live tables keep their transactions open
    /// for the [`Reverse`].
    fn commit(&mut self) -> Reverse {
        let mut rev = Reverse::default();
        for (kind, w) in std::mem::take(&mut self.work) {
            match w {
                Work::Fresh(t) => rev.replaced.push(self.rs.replace_table(*t)),
                Work::Live => rev.open.push((self.o.family, kind)),
            }
        }
        rev
    }

    fn abort(&mut self) {
        for (kind, w) in std::mem::take(&mut self.work) {
            if let Work::Live = w {
                self.rs.table_mut(self.o.family, kind).rollback();
            }
        }
    }

    fn run(&mut self, input: &str) -> Result<(), RestoreError> {
        let mut words: Vec<&str> = Vec::with_capacity(32);
        let mut current: Option<TableKind> = None;
        // A section of a table excluded by `-T` is skipped line by line.
        let mut skipping = false;
        let mut lineno = 0usize;
        for raw in input.split_inclusive('\n') {
            lineno += 1;
            let line = raw.strip_suffix('\n').unwrap_or(raw);
            let line = line.strip_suffix('\r').unwrap_or(line);
            // iptables reads lines as C strings: a NUL byte ends the line.
            let line = line.split('\0').next().unwrap_or_default();
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            if current.is_some() && line == "COMMIT" {
                current = None;
                continue;
            }
            if let Some(rest) = line.strip_prefix('*') {
                if current.is_some() {
                    return Err(err(
                        lineno,
                        Error::bare(format!(
                            "Bad argument `{}'",
                            line.split_ascii_whitespace().next().unwrap_or(line)
                        )),
                    ));
                }
                let name = rest.split_ascii_whitespace().next().ok_or_else(|| {
                    err(
                        lineno,
                        Error::param(format!("{}: line {lineno} table name invalid", self.o.prog)),
                    )
                })?;
                let kind = TableKind::from_name(name).ok_or_else(|| {
                    err(
                        lineno,
                        Error::param(format!(
                            "{}: line {lineno} table name '{name}' invalid",
                            self.o.prog
                        )),
                    )
                })?;
                if self.o.table.is_some_and(|t| t != kind) {
                    skipping = true;
                    continue;
                }
                skipping = false;
                self.stats.tables += 1;
                if !self.o.noflush {
                    self.start_fresh(kind);
                    self.ap
                        .fresh_table(kind, lineno)
                        .map_err(|e| err(lineno, e))?;
                } else {
                    self.table_mut(kind);
                }
                current = Some(kind);
                continue;
            }
            if skipping {
                continue;
            }
            let Some(kind) = current else {
                return Err(err(lineno, Error::op("")));
            };
            if let Some(rest) = line.strip_prefix(':') {
                self.chain_line(kind, rest, lineno)?;
                continue;
            }
            self.rule_line(kind, line, lineno, &mut words)?;
        }
        self.stats.lines = lineno;
        if current.is_some() {
            return Err(err(
                lineno + 1,
                Error {
                    kind: ExitKind::Other,
                    style: Style::Bare,
                    msg: format!("{}: COMMIT expected at line {}", self.o.prog, lineno + 1),
                },
            ));
        }
        Ok(())
    }

    fn chain_line(
        &mut self,
        kind: TableKind,
        rest: &str,
        lineno: usize,
    ) -> Result<(), RestoreError> {
        let prog = self.o.prog;
        let mut it = rest.split_ascii_whitespace();
        let chain = it.next().ok_or_else(|| {
            err(
                lineno,
                Error::param(format!("{prog}: line {lineno} chain name invalid")),
            )
        })?;
        argv::check_chain_name(chain).or_else(|e| {
            // Built-in chain names are fine here even where they'd clash.
            if kind.builtin_chains().contains(&chain) {
                Ok(())
            } else {
                Err(err(lineno, e))
            }
        })?;
        let policy = it.next().ok_or_else(|| {
            err(
                lineno,
                Error::param(format!("{prog}: line {lineno} policy invalid")),
            )
        })?;
        let counters_on = self.o.counters;
        let t = self.table_mut(kind);
        let command = if t.is_builtin(chain) {
            let ctrs = it.next();
            let parsed = ctrs.map(parse_bracket_counters);
            if (ctrs.is_none() && counters_on) || matches!(parsed, Some(None)) {
                return Err(err(
                    lineno,
                    Error::param(format!("invalid policy counters for chain '{chain}'")),
                ));
            }
            let p = match policy {
                "ACCEPT" => Policy::Accept,
                "DROP" => Policy::Drop,
                _ => {
                    return Err(err(
                        lineno,
                        Error::other(format!(
                        "Can't set policy `{policy}' on `{chain}' line {lineno}: Invalid argument"
                    )),
                    ))
                }
            };
            // Without --counters the policy counters restart from zero.
            let c = if counters_on { parsed.flatten() } else { None };
            Command::Policy(chain.into(), p, c.unwrap_or_default())
        } else if t.chain(chain).is_some() {
            // An existing user chain is flushed (restore --noflush semantics).
            Command::Flush(Some(chain.into()))
        } else {
            Command::NewChain(chain.into())
        };
        let p = Parsed {
            command,
            table: kind,
            rules: Vec::new(),
            counters: None,
            flags: Default::default(),
            warnings: Vec::new(),
        };
        let t = table_in(self.rs, &mut self.work, self.o.family, kind);
        self.ap
            .apply(kind, t, p, lineno)
            .map_err(|e| err(lineno, e))
    }

    fn rule_line<'a>(
        &mut self,
        kind: TableKind,
        line: &'a str,
        lineno: usize,
        words: &mut Vec<&'a str>,
    ) -> Result<(), RestoreError> {
        let mut body = line;
        let mut counters: Option<Counters> = None;
        if line.starts_with('[') {
            let close = line
                .find(']')
                .ok_or_else(|| err(lineno, Error::param(format!("Bad line {lineno}: need ]"))))?;
            let inner = &line[1..close];
            let (p, b) = inner
                .split_once(':')
                .ok_or_else(|| err(lineno, Error::param(format!("Bad line {lineno}: need :"))))?;
            if b.is_empty() {
                return Err(err(
                    lineno,
                    Error::param(format!("Bad line {lineno}: need ]")),
                ));
            }
            if self.o.counters {
                let pk = leading_u64(p).ok_or_else(|| {
                    err(
                        lineno,
                        Error::param("--set-counters packet counter not numeric"),
                    )
                })?;
                let by = leading_u64(b).ok_or_else(|| {
                    err(
                        lineno,
                        Error::param("--set-counters byte counter not numeric"),
                    )
                })?;
                counters = Some(Counters {
                    packets: pk,
                    bytes: by,
                });
            }
            body = &line[close + 1..];
        }
        match self.known_append(kind, body, counters, lineno) {
            Some(Known::Rule(p)) => {
                self.stats.rules += 1;
                let t = table_in(self.rs, &mut self.work, self.o.family, kind);
                return self
                    .ap
                    .apply(kind, t, p, lineno)
                    .map_err(|e| err(lineno, e));
            }
            Some(Known::Kept) => {
                self.stats.rules += 1;
                return Ok(());
            }
            Some(Known::Unknown) | None => {}
        }
        let owned;
        let quoted: Vec<&str>;
        let words: &[&str] = if body.as_bytes().contains(&b'"') {
            owned = split_words(body).map_err(|e| err(lineno, e))?;
            quoted = owned.iter().map(|w| w.as_ref()).collect();
            &quoted
        } else {
            // The buffer is reused across lines: no allocation per line.
            words.clear();
            words.extend(body.split_ascii_whitespace());
            crate::parse::restore::check_words(words).map_err(|e| err(lineno, e))?;
            words
        };
        let po = ParseOpts {
            family: self.o.family,
            restore: true,
            table: Some(kind),
            prog: self.o.prog,
        };
        let mut parsed = parse(words, po).map_err(|e| err(lineno, e))?;
        self.stats.warnings.append(&mut parsed.warnings);
        if let Some(c) = counters {
            if parsed.counters.is_some() {
                return Err(err(
                    lineno,
                    Error::param("multiple --set-counters options not allowed"),
                ));
            }
            parsed.counters = Some(c);
        }
        if matches!(parsed.command, Command::Help | Command::Version) {
            return Ok(());
        }
        self.stats.rules += parsed.rules.len();
        let t = table_in(self.rs, &mut self.work, self.o.family, kind);
        self.ap
            .apply(kind, t, parsed, lineno)
            .map_err(|e| err(lineno, e))
    }
}

impl Restorer<'_> {
    /// `body` as an append the `Apply` knows by its text (see
    /// [`Apply::known_rule`]): exactly `-A CHAIN TEXT`, single spaces, no
    /// quoting in the command and chain words (any other spelling parses).
    fn known_append(
        &mut self,
        kind: TableKind,
        body: &str,
        counters: Option<Counters>,
        lineno: usize,
    ) -> Option<Known<Parsed>> {
        let rest = body.trim_start().strip_prefix("-A ")?;
        let (chain, text) = rest.split_once(' ')?;
        if chain.is_empty() || chain.starts_with(['-', '"']) {
            return None;
        }
        let t = table_in(self.rs, &mut self.work, self.o.family, kind);
        Some(
            match self.ap.known_rule(kind, t, chain, text, counters, lineno) {
                Known::Unknown => Known::Unknown,
                Known::Kept => Known::Kept,
                Known::Rule(rule) => Known::Rule(Parsed {
                    command: Command::Append(chain.to_string()),
                    table: kind,
                    rules: vec![rule],
                    counters,
                    flags: Default::default(),
                    warnings: Vec::new(),
                }),
            },
        )
    }
}

/// `[pkts:bytes]` as sscanf("[%llu:%llu]") reads it.
fn parse_bracket_counters(s: &str) -> Option<Counters> {
    let inner = s.strip_prefix('[')?;
    let (p, rest) = inner.split_once(':')?;
    let packets = leading_u64(p)?;
    let bytes = leading_u64(rest)?;
    Some(Counters { packets, bytes })
}

fn leading_u64(s: &str) -> Option<u64> {
    let t = s.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if end == 0 {
        return None;
    }
    t[..end].parse().ok()
}

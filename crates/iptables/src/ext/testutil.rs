//! Test support shared by the unit tests of all match and target modules:
//! run one rule through the real parser (as iptables-restore would, inside a
//! `*table` section) and print the extension under test with the real
//! printers.
//!
//! The extension under test is the rule's target extension when it has one
//! (`-j NAME ...`), else its first match (`-m NAME ...`). `Printed` holds what
//! that extension prints after its name: the text following ` -m NAME` /
//! ` -j NAME` in the save form, and its `-L` and `-L -n` columns.
//!
//! Entry points, from the most to the least explicit:
//! - `rule_words` / `rule`: the parsed rule (words given one by one, or a
//!   line split as iptables-restore splits it, so quotes work);
//! - `run_words` / `run`: the printed extension, or the parse error;
//! - `list_in` / `save_in` / `err_in`: one text, panicking on the unexpected
//!   outcome; `list` / `save` / `err` do the same in IPv4 filter INPUT;
//! - `print` / `print_ext`: print a parsed rule's extension under test, or
//!   an extension value built by hand;
//! - `match_words`: the words of `-m NAME` plus (option, inverted, argument)
//!   triples, for tables written as option lists.

use super::{Arg, Ext, PrintCtx};
use crate::error::Result;
use crate::parse::{parse, restore::tokenize, ParseOpts};
use crate::rule::{Rule, Target};
use ruleset::{Family, TableKind};

/// What the extension under test prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Printed {
    /// Save (`iptables-save`, `-S`) text after ` -m NAME` / ` -j NAME`.
    pub save: String,
    /// `-L` text.
    pub list: String,
    /// `-L -n` text.
    pub list_numeric: String,
}

impl Printed {
    /// The `-L` text, numeric or not.
    pub fn listed(&self, numeric: bool) -> &str {
        if numeric {
            &self.list_numeric
        } else {
            &self.list
        }
    }
}

/// Parse `-A chain WORDS` in `table` as iptables-restore would.
pub fn rule_words<S: AsRef<str>>(
    family: Family,
    table: TableKind,
    chain: &str,
    words: &[S],
) -> Result<Rule> {
    let mut argv: Vec<&str> = vec!["-A", chain];
    argv.extend(words.iter().map(AsRef::as_ref));
    let o = ParseOpts {
        family,
        restore: true,
        table: Some(table),
        prog: "iptables",
    };
    let mut parsed = parse(&argv, o)?;
    Ok(parsed.rules.remove(0))
}

/// Like `rule_words` with `text` split into words as iptables-restore does.
pub fn rule(family: Family, table: TableKind, chain: &str, text: &str) -> Result<Rule> {
    rule_words(family, table, chain, &tokenize(text)?)
}

/// Print the extension under test of a parsed rule.
pub fn print(family: Family, r: &Rule) -> Printed {
    if let Target::Ext(t) = &r.target {
        printed(family, r.proto, |c, o| t.save(c, o), |c, o| t.list(c, o))
    } else {
        let m = r.matches.first().expect("no match or target extension");
        printed(family, r.proto, |c, o| m.save(c, o), |c, o| m.list(c, o))
    }
}

/// Print an extension value built by hand, in a rule of `family` with
/// protocol `proto` (0 = any).
pub fn print_ext<E: Ext>(m: &E, family: Family, proto: u8) -> Printed {
    printed(family, proto, |c, o| m.save(c, o), |c, o| m.list(c, o))
}

fn printed(
    family: Family,
    proto: u8,
    save: impl Fn(&PrintCtx, &mut String),
    list: impl Fn(&PrintCtx, &mut String),
) -> Printed {
    let ctx = |numeric| PrintCtx {
        family,
        proto,
        numeric,
    };
    let mut p = Printed {
        save: String::new(),
        list: String::new(),
        list_numeric: String::new(),
    };
    save(&ctx(false), &mut p.save);
    list(&ctx(false), &mut p.list);
    list(&ctx(true), &mut p.list_numeric);
    p
}

/// `rule_words`, then `print`.
pub fn run_words<S: AsRef<str>>(
    family: Family,
    table: TableKind,
    chain: &str,
    words: &[S],
) -> Result<Printed> {
    rule_words(family, table, chain, words).map(|r| print(family, &r))
}

/// `rule`, then `print`.
pub fn run(family: Family, table: TableKind, chain: &str, text: &str) -> Result<Printed> {
    rule(family, table, chain, text).map(|r| print(family, &r))
}

/// `run` of a rule that must be accepted.
pub fn ok_in(family: Family, table: TableKind, chain: &str, text: &str) -> Printed {
    run(family, table, chain, text).unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

/// `-L` text (numeric or not) of a rule that must be accepted.
pub fn list_in(family: Family, table: TableKind, chain: &str, text: &str, numeric: bool) -> String {
    ok_in(family, table, chain, text)
        .listed(numeric)
        .to_string()
}

/// Save text of a rule that must be accepted.
pub fn save_in(family: Family, table: TableKind, chain: &str, text: &str) -> String {
    ok_in(family, table, chain, text).save
}

/// The error message of a rule that must be rejected.
pub fn err_in(family: Family, table: TableKind, chain: &str, text: &str) -> String {
    match rule(family, table, chain, text) {
        Ok(r) => panic!("{text}: accepted as {r:?}"),
        Err(e) => e.msg,
    }
}

/// `ok_in` in IPv4 filter INPUT.
pub fn ok(text: &str) -> Printed {
    ok_in(Family::Ipv4, TableKind::Filter, "INPUT", text)
}

/// `list_in` in IPv4 filter INPUT.
pub fn list(text: &str, numeric: bool) -> String {
    list_in(Family::Ipv4, TableKind::Filter, "INPUT", text, numeric)
}

/// `save_in` in IPv4 filter INPUT.
pub fn save(text: &str) -> String {
    save_in(Family::Ipv4, TableKind::Filter, "INPUT", text)
}

/// `err_in` in IPv4 filter INPUT.
pub fn err(text: &str) -> String {
    err_in(Family::Ipv4, TableKind::Filter, "INPUT", text)
}

/// One option of the extension under test: (name without `--`, inverted,
/// argument). The argument is ignored for options that take none.
pub type Opt<'a> = (&'a str, bool, &'a str);

/// The words `-m NAME [!] --opt [arg] ...` for match `E`. An argument is
/// always passed for options that require one (even an empty one), never for
/// options that take none, and for optional ones only when not empty.
pub fn match_words<E: Ext>(opts: &[Opt]) -> Vec<String> {
    let mut words = vec!["-m".to_string(), E::NAME.to_string()];
    for &(name, inv, arg) in opts {
        let def = E::OPTS
            .iter()
            .find(|o| o.name == name)
            .unwrap_or_else(|| panic!("{}: no option --{name}", E::NAME));
        if inv {
            words.push("!".into());
        }
        words.push(format!("--{name}"));
        match def.arg {
            Arg::None => {}
            Arg::Optional if arg.is_empty() => {}
            Arg::Required | Arg::Optional => words.push(arg.into()),
        }
    }
    words
}

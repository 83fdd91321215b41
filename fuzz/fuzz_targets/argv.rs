//! The iptables command line: parse, execute, and the save round trip.
//!
//! Input: bytes, lossily decoded as UTF-8, split into words on NUL when the
//! input has a NUL byte, else on ASCII whitespace. Each input is parsed for
//! both families, with `restore` false and true, and `table` None.
//!
//! Properties:
//! - parse, execute, list and save never panic;
//! - a rule command's rules (unless a word has a character the save form
//!   cannot carry unquoted, see `carried`), printed with `save_rule_body`, re-parse (as
//!   `-t TABLE -A CHAIN <tokenized body>`) to exactly one rule that prints
//!   identically;
//! - a rule that `-A` appended is found by `-C` and removed by `-D`.
#![no_main]

use iptables::exec::{execute, list_rules, list_table, save_table};
use iptables::parse::restore::tokenize;
use iptables::parse::{parse, Command, ListFlags, ParseOpts, Parsed};
use iptables::print::save::{save_rule_body, CounterStyle};
use libfuzzer_sys::fuzz_target;

mod common;
use common::carried;
use ruleset::{Counters, Family, Table};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let words: Vec<&str> = if text.contains('\0') {
        text.split('\0').collect()
    } else {
        text.split_ascii_whitespace().collect()
    };
    for family in Family::ALL {
        for restore in [false, true] {
            let o = ParseOpts {
                family,
                restore,
                table: None,
                prog: "iptables",
            };
            if let Ok(p) = parse(&words, o) {
                check_parsed(family, &p, carried(&words));
            }
        }
    }
});

fn rule_chain(c: &Command) -> Option<&str> {
    match c {
        Command::Append(c)
        | Command::Check(c)
        | Command::Delete(c)
        | Command::Insert(c, _)
        | Command::Replace(c, _) => Some(c),
        _ => None,
    }
}

fn check_parsed(family: Family, p: &Parsed, round_trips: bool) {
    if let (Some(chain), true) = (rule_chain(&p.command), round_trips) {
        for rule in &p.rules {
            round_trip(family, p, chain, rule);
        }
    }

    let mut t = Table::new(family, p.table);
    let mut out = String::new();
    let res = execute(&mut t, p, &mut out);

    // `-s a,b,… -d c,d,…` expands to |s|×|d| rules, often identical; deleting
    // k identical rules one by one is O(k²) in iptables and here alike, so
    // the -C/-D round trip is only checked for modest expansions.
    if let (Command::Append(chain), Ok(()), true) = (&p.command, &res, p.rules.len() <= 64) {
        let check = Parsed {
            command: Command::Check(chain.clone()),
            ..p.clone()
        };
        if let Err(e) = execute(&mut t, &check, &mut out) {
            panic!("-C after -A failed: {e:?}\nparsed: {p:#?}");
        }
        let del = Parsed {
            command: Command::Delete(chain.clone()),
            ..p.clone()
        };
        if let Err(e) = execute(&mut t, &del, &mut out) {
            panic!("-D after -A failed: {e:?}\nparsed: {p:#?}");
        }
        let mut empty = String::new();
        save_table(&Table::new(family, p.table), false, &mut empty);
        let mut now = String::new();
        save_table(&t, false, &mut now);
        assert_eq!(now, empty, "-A then -D left the table changed");
        // Put them back for the printers below.
        let _ = execute(&mut t, p, &mut out);
    }

    // Every printer over whatever the table now holds.
    for numeric in [false, true] {
        for verbose in [false, true] {
            let f = ListFlags {
                numeric,
                verbose,
                exact: verbose,
                line_numbers: numeric,
                wait: None,
            };
            let _ = list_table(&t, None, None, &f, &mut out);
        }
    }
    let _ = list_rules(&t, None, None, true, &mut out);
    save_table(&t, true, &mut out);
}

fn round_trip(family: Family, p: &Parsed, chain: &str, rule: &iptables::Rule) {
    let mut body = String::new();
    save_rule_body(&mut body, family, rule, Counters::default(), CounterStyle::None);
    let toks = match tokenize(&body) {
        Ok(t) => t,
        // iptables-restore's own limits on words per line and word length.
        Err(e) if is_limit(&e) => return,
        Err(e) => panic!("saved rule body does not tokenize: {e:?}\nbody: {body:?}"),
    };
    let mut words: Vec<&str> = vec!["-t", p.table.name(), "-A", chain];
    words.extend(toks.iter().map(String::as_str));
    let o = ParseOpts {
        family,
        restore: false,
        table: None,
        prog: "iptables",
    };
    let again = match parse(&words, o) {
        Ok(a) => a,
        Err(e) => panic!("saved rule does not parse again: {e:?}\nwords: {words:?}\nrule: {rule:#?}"),
    };
    assert_eq!(again.rules.len(), 1, "saved rule parsed to several: {words:?}");
    let mut body2 = String::new();
    save_rule_body(
        &mut body2,
        family,
        &again.rules[0],
        Counters::default(),
        CounterStyle::None,
    );
    assert_eq!(body, body2, "save → parse → save differs\nwords: {words:?}");
}

/// iptables-restore's own limits on words per line and word length.
fn is_limit(e: &iptables::Error) -> bool {
    e.msg == "Parser cannot handle more arguments" || e.msg == "Parameter too long!"
}

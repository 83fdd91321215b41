//! Command semantics: one parsed iptables command applied to one table of the
//! model, with iptables' messages for every failure. A failed command changes
//! nothing (multi-rule commands run inside a model transaction).

use crate::error::{Error, Result};
use crate::parse::{Command, ListFlags, Parsed};
use crate::print::list;
use crate::print::save::{save_rule, CounterStyle};
use crate::rule::Rule;
use ruleset::{ChainView, Error as M, Table};
use std::fmt::Write;

pub mod restore;

pub use restore::{
    restore, restore_open, restore_with, Apply, Known, ModelOnly, RestoreError, RestoreOpts,
    RestoreStats, Reverse,
};

/// Which operation failed, to pick iptables' wording for a model error.
#[derive(Clone, Copy)]
enum Op {
    Rule,
    Insert,
    Replace,
    DeleteNum,
    DeleteChain,
    Rename,
    Policy,
    Other,
}

fn map_err(op: Op, e: M) -> Error {
    match e {
        M::NoSuchTarget(t) => Error::param(format!("Chain '{t}' does not exist")),
        M::NoSuchChain => match op {
            Op::Policy => Error::op("Bad built-in chain name."),
            _ => Error::op("No chain/target/match by that name."),
        },
        M::ChainExists => match op {
            Op::Rename => Error::op("File exists."),
            _ => Error::op("Chain already exists."),
        },
        M::BuiltinChain => match op {
            Op::Policy => Error::op("Bad built-in chain name."),
            Op::DeleteChain => Error::op("Directory not empty."),
            _ => Error::op("Operation not permitted."),
        },
        M::ChainInUse => Error::op("Too many links."),
        M::ChainNotEmpty => Error::op("Directory not empty."),
        M::NoSuchRule => Error::op("Bad rule (does a matching rule exist in that chain?)."),
        M::IndexOutOfRange => match op {
            Op::Insert => Error::op("Index of insertion too big."),
            Op::Replace => Error::op("Index of replacement too big."),
            Op::DeleteNum => Error::op("Index of deletion too big."),
            _ => Error::op("No chain/target/match by that name."),
        },
        M::Loop => Error::op("Loop found in table."),
    }
}

/// As [`execute`], taking the command by value so a single appended rule is
/// moved into the model instead of copied (the restore hot path).
pub fn execute_owned(t: &mut Table<Rule>, mut p: Parsed, out: &mut String) -> Result<()> {
    if let (Command::Append(chain), 1) = (&p.command, p.rules.len()) {
        let counters = p.counters.unwrap_or_default();
        let rule = p.rules.pop().expect("one rule");
        t.append(chain, rule, counters)
            .map_err(|e| map_err(Op::Rule, e))?;
        return Ok(());
    }
    execute(t, &p, out)
}

/// Run a multi-step mutation atomically: on error the table is rolled back.
/// Inside a caller's transaction (restore `--noflush`) that one is used as is:
/// transactions don't nest, so committing or rolling back here would end it.
fn atomically<F>(t: &mut Table<Rule>, f: F) -> Result<()>
where
    F: FnOnce(&mut Table<Rule>) -> Result<()>,
{
    if t.in_transaction() {
        return f(t);
    }
    t.begin();
    match f(t) {
        Ok(()) => {
            t.commit();
            Ok(())
        }
        Err(e) => {
            t.rollback();
            Err(e)
        }
    }
}

/// Apply `p` to `t` (the table `p.table` of the right family). Listing output
/// is appended to `out`.
pub fn execute(t: &mut Table<Rule>, p: &Parsed, out: &mut String) -> Result<()> {
    let counters = p.counters.unwrap_or_default();
    match &p.command {
        Command::Append(chain) => atomically(t, |t| {
            for r in &p.rules {
                t.append(chain, r.clone(), counters)
                    .map_err(|e| map_err(Op::Rule, e))?;
            }
            Ok(())
        }),
        Command::Insert(chain, n) => atomically(t, |t| {
            for r in &p.rules {
                t.insert(chain, *n, r.clone(), counters)
                    .map_err(|e| map_err(Op::Insert, e))?;
            }
            Ok(())
        }),
        Command::Replace(chain, n) => {
            if p.rules.len() != 1 {
                return Err(Error::param(
                    "Replacement rule does not specify a unique address",
                ));
            }
            t.replace(chain, *n, p.rules[0].clone(), counters)
                .map_err(|e| map_err(Op::Replace, e))?;
            Ok(())
        }
        Command::Delete(chain) => atomically(t, |t| {
            for r in &p.rules {
                check_jump_target(t, r)?;
                t.delete_spec(chain, r).map_err(|e| map_err(Op::Rule, e))?;
            }
            Ok(())
        }),
        Command::DeleteNum(chain, n) => {
            t.delete_at(chain, *n)
                .map_err(|e| map_err(Op::DeleteNum, e))?;
            Ok(())
        }
        Command::Check(_) => query(t, p, out).unwrap_or(Ok(())),
        Command::Flush(chain) => {
            match chain {
                Some(c) => t.flush_chain(c).map_err(|e| map_err(Op::Other, e))?,
                None => t.flush_all(),
            }
            Ok(())
        }
        Command::Zero { chain, num } => zero_counters(t, chain.as_deref(), *num, &p.flags, out),
        Command::NewChain(c) => {
            t.new_chain(c).map_err(|e| map_err(Op::Other, e))?;
            Ok(())
        }
        Command::DeleteChain(c) => match c {
            Some(c) => t.delete_chain(c).map_err(|e| map_err(Op::DeleteChain, e)),
            None => t
                .delete_user_chains()
                .map_err(|e| map_err(Op::DeleteChain, e)),
        },
        Command::Rename(old, new) => t.rename_chain(old, new).map_err(|e| map_err(Op::Rename, e)),
        Command::Policy(chain, policy, c) => t
            .set_policy(chain, *policy, Some(*c))
            .map_err(|e| map_err(Op::Policy, e)),
        Command::List { chain, num, zero } => {
            list_table(t, chain.as_deref(), *num, &p.flags, out)?;
            if *zero {
                zero_counters(t, chain.as_deref(), *num, &p.flags, out)?;
            }
            Ok(())
        }
        Command::ListRules { chain, num, zero } => {
            list_rules(t, chain.as_deref(), *num, p.flags.verbose, out)?;
            if *zero {
                zero_counters(t, chain.as_deref(), *num, &p.flags, out)?;
            }
            Ok(())
        }
        Command::Help | Command::Version => Ok(()),
    }
}

/// `-Z [CHAIN [N]]`: zero rule counters, and the policy counters of the
/// built-in chains zeroed whole. With `-v`, a chain zeroed whole is named
/// on stdout ("Zeroing chain `C'"), in listing order, as iptables does; a
/// single rule (`N`) is zeroed silently.
fn zero_counters(
    t: &mut Table<Rule>,
    chain: Option<&str>,
    num: Option<usize>,
    f: &ListFlags,
    out: &mut String,
) -> Result<()> {
    t.zero(chain, num).map_err(|e| map_err(Op::Other, e))?;
    if f.verbose && num.is_none() {
        let names: Vec<String> = match chain {
            Some(c) => vec![c.to_string()],
            None => t.chains().iter().map(|c| c.name.to_string()).collect(),
        };
        for n in names {
            let _ = writeln!(out, "Zeroing chain `{n}'");
        }
    }
    Ok(())
}

/// The commands that only read `t` (listings without -Z, -C): run them on
/// a shared table. `None` for every command that may change it.
pub fn query(t: &Table<Rule>, p: &Parsed, out: &mut String) -> Option<Result<()>> {
    Some(match &p.command {
        Command::List {
            chain,
            num,
            zero: false,
        } => list_table(t, chain.as_deref(), *num, &p.flags, out),
        Command::ListRules {
            chain,
            num,
            zero: false,
        } => list_rules(t, chain.as_deref(), *num, p.flags.verbose, out),
        Command::Check(chain) => (|| {
            for r in &p.rules {
                check_jump_target(t, r)?;
                if !t.check(chain, r).map_err(|e| map_err(Op::Rule, e))? {
                    return Err(map_err(Op::Rule, M::NoSuchRule));
                }
            }
            Ok(())
        })(),
        Command::Help | Command::Version => Ok(()),
        _ => return None,
    })
}

/// What `-C` says when no rule of the chain equals the one given.
pub fn no_such_rule() -> Error {
    map_err(Op::Rule, M::NoSuchRule)
}

/// -D/-C name a jump target that must exist (iptables-nft asserts it).
fn check_jump_target(t: &Table<Rule>, r: &Rule) -> Result<()> {
    use ruleset::RuleBody;
    if let Some(target) = r.jump_target() {
        if t.chain(target).is_none() {
            return Err(Error::param(format!("Chain '{target}' does not exist")));
        }
    }
    Ok(())
}

fn chain_or_err<'a>(t: &'a Table<Rule>, name: &str) -> Result<ChainView<'a>> {
    t.chain(name)
        .ok_or_else(|| Error::op("No chain/target/match by that name."))
}

/// `-L [chain [num]]`.
pub fn list_table(
    t: &Table<Rule>,
    chain: Option<&str>,
    num: Option<usize>,
    f: &ListFlags,
    out: &mut String,
) -> Result<()> {
    let family = t.family();
    let chains = match chain {
        Some(c) => vec![chain_or_err(t, c)?],
        None => t.chains(),
    };
    if let (Some(c), Some(n)) = (chain, num) {
        if let Ok(r) = t.rule_at(c, n) {
            list::rule_row(out, family, n, r.body, r.counters, f);
        }
        return Ok(());
    }
    for (i, c) in chains.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        list::header(out, c, f);
        for (k, r) in t.rules_in(c).enumerate() {
            list::rule_row(out, family, k + 1, r.body, r.counters, f);
        }
    }
    Ok(())
}

fn chain_line(out: &mut String, c: &ChainView, counters: bool) {
    match c.policy {
        Some(p) => {
            let _ = write!(out, "-P {} {}", c.name, p.name());
            if counters {
                let _ = write!(out, " -c {} {}", c.counters.packets, c.counters.bytes);
            }
            out.push('\n');
        }
        None => {
            let _ = writeln!(out, "-N {}", c.name);
        }
    }
}

/// `-S [chain [num]]`, with `-v` adding counters.
pub fn list_rules(
    t: &Table<Rule>,
    chain: Option<&str>,
    num: Option<usize>,
    verbose: bool,
    out: &mut String,
) -> Result<()> {
    let family = t.family();
    let style = if verbose {
        CounterStyle::Inline
    } else {
        CounterStyle::None
    };
    let chains = match chain {
        Some(c) => {
            let cv = chain_or_err(t, c)?;
            if let Some(n) = num {
                if let Ok(r) = t.rule_at(c, n) {
                    save_rule(out, family, c, r.body, r.counters, style);
                    out.push('\n');
                }
                return Ok(());
            }
            vec![cv]
        }
        None => t.chains(),
    };
    for c in &chains {
        chain_line(out, c, verbose);
    }
    for c in chains.iter().filter(|c| c.len > 0) {
        for r in t.rules_in(c) {
            save_rule(out, family, c.name, r.body, r.counters, style);
            out.push('\n');
        }
    }
    Ok(())
}

/// One table in iptables-save format (without the `# Generated` comment
/// lines, which the caller adds): `*name`, chain lines, rules, `COMMIT`.
/// Streams into `out`; the caller may flush `out` between tables.
pub fn save_table(t: &Table<Rule>, counters: bool, out: &mut String) {
    let family = t.family();
    let _ = writeln!(out, "*{}", t.kind().name());
    let chains = t.chains();
    for c in &chains {
        let pol = c.policy.map(|p| p.name()).unwrap_or("-");
        let _ = writeln!(
            out,
            ":{} {} [{}:{}]",
            c.name, pol, c.counters.packets, c.counters.bytes
        );
    }
    let style = if counters {
        CounterStyle::Prefix
    } else {
        CounterStyle::None
    };
    for c in chains.iter().filter(|c| c.len > 0) {
        for r in t.rules_in(c) {
            save_rule(out, family, c.name, r.body, r.counters, style);
            out.push('\n');
        }
    }
    out.push_str("COMMIT\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse, ParseOpts};
    use ruleset::{Family, TableKind};

    fn run(t: &mut Table<Rule>, words: &[&str]) -> Result<()> {
        let o = ParseOpts::command(Family::Ipv4, "iptables");
        execute(t, &parse(words, o).unwrap(), &mut String::new())
    }

    /// Found by fuzzing (fuzz/ restore target): `-I` inside restore
    /// --noflush committed the restore's transaction, so a later failure
    /// could not undo it.
    #[test]
    fn multi_step_commands_keep_the_callers_transaction() {
        let mut t = Table::new(Family::Ipv4, TableKind::Filter);
        t.begin();
        run(&mut t, &["-I", "INPUT", "-j", "ACCEPT"]).unwrap();
        run(&mut t, &["-A", "INPUT", "-s", "1.2.3.4,5.6.7.8"]).unwrap();
        run(&mut t, &["-D", "INPUT", "-s", "1.2.3.4"]).unwrap();
        assert!(t.in_transaction());
        t.rollback();
        assert_eq!(t.chain("INPUT").unwrap().len, 0);

        // Without a transaction a failed multi-rule command changes nothing.
        run(&mut t, &["-A", "INPUT", "-s", "1.2.3.4"]).unwrap();
        assert!(run(&mut t, &["-D", "INPUT", "-s", "1.2.3.4,5.6.7.8"]).is_err());
        assert_eq!(t.chain("INPUT").unwrap().len, 1);
        assert!(!t.in_transaction());
    }

    /// What iptables-restore refuses before parsing a line: more words
    /// than its argument vector holds, a word longer than its parameter
    /// buffer (quoted or not), and what a NUL byte cuts off (it reads C
    /// strings). Boundaries measured with iptables-nft 1.8.9.
    #[test]
    fn restore_input_limits() {
        let words = |n: usize| vec!["x"; n].join(" ");
        let long = |n: usize| "y".repeat(n);
        // (line 2 of the input, the message, or None when the line gets as
        // far as the parser: "Bad argument" for the plain x words).
        let cases: Vec<(String, &str)> = vec![
            (words(251), "Bad argument `x'"),
            (words(252), "Parser cannot handle more arguments"),
            (
                format!("{} \"x\"", words(251)),
                "Parser cannot handle more arguments",
            ),
            (format!("-A INPUT -m comment --comment {}", long(1023)), ""),
            (
                format!("-A INPUT -m comment --comment {}", long(1024)),
                "Parameter too long!",
            ),
            (
                format!("-A INPUT -m comment --comment \"{}\"", long(1024)),
                "Parameter too long!",
            ),
            (
                ":A\0B - [0:0]".into(),
                "iptables-restore: line 2 policy invalid",
            ),
            ("-A INPUT -j ACCEPT\0 -s bogus".into(), ""),
        ];
        for (line, want) in cases {
            let input = format!("*filter\n{line}\nCOMMIT\n");
            let mut rs = ruleset::Ruleset::new();
            let o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
            let got = restore(&mut rs, &input, &o);
            match got {
                Ok(_) => assert_eq!(want, "", "{}", &line[..line.len().min(40)]),
                Err(e) => {
                    assert_eq!(e.line, 2, "{want}");
                    assert_eq!(
                        e.err.msg.trim_end(),
                        want,
                        "{}",
                        &line[..line.len().min(40)]
                    );
                }
            }
        }
    }
}

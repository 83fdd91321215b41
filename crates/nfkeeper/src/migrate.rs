//! `nfkeeper migrate --from legacy|nft`: moves the iptables-legacy or the
//! iptables-nft ruleset of this network namespace into nfkeeper's tables.
//! Order, so that a failure leaves the host as it was: read and decode
//! every source table the namespace has (legacy: never one it lacks,
//! asking the kernel for a table creates it; nft: `xtables::from_nft`),
//! refuse on anything not decoded; check nfkeeper's tables that would be
//! replaced; load each family as one restore through the iptables-restore
//! path (`personality::restore_payload`: the daemon when it answers, else
//! direct); only when every family committed, empty the legacy tables
//! (built-in chains, ACCEPT, no rules) or delete iptables-nft's (one
//! transaction per family, only those unchanged since read). Exit 0 done
//! or nothing to do, 1 refused or failed, 2 bad usage, 4 the source
//! tables could not be read.

use crate::settings::Settings;
use ruleset::{Family, TableKind};
use std::fmt::Write as _;
use xtables::decode::Table;
use xtables::table::Info;

pub const USAGE: &str = "\
usage: nfkeeper migrate --from legacy|nft [-4|-6] [--dry-run] [--replace]

Moves the iptables ruleset of this network namespace (both families unless
-4 or -6) into nfkeeper's tables: --from legacy the iptables-legacy one
(ip_tables and ip6_tables), --from nft the iptables-nft one (nf_tables
tables filter, nat, mangle, raw and security of families ip and ip6; no
other table is read or touched). Reads those tables from the kernel,
decodes every rule into nfkeeper's model, loads each family as one
iptables-restore transaction (counters included), and only then empties
the legacy tables (built-in chains, ACCEPT policies, no rules) or deletes
iptables-nft's tables (those unchanged since they were read). A rule
migrate does not decode refuses the whole migration before anything
changes, naming the table, chain, rule and why; so does an nfkeeper table
that would be replaced and already holds rules, unless --replace.
  --dry-run   print the iptables-save text that would be loaded, the
              report, and the nfkeeper tables it would replace; change
              nothing
  --replace   replace nfkeeper tables that already hold rules
Exit status: 0 migrated or nothing to migrate, 1 refused or failed,
4 the source tables could not be read.";

/// Which iptables backend to move from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum From {
    Legacy,
    Nft,
}

struct Opts {
    from: From,
    families: Vec<Family>,
    dry_run: bool,
    replace: bool,
}

fn parse(args: &[String]) -> Result<Opts, i32> {
    let mut o = Opts {
        from: From::Legacy,
        families: Family::ALL.to_vec(),
        dry_run: false,
        replace: false,
    };
    let mut from = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-4" => o.families = vec![Family::Ipv4],
            "-6" => o.families = vec![Family::Ipv6],
            "--dry-run" => o.dry_run = true,
            "--replace" => o.replace = true,
            "--from" => from = it.next().cloned(),
            s if s.starts_with("--from=") => from = s.strip_prefix("--from=").map(String::from),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Err(0);
            }
            other => {
                eprintln!("nfkeeper migrate: unknown option \"{other}\"\n{USAGE}");
                return Err(2);
            }
        }
    }
    match from.as_deref() {
        Some("legacy") => Ok(o),
        Some("nft") => Ok(Opts {
            from: From::Nft,
            ..o
        }),
        Some(f) => {
            eprintln!("nfkeeper migrate: unknown source \"{f}\" (legacy or nft)");
            Err(2)
        }
        None => {
            eprintln!("nfkeeper migrate: --from legacy or --from nft is required\n{USAGE}");
            Err(2)
        }
    }
}

pub(crate) fn fam_name(f: Family) -> &'static str {
    match f {
        Family::Ipv4 => "ip",
        Family::Ipv6 => "ip6",
    }
}

/// A source table to move: its name, its rules and what the last step
/// needs to tell it unchanged.
pub(crate) struct Found {
    pub(crate) name: String,
    pub(crate) table: Table,
    pub(crate) src: Src,
}

pub(crate) enum Src {
    /// The legacy table's layout and entries (for emptying).
    Legacy {
        info: Info,
        entries: Vec<xtables::entry::Entry>,
    },
    /// The iptables-nft table's content (for deleting).
    Nft(xtables::from_nft::Fingerprint),
}

/// Every family's tables, read and decoded.
pub(crate) type FoundAll = Vec<(Family, Vec<Found>)>;

pub fn migrate(args: &[String], s: &Settings) -> i32 {
    let o = match parse(args) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let read = match o.from {
        From::Legacy => read_legacy(&o.families),
        From::Nft => crate::migrate_nft::read(&o.families),
    };
    let found = match read {
        Ok(f) => f,
        Err(code) => return code,
    };
    if found.is_empty() {
        println!(
            "nfkeeper migrate: nothing to migrate (no {} table holds rules, \
             user chains or policies other than ACCEPT)",
            if o.from == From::Nft {
                "iptables-nft"
            } else {
                "legacy"
            }
        );
        return 0;
    }
    let texts: Vec<String> = found
        .iter()
        .map(|(family, tables)| {
            let mut t = String::new();
            for f in tables {
                f.table.save(*family, &mut t);
            }
            t
        })
        .collect();
    if o.dry_run {
        for ((family, _), text) in found.iter().zip(&texts) {
            println!(
                "# {} (iptables-restore --counters input)",
                fam_name(*family)
            );
            print!("{text}");
        }
        print!("{}", report(&found, "would move"));
        for (family, tables) in &found {
            let kinds: Vec<TableKind> = tables.iter().map(|f| f.table.kind).collect();
            match occupied(*family, &kinds, s) {
                Ok(busy) if busy.is_empty() => {}
                Ok(busy) => println!(
                    "nfkeeper's {} {} {}: {}",
                    fam_name(*family),
                    if busy.len() == 1 { "table" } else { "tables" },
                    busy.join(", "),
                    if o.replace {
                        "would be replaced"
                    } else {
                        "already holding rules, would refuse (see --replace)"
                    }
                ),
                Err(e) => println!(
                    "nfkeeper's {} tables: cannot read them: {e}",
                    fam_name(*family)
                ),
            }
        }
        println!("dry run: nothing was changed");
        return 0;
    }
    if !o.replace {
        if let Err(code) = refuse_occupied(&found, s) {
            return code;
        }
    }
    if let Err(code) = load(&found, &texts, s, o.from) {
        return code;
    }
    if o.from == From::Nft {
        let (deleted, failed) = crate::migrate_nft::delete(&found);
        print!("{}", report(&found, "moved"));
        println!(
            "deleted iptables-nft tables: {}",
            if deleted.is_empty() {
                "none".to_string()
            } else {
                deleted.join(", ")
            }
        );
        return i32::from(failed);
    }
    let (emptied, failed) = empty_legacy(&found);
    print!("{}", report(&found, "moved"));
    println!(
        "emptied legacy tables: {}",
        if emptied.is_empty() {
            "none".to_string()
        } else {
            emptied.join(", ")
        }
    );
    i32::from(failed)
}

/// Step 1: the legacy tables of `families` that hold something, decoded;
/// `Err(exit code)` after saying why not (nothing changed).
fn read_legacy(families: &[Family]) -> Result<FoundAll, i32> {
    let mut found = Vec::new();
    for &family in families {
        let names = xtables::kernel::table_names(family).map_err(|e| {
            eprintln!(
                "nfkeeper migrate: cannot list the legacy {} tables: {e}",
                fam_name(family)
            );
            4
        })?;
        if names.is_empty() {
            continue;
        }
        let sock = xtables::kernel::Socket::open(family).map_err(|e| {
            eprintln!(
                "nfkeeper migrate: cannot open a raw {} socket: {e}",
                fam_name(family)
            );
            4
        })?;
        let mut tables = Vec::new();
        for name in names {
            let r = xtables::read_table(&sock, family, &name).map_err(|e| {
                eprintln!(
                    "nfkeeper migrate: cannot migrate {} {e}; nothing was changed",
                    fam_name(family)
                );
                1
            })?;
            if !r.table.is_empty() {
                tables.push(Found {
                    name,
                    table: r.table,
                    src: Src::Legacy {
                        info: r.info,
                        entries: r.entries,
                    },
                });
            }
        }
        if !tables.is_empty() {
            found.push((family, tables));
        }
    }
    Ok(found)
}

/// Step 2 (without --replace): refuse when an nfkeeper table to be
/// replaced holds rules or user chains.
fn refuse_occupied(found: &FoundAll, s: &Settings) -> Result<(), i32> {
    for (family, tables) in found {
        let kinds: Vec<TableKind> = tables.iter().map(|f| f.table.kind).collect();
        let busy = occupied(*family, &kinds, s).map_err(|e| {
            eprintln!("nfkeeper migrate: {e}; nothing was changed");
            1
        })?;
        if !busy.is_empty() {
            eprintln!(
                "nfkeeper migrate: nfkeeper's {} {} {} already {} rules; \
                 use --replace to replace {}; nothing was changed",
                fam_name(*family),
                if busy.len() == 1 { "table" } else { "tables" },
                busy.join(", "),
                if busy.len() == 1 { "holds" } else { "hold" },
                if busy.len() == 1 { "it" } else { "them" },
            );
            return Err(1);
        }
    }
    Ok(())
}

/// Step 3: each family's text as one restore, the way `nfkeeper
/// iptables-restore --counters` loads it.
fn load(found: &FoundAll, texts: &[String], s: &Settings, from: From) -> Result<(), i32> {
    let args = iptables::tool::RestoreArgs {
        counters: true,
        ..Default::default()
    };
    for (n, ((family, _), text)) in found.iter().zip(texts).enumerate() {
        let prog = match family {
            Family::Ipv4 => "iptables-restore",
            Family::Ipv6 => "ip6tables-restore",
        };
        let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
        let bytes = iptables::bytes::encode(text).into_owned();
        let code =
            crate::personality::restore_payload(*family, prog, &args, bytes, s, &mut out, &mut err);
        if code != 0 {
            let loaded: Vec<&str> = found[..n].iter().map(|(f, _)| fam_name(*f)).collect();
            eprintln!(
                "nfkeeper migrate: loading the {} ruleset failed (exit {code}); \
                 the {} tables are unchanged{}",
                fam_name(*family),
                if from == From::Nft {
                    "iptables-nft"
                } else {
                    "legacy"
                },
                if loaded.is_empty() {
                    String::new()
                } else {
                    format!(" (nfkeeper's {} tables were loaded)", loaded.join(", "))
                }
            );
            return Err(1);
        }
    }
    Ok(())
}

/// Step 4: empty each legacy table that still holds what was read.
/// Returns the tables emptied and whether any was not.
fn empty_legacy(found: &FoundAll) -> (Vec<String>, bool) {
    let mut emptied = Vec::new();
    let mut failed = false;
    for (family, tables) in found {
        let fam = fam_name(*family);
        let sock = match xtables::kernel::Socket::open(*family) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("nfkeeper migrate: cannot open a raw {fam} socket: {e}");
                failed = true;
                continue;
            }
        };
        for f in tables {
            let Src::Legacy { info, entries } = &f.src else {
                continue;
            };
            let why = match xtables::unchanged(&sock, *family, &f.name, entries) {
                Ok(true) => {
                    let (empty, blob) = xtables::table::empty(*family, info.valid_hooks);
                    match sock.replace(&f.name, &empty, &blob, info.num_entries) {
                        Ok(()) => {
                            emptied.push(format!("{fam} {}", f.name));
                            continue;
                        }
                        Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                            "it changed since it was read".to_string()
                        }
                        Err(e) => format!("emptying it failed: {e}"),
                    }
                }
                Ok(false) => "it changed since it was read".to_string(),
                Err(e) => e,
            };
            failed = true;
            eprintln!(
                "nfkeeper migrate: loaded into nfkeeper, but legacy {fam} {} was not emptied: {why}",
                f.name
            );
        }
    }
    (emptied, failed)
}

/// One line per family and table: chains, rules, policies.
fn report(found: &[(Family, Vec<Found>)], verb: &str) -> String {
    let mut out = String::new();
    for (family, tables) in found {
        for f in tables {
            let t = &f.table;
            let policies: Vec<String> = t
                .chains
                .iter()
                .filter_map(|c| {
                    c.policy
                        .as_ref()
                        .map(|(p, _)| format!("{} {}", c.name, p.name()))
                })
                .collect();
            let _ = writeln!(
                out,
                "{} {}: {verb} {}, {} ({} user), policies {}",
                fam_name(*family),
                f.name,
                count(t.rule_count(), "rule"),
                count(t.chains.len(), "chain"),
                t.chains.iter().filter(|c| c.policy.is_none()).count(),
                policies.join(", ")
            );
        }
    }
    out
}

/// "1 rule", "2 rules".
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Which of `kinds` nfkeeper's tables of `family` already hold rules or
/// user chains (read from the kernel).
fn occupied(family: Family, kinds: &[TableKind], s: &Settings) -> Result<Vec<String>, String> {
    let mut sess = keeper::Session::open(family, s.engine).map_err(|e| e.to_string())?;
    let mut busy = Vec::new();
    for &k in kinds {
        let text = sess.save_text(false, Some(k)).map_err(|e| e.to_string())?;
        let used = text
            .lines()
            .any(|l| l.starts_with("-A ") || (l.starts_with(':') && l.contains(" - [")));
        if used {
            busy.push(k.name().to_string());
        }
    }
    Ok(busy)
}

//! The iptables 1.8.11 rule vectors through the kernel: every OK vector of a
//! supported module is appended in direct mode (one transaction), read back
//! from the kernel (rule userdata) and must save exactly as the vector
//! expects. Vectors whose lowering has no native form yet are counted, not
//! failed; a kernel rejection of a lowered rule is a failure, except (each
//! counted and listed with its reason): an nft_compat target this kernel
//! does not have (not in /proc/net/ip*_tables_targets, e.g. LED), and a
//! rule referring to named objects (`Lowered::objects`, e.g. SECMARK's
//! secmark object), which the engine does not create yet.
//!
//! Runs in a private network namespace (checked); skips without root.

use iptables::parse::{parse, restore::tokenize, Command, ParseOpts};
use iptables::print::save::{save_rule_body, CounterStyle};
use keeper::plan::{KernelView, Pending, PlanOpts, Planner};
use keeper::read::read_table;
use nft::Socket;
use ruleset::{Counters, Family, TableKind};
use std::collections::BTreeMap;
use std::path::PathBuf;
use testkit::in_netns;

#[derive(Default)]
struct Tally {
    ok: usize,
    equal: usize,
    not_native: usize,
    /// Refused by the kernel for a reason outside nfkeeper (see the
    /// module doc).
    unavailable: usize,
}

/// The xtables targets this kernel has, per family.
fn kernel_targets(family: Family) -> Vec<String> {
    kernel_list(family, "targets")
}

/// The xtables matches this kernel has, per family.
fn kernel_matches(family: Family) -> Vec<String> {
    kernel_list(family, "matches")
}

fn kernel_list(family: Family, what: &str) -> Vec<String> {
    let f = match family {
        Family::Ipv4 => format!("/proc/net/ip_tables_{what}"),
        Family::Ipv6 => format!("/proc/net/ip6_tables_{what}"),
    };
    std::fs::read_to_string(f)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Why the kernel may refuse `rule` without nfkeeper being wrong (see the
/// module doc), if it may.
fn unavailable(
    rule: &iptables::Rule,
    family: Family,
    table: TableKind,
    chain: &str,
) -> Option<String> {
    let lowered = compile::lower_rule(rule, family, table, chain).ok()?;
    if !lowered.objects.is_empty() {
        let names: Vec<&str> = lowered.objects.iter().map(|o| o.name.as_str()).collect();
        return Some(format!(
            "needs the objects {names:?}, which the engine does not create yet"
        ));
    }
    lowered.exprs.iter().find_map(|e| match e {
        nft::Expr::Target { name, .. } if !kernel_targets(family).contains(name) => {
            Some(format!("this kernel has no xtables target {name}"))
        }
        nft::Expr::Match { name, .. } if !kernel_matches(family).contains(name) => {
            Some(format!("this kernel has no xtables match {name}"))
        }
        // The vector file's set-up line (`%iptables -I INPUT -j RATEEST
        // --rateest-name RE1 ...`) creates the estimator; the kernel refuses
        // a rateest match naming one that does not exist.
        nft::Expr::Match { name, .. } if name == "rateest" => Some(
            "needs the rate estimator its file's set-up line creates (set-up lines are not run)"
                .to_string(),
        ),
        _ => None,
    })
}

#[test]
fn conformance_vectors_round_trip_through_the_kernel() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/iptables-1.8.11/extensions");
    if !dir.is_dir() {
        eprintln!("SKIP: conformance vectors not found");
        return;
    }
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".t"))
        .collect();
    files.sort();
    let res = in_netns(move || {
        let mut sock = Socket::open().expect("netlink");
        let mut tally: BTreeMap<String, Tally> = BTreeMap::new();
        let mut failures = Vec::new();
        let mut notes = BTreeMap::new();
        for file in &files {
            let fams: &[Family] = if file.starts_with("libxt_") {
                &[Family::Ipv4, Family::Ipv6]
            } else if file.starts_with("libip6t_") {
                &[Family::Ipv6]
            } else {
                &[Family::Ipv4]
            };
            let text = std::fs::read_to_string(dir.join(file)).unwrap();
            for &family in fams {
                let mut chains: Vec<String> = Vec::new();
                let mut table = TableKind::Filter;
                for (n, line) in text.lines().enumerate() {
                    if let Some(c) = line.strip_prefix(':') {
                        chains = c.split(',').map(str::to_string).collect();
                        continue;
                    }
                    if let Some(t) = line.strip_prefix('*') {
                        table = TableKind::from_name(t.trim()).unwrap_or(TableKind::Filter);
                        continue;
                    }
                    let item: Vec<&str> = line.split(';').collect();
                    if item.len() < 3
                        || item[2] != "OK"
                        || item.get(3).is_some()
                        || line.starts_with('#')
                    {
                        continue;
                    }
                    let Ok(words) = tokenize(item[0]) else {
                        continue;
                    };
                    for chain in &chains {
                        let mut argv: Vec<&str> = vec!["-A", chain];
                        argv.extend(words.iter().map(String::as_str));
                        let o = ParseOpts {
                            family,
                            restore: true,
                            table: Some(table),
                            prog: "iptables",
                        };
                        // Only vectors of supported modules parse; the syntax
                        // conformance test covers the rest.
                        let Ok(parsed) = parse(&argv, o) else {
                            continue;
                        };
                        if !matches!(parsed.command, Command::Append(_)) || parsed.rules.len() != 1
                        {
                            continue;
                        }
                        let t = tally.entry(file.clone()).or_default();
                        t.ok += 1;
                        let mut want = String::new();
                        save_rule_body(
                            &mut want,
                            family,
                            &parsed.rules[0],
                            Counters::default(),
                            CounterStyle::None,
                        );
                        // Fresh table state for each vector.
                        let mut snap = read_table(&mut sock, family, table).expect("read");
                        let mut pending = Pending::new(sock.batch(None));
                        let mut view = KernelView::default();
                        if snap.exists {
                            let fam = compile::layout::nft_family(family);
                            pending.batch().delete(
                                &nft::Table::new(fam, &compile::layout::table_name(table)),
                                0,
                            );
                            snap.table = ruleset::Table::new(family, table);
                        }
                        let mut out = String::new();
                        let opts = PlanOpts {
                            compile: None,
                            ..Default::default()
                        };
                        let parsed_rule = parsed.rules[0].clone();
                        // iptables' own text of a few rules parses back to
                        // another rule (libxt_ipcomp: `--ipcompspi :`, the
                        // full range, prints as nothing, which means 0:0);
                        // nfkeeper's model is that text, so verify sees the
                        // difference the text has.
                        let reparsed = tokenize(want.trim()).ok().and_then(|w| {
                            let mut a: Vec<&str> = vec!["-A", chain];
                            a.extend(w.iter().map(String::as_str));
                            parse(&a, o).ok().map(|mut p| p.rules.remove(0))
                        });
                        let lossy_text = reparsed.as_ref() != Some(&parsed_rule);
                        let mut ap = Planner::new(family, &mut view, &mut pending, opts);
                        match ap.run(table, &mut snap.table, parsed, &mut out) {
                            Ok(()) => {}
                            Err(e) if e.msg.contains("no native nftables form") => {
                                t.not_native += 1;
                                continue;
                            }
                            Err(e) => {
                                failures.push(format!(
                                    "{file}:{} [{family:?} {chain}] model: {e}",
                                    n + 1
                                ));
                                continue;
                            }
                        }
                        let rep = sock.commit(pending.batch()).expect("commit");
                        let rule = &parsed_rule;
                        if !rep.outcome.is_ok() {
                            if let Some(why) = unavailable(rule, family, table, chain) {
                                t.unavailable += 1;
                                notes.insert(format!("{file}:{}", n + 1), why);
                                continue;
                            }
                            failures.push(format!(
                                "{file}:{} [{family:?} {chain}] kernel rejected `{}`: {:?}",
                                n + 1,
                                item[0],
                                rep.outcome.errors
                            ));
                            continue;
                        }
                        let back = read_table(&mut sock, family, table).expect("read back");
                        let got = back
                            .table
                            .rules(chain)
                            .ok()
                            .and_then(|mut it| {
                                it.next().map(|r| {
                                    let mut s = String::new();
                                    save_rule_body(
                                        &mut s,
                                        family,
                                        r.body,
                                        Counters::default(),
                                        CounterStyle::None,
                                    );
                                    s
                                })
                            })
                            .unwrap_or_default();
                        // And the kernel's expressions are what the rule
                        // compiles to.
                        let diffs = keeper::verify::verify_table(&mut sock, family, table)
                            .expect("verify")
                            .map(|r| r.diffs)
                            .unwrap_or_default();
                        if !diffs.is_empty() && lossy_text {
                            t.unavailable += 1;
                            notes.insert(
                                format!("{file}:{}", n + 1),
                                format!("iptables' text `{}` parses to another rule", want.trim()),
                            );
                        } else if !diffs.is_empty() {
                            failures.push(format!(
                                "{file}:{} [{family:?} {chain}] verify: {}",
                                n + 1,
                                diffs.join("\n    ")
                            ));
                        } else if got == want && back.foreign.is_empty() {
                            t.equal += 1;
                        } else {
                            failures.push(format!(
                                "{file}:{} [{family:?} {chain}]\n    want:{want}\n    got: {got}\n    foreign: {:?}",
                                n + 1,
                                back.foreign
                            ));
                        }
                    }
                }
            }
        }
        (tally, failures, notes)
    });
    let Some((tally, failures, notes)) = res else {
        return;
    };
    println!(
        "\n{:<24} {:>6} {:>8} {:>10} {:>11}",
        "file", "ok", "in+out", "not-native", "unavailable"
    );
    for (f, t) in &tally {
        println!(
            "{:<24} {:>6} {:>8} {:>10} {:>11}",
            f, t.ok, t.equal, t.not_native, t.unavailable
        );
    }
    for (at, why) in &notes {
        println!("unavailable: {at}: {why}");
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

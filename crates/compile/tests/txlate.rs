//! Lowering checked against the kernel and against iptables' own
//! translations (`../shared/conformance/.../*.txlate`): every translation
//! vector is parsed, lowered, loaded into nfkeeper's table in a private
//! network namespace, listed back with `nft`, and compared with the
//! translation `iptables-translate` gives.
//!
//! Asserted: every lowered rule is accepted by the kernel, and its `nft`
//! listing equals the translation, except for the differences listed with
//! a reason in `testdata/txlate-differences*.txt`. Rules whose lowering is
//! not written yet, or that have no native form, are counted and listed.
//!
//! Needs root and the `nft` binary (as an oracle only); skips with a reason
//! otherwise.

use compile::{layout, lower_rule, LowerError};
use iptables::parse::{parse, restore::tokenize, Command, ParseOpts};
use nft::batch::Placement;
use nft::{Chain, Socket, Table};
use ruleset::{Family, TableKind};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command as Proc;
use testkit::in_netns;

fn shared_dir() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/iptables-1.8.11/extensions");
    d.is_dir().then_some(d)
}

struct Vector {
    file: String,
    line: usize,
    family: Family,
    table: TableKind,
    chain: String,
    words: Vec<String>,
    want: String,
}

/// `iptables-translate [-t T] -A|-I CHAIN RULE…` + `nft 'add rule ip T C BODY'`.
fn vectors(dir: &PathBuf) -> Vec<Vector> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".txlate"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(dir.join(&file)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let l = lines[i];
            let family = if l.starts_with("iptables-translate ") {
                Family::Ipv4
            } else if l.starts_with("ip6tables-translate ") {
                Family::Ipv6
            } else {
                i += 1;
                continue;
            };
            let Some(nft) = lines.get(i + 1).filter(|n| n.starts_with("nft ")) else {
                i += 1;
                continue;
            };
            let Ok(mut words) = tokenize(l) else {
                i += 2;
                continue;
            };
            words.remove(0);
            let mut table = TableKind::Filter;
            if let Some(p) = words.iter().position(|w| w == "-t") {
                table = TableKind::from_name(&words[p + 1]).unwrap_or(TableKind::Filter);
                words.drain(p..p + 2);
            }
            let Some(p) = words.iter().position(|w| w == "-A" || w == "-I") else {
                i += 2;
                continue;
            };
            words[p] = "-A".into();
            let chain = words[p + 1].clone();
            // nft 'add rule ip filter INPUT BODY' -> BODY
            let body = nft.trim_start_matches("nft ").trim_matches('\'');
            let want = body.splitn(6, ' ').nth(5).unwrap_or("").to_string();
            out.push(Vector {
                file: file.clone(),
                line: i + 1,
                family,
                table,
                chain,
                words,
                want,
            });
            i += 2;
        }
    }
    out
}

/// Renderings that differ only between nft versions (the local nft 1.0.6
/// against the translations, written for newer nft): counters with values,
/// decimal masks, an explicit `==`, `gt`/`lt` words.
fn normalise(s: &str) -> String {
    s.replace("counter packets 0 bytes 0", "counter")
        .replace("& 8191 ", "& 0x1fff ")
        .replace(" == ", " ")
        .replace(" gt ", " > ")
        .replace(" lt ", " < ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn known_differences() -> BTreeMap<(String, usize), String> {
    // testdata/txlate-differences*.txt (one file per group of modules).
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut text = String::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.starts_with("txlate-differences") && n.ends_with(".txt") {
            text.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
            text.push('\n');
        }
    }
    let mut m = BTreeMap::new();
    for l in text.lines() {
        // FILE:LINE  reason
        if l.starts_with('#') || l.trim().is_empty() {
            continue;
        }
        let (loc, why) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
        if let Some((f, n)) = loc.rsplit_once(':') {
            if let Ok(n) = n.parse() {
                m.insert((f.to_string(), n), why.trim().to_string());
            }
        }
    }
    m
}

#[derive(Default)]
struct Tally {
    vectors: usize,
    equal: usize,
    known: usize,
    unlowered: usize,
    not_native: usize,
}

#[test]
fn txlate_vectors_in_the_kernel() {
    let Some(dir) = shared_dir() else {
        eprintln!("SKIP: conformance folder not found");
        return;
    };
    if Proc::new("nft").arg("--version").output().is_err() {
        eprintln!("SKIP: the nft binary (test oracle) is not installed");
        return;
    }
    let filter = std::env::var("TXLATE_FILE").ok();
    let vs: Vec<Vector> = vectors(&dir)
        .into_iter()
        .filter(|v| filter.as_ref().is_none_or(|f| v.file.contains(f.as_str())))
        .collect();
    let known = known_differences();
    let res = in_netns(move || {
        let mut sock = Socket::open().expect("netlink socket");
        let mut tally: BTreeMap<String, Tally> = BTreeMap::new();
        let mut failures = Vec::new();
        let mut notes = Vec::new();
        for v in &vs {
            let t = tally.entry(v.file.clone()).or_default();
            t.vectors += 1;
            let words: Vec<&str> = v.words.iter().map(String::as_str).collect();
            let o = ParseOpts {
                family: v.family,
                restore: true,
                table: Some(v.table),
                prog: "iptables",
            };
            let parsed = match parse(&words, o) {
                Ok(p) if matches!(p.command, Command::Append(_)) => p,
                Ok(_) => continue,
                Err(e) => {
                    notes.push(format!("{}:{} not parsed: {e}", v.file, v.line));
                    t.unlowered += 1;
                    continue;
                }
            };
            let rule = &parsed.rules[0];
            let lowered = match lower_rule(rule, v.family, v.table, &v.chain) {
                Ok(l) => l,
                Err(LowerError::NotNative { what, why }) => {
                    if why.contains("not implemented yet") {
                        t.unlowered += 1;
                    } else {
                        t.not_native += 1;
                        notes.push(format!("{}:{} {what}: {why}", v.file, v.line));
                    }
                    continue;
                }
                Err(e @ LowerError::NoSet(_)) => {
                    t.not_native += 1;
                    notes.push(format!("{}:{} {e}", v.file, v.line));
                    continue;
                }
            };
            let fam = layout::nft_family(v.family);
            let tname = layout::table_name(v.table);
            let mut b = sock.batch(None);
            // A fresh table per vector: add (so the delete finds it), delete,
            // recreate.
            b.add(&Table::new(fam, &tname), 1);
            b.delete(&Table::new(fam, &tname), 1);
            b.add(&Table::new(fam, &tname), 1);
            // Lowercase chains (`prerouting`) are user chains to iptables.
            match layout::base_chain(v.table, &v.chain) {
                Some(bc) => b.add(
                    &Chain::base(fam, &tname, bc.name, bc.chain_type, bc.hook, bc.priority, 1),
                    1,
                ),
                None => b.add(&Chain::new(fam, &tname, &v.chain), 1),
            };
            if let iptables::Target::Jump(c) | iptables::Target::Goto(c) = &rule.target {
                b.add(&Chain::new(fam, &tname, c), 1);
            }
            let mut exprs = lowered.exprs;
            compile::rebase_lookups(&mut exprs, 1);
            for (i, set) in lowered.sets.iter().enumerate() {
                let (s, es) = set.to_nft(fam, &tname, 1 + i as u32);
                b.add(&s, 1);
                b.add(&es, 1);
            }
            for o in &lowered.objects {
                b.add(&o.to_nft(fam, &tname), 1);
            }
            let mut r = nft::Rule::new(fam, &tname, &v.chain, exprs);
            // The xtables checks of an nft_compat extension see the rule's
            // protocol only through NFTA_RULE_COMPAT (TCPMSS: "only valid
            // for protocol 6" without it).
            r.compat = lowered.compat;
            b.add_rule(&r, Placement::Append, false, 2);
            let rep = sock.commit(&mut b).expect("commit");
            if !rep.outcome.is_ok() {
                failures.push(format!(
                    "{}:{} kernel rejected `{}`: {:?}",
                    v.file,
                    v.line,
                    v.words.join(" "),
                    rep.outcome.errors
                ));
                continue;
            }
            let fam_name = if v.family == Family::Ipv6 {
                "ip6"
            } else {
                "ip"
            };
            let out = Proc::new("nft")
                .args(["list", "chain", fam_name, &tname, &v.chain])
                .output()
                .expect("nft");
            let listing = String::from_utf8_lossy(&out.stdout);
            let got = listing
                .lines()
                .map(str::trim)
                .filter(|l| {
                    !l.is_empty()
                        && !l.starts_with("table")
                        && !l.starts_with("chain")
                        && !l.starts_with("type ")
                        && *l != "}"
                })
                .collect::<Vec<_>>()
                .join(" ");
            if normalise(&got) == normalise(&v.want) {
                t.equal += 1;
            } else if known.contains_key(&(v.file.clone(), v.line)) {
                t.known += 1;
            } else {
                failures.push(format!(
                    "{}:{} `{}`\n    want: {}\n    got:  {}",
                    v.file,
                    v.line,
                    v.words.join(" "),
                    normalise(&v.want),
                    normalise(&got)
                ));
            }
        }
        (tally, failures, notes)
    });
    let Some((tally, failures, notes)) = res else {
        return;
    };
    println!(
        "\n{:<24} {:>7} {:>6} {:>6} {:>9} {:>10}",
        "file", "vectors", "equal", "known", "unlowered", "not-native"
    );
    for (f, t) in &tally {
        println!(
            "{:<24} {:>7} {:>6} {:>6} {:>9} {:>10}",
            f, t.vectors, t.equal, t.known, t.unlowered, t.not_native
        );
    }
    for n in &notes {
        println!("note: {n}");
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

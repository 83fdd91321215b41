//! nft_compat match infos checked against the kernel and iptables-nft: for
//! every OK vector of the modules nfkeeper runs through nft_compat
//! (`../shared/conformance/.../*.t`), the rule is loaded with `iptables-nft`
//! (or `ip6tables-nft`) in a private network namespace, dumped back with
//! the nft crate, and every `match` expression (name, revision, info bytes)
//! is compared with `compile::compat::matches::info` of the same rule parsed
//! by nfkeeper.
//!
//! The rule loaded is the vector's expected save form, which is what
//! nfkeeper's value stands for. The kernel dumps only the part of an info
//! that userspace controls (`usersize`), so the comparison covers that
//! prefix; our info must be exactly the kernel's size. Matches that
//! iptables-nft turns into native expressions (tcp, udp, mark, limit) are
//! left out of the comparison.
//!
//! Asserted: 100% for every module whose xtables match this kernel offers
//! (`/proc/net/ip*_tables_matches`). Needs root and iptables-nft; skips
//! with a reason otherwise.

use compile::compat::matches::{info, set};
use compile::compat::CompatInfo;
use iptables::ext::Match;
use iptables::parse::{parse, restore::tokenize, ParseOpts};
use iptables::print::save::{save_rule_body, CounterStyle};
use nft::{Expr, Socket};
use ruleset::{Counters, Family, TableKind};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use testkit::in_netns;

/// Modules whose vectors are checked (the .t file's module name).
const MODULES: &[&str] = &[
    "addrtype",
    "ah",
    "bpf",
    "cgroup",
    "cluster",
    "connbytes",
    "connlabel",
    "connlimit",
    "conntrack",
    "cpu",
    "dccp",
    "devgroup",
    "dst",
    "ecn",
    "eui64",
    "hashlimit",
    "hbh",
    "helper",
    "ipcomp",
    "ipv6header",
    "ipvs",
    "mh",
    "multiport",
    "nfacct",
    "osf",
    "owner",
    "physdev",
    "policy",
    "quota",
    "rateest",
    "realm",
    "recent",
    "rpfilter",
    "rt",
    "sctp",
    "set",
    "socket",
    "srh",
    "statistic",
    "string",
    "tcpmss",
    "time",
    "u32",
];

/// Matches iptables-nft 1.8 stores as native expressions.
const NATIVE_IN_IPTABLES_NFT: &[&str] = &["tcp", "udp", "mark", "limit", "among"];

struct Vector {
    module: String,
    file: String,
    line: usize,
    family: Family,
    table: TableKind,
    chain: String,
    /// The rule as written in the vector.
    input: String,
    /// Its save form.
    saved: String,
    /// Shell commands (`%` lines) that precede it in its file.
    setup: Vec<String>,
}

fn vectors(dir: &PathBuf) -> Vec<Vector> {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".t"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let path = dir.join(&file);
        let stem = file.trim_end_matches(".t");
        let (module, fams): (&str, &[Family]) = if let Some(m) = stem.strip_prefix("libxt_") {
            (m, &[Family::Ipv4, Family::Ipv6])
        } else if let Some(m) = stem.strip_prefix("libipt_") {
            (m, &[Family::Ipv4])
        } else if let Some(m) = stem.strip_prefix("libip6t_") {
            (m, &[Family::Ipv6])
        } else {
            continue;
        };
        if !MODULES.contains(&module) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let file = format!("{}/{file}", dir.file_name().unwrap().to_string_lossy());
        for &family in fams {
            let mut chains: Vec<String> = Vec::new();
            let mut table = TableKind::Filter;
            let mut setup = Vec::new();
            for (n, line) in text.lines().enumerate() {
                let line = line.trim_end();
                if let Some(c) = line.strip_prefix('%') {
                    setup.push(c.to_string());
                    continue;
                }
                if let Some(c) = line.strip_prefix(':') {
                    chains = c.split(',').map(str::to_string).collect();
                    continue;
                }
                if let Some(t) = line.strip_prefix('*') {
                    table = TableKind::from_name(t).expect("table");
                    continue;
                }
                if line.starts_with('#') {
                    continue;
                }
                let item: Vec<&str> = line.split(';').collect();
                if item.len() < 3 {
                    continue;
                }
                // OK lines, and NFT-variant OK lines.
                let ok = matches!(
                    (item[2], item.get(3), item.get(4)),
                    ("OK", None | Some(&"NFT"), _) | (_, Some(&"LEGACY"), Some(&"OK"))
                );
                if !ok {
                    continue;
                }
                let saved = if item[1] == "=" { item[0] } else { item[1] };
                for chain in &chains {
                    out.push(Vector {
                        module: module.to_string(),
                        file: file.clone(),
                        line: n + 1,
                        family,
                        table,
                        chain: chain.clone(),
                        input: item[0].to_string(),
                        saved: saved.to_string(),
                        setup: setup.clone(),
                    });
                }
            }
        }
    }
    out
}

/// The match names this kernel offers, per family.
fn kernel_matches(family: Family) -> Vec<String> {
    let f = match family {
        Family::Ipv4 => "/proc/net/ip_tables_matches",
        Family::Ipv6 => "/proc/net/ip6_tables_matches",
    };
    std::fs::read_to_string(f)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn bin(family: Family) -> &'static str {
    match family {
        Family::Ipv4 => "iptables-nft",
        Family::Ipv6 => "ip6tables-nft",
    }
}

fn run(argv: &[String]) -> Result<(), String> {
    let o = Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).trim().to_string())
    }
}

/// A set's kernel index: sets are numbered in creation order, which is
/// the order `ipset list -n` lists them in.
fn set_index(name: &str) -> Option<u16> {
    let o = Command::new("ipset").args(["list", "-n"]).output().ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    text.lines().position(|l| l == name).map(|n| n as u16)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The compat matches of the last rule of `chain`.
fn dump_last(
    sock: &mut Socket,
    family: Family,
    table: &str,
    chain: &str,
) -> Result<Vec<(String, u32, Vec<u8>)>, String> {
    let mut last = Vec::new();
    let nf = compile::layout::nft_family(family);
    sock.rules(nf, Some(table), Some(chain), |r| {
        last.clear();
        for e in r.exprs() {
            if let Expr::Match { name, rev, info } = e? {
                last.push((name, rev, info));
            }
        }
        Ok(())
    })
    .map_err(|e| format!("{e:?}"))?;
    Ok(last)
}

#[derive(Default)]
struct Tally {
    lines: usize,
    equal: usize,
    /// iptables-nft itself refused the rule (e.g. a named object missing).
    refused: usize,
    /// Equal to the rule as written, not to its save form (which iptables
    /// does not load back as the same rule).
    as_written: usize,
}

/// Compare our infos with the kernel's dump; `Err` says how they differ.
fn compare(ours: &[CompatInfo], theirs: &[(String, u32, Vec<u8>)]) -> Result<(), String> {
    if ours.len() != theirs.len() {
        return Err(format!(
            "{} compat matches from nfkeeper, {} in the kernel",
            ours.len(),
            theirs.len()
        ));
    }
    for (o, (name, rev, data)) in ours.iter().zip(theirs) {
        let short = o.info.len() < data.len() || o.info[..data.len()] != data[..];
        if o.name != name || o.rev != *rev || short {
            return Err(format!(
                "ours {} rev {} {}\n         kernel {name} rev {rev} {}",
                o.name,
                o.rev,
                hex(&o.info),
                hex(data)
            ));
        }
    }
    Ok(())
}

#[test]
fn compat_infos_equal_iptables_nft() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/iptables-1.8.11/extensions");
    if !dir.is_dir() {
        eprintln!("SKIP: conformance vectors not found");
        return;
    }
    if Command::new("iptables-nft")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIP: iptables-nft (the oracle) is not installed");
        return;
    }
    let mut vectors = vectors(&dir);
    vectors.extend(self::vectors(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/compat"),
    ));
    let verbose = std::env::var_os("COMPAT_VERBOSE").is_some();
    let res = in_netns(move || {
        let mut sock = Socket::open().expect("netlink");
        let mut tally: BTreeMap<(String, &'static str), Tally> = BTreeMap::new();
        let mut misses: Vec<String> = Vec::new();
        let mut setup_done: Vec<(String, Family, String)> = Vec::new();
        let mut skipped: Vec<String> = Vec::new();
        for v in &vectors {
            // Set-up by a tool that is not installed (ipset, nfacct):
            // the vector is skipped, said once per file.
            let missing_tool = v.setup.iter().find_map(|s| {
                let tool = s.split_whitespace().next()?;
                let known = tool == "iptables" || tool == "ip6tables";
                (!known && Command::new(tool).arg("--version").output().is_err()).then_some(tool)
            });
            if let Some(tool) = missing_tool {
                let note = format!("{}: SKIP: {tool} is not installed", v.file);
                if !skipped.contains(&note) {
                    skipped.push(note);
                }
                continue;
            }
            let fam_name = if v.family == Family::Ipv4 {
                "ip"
            } else {
                "ip6"
            };
            let t = tally.entry((v.module.clone(), fam_name)).or_default();
            t.lines += 1;
            let tname = v.table.name();
            for s in &v.setup {
                // `iptables ...` of the original harness runs as the
                // family's iptables-nft, once per family; other tools
                // (ipset, nfacct) as they are, once.
                let words = tokenize(s).unwrap();
                let mut argv = words.clone();
                let per_family = words[0] == "iptables" || words[0] == "ip6tables";
                if per_family {
                    argv[0] = bin(v.family).to_string();
                }
                let fam = if per_family { v.family } else { Family::Ipv4 };
                let key = (v.file.clone(), fam, s.clone());
                if setup_done.contains(&key) {
                    continue;
                }
                setup_done.push(key);
                if let Err(e) = run(&argv) {
                    misses.push(format!("{}: setup `{s}`: {e}", v.file));
                }
            }
            let words = tokenize(&v.input).expect("tokenize");
            let mut argv: Vec<&str> = vec!["-A", &v.chain];
            argv.extend(words.iter().map(String::as_str));
            let o = ParseOpts {
                family: v.family,
                restore: true,
                table: Some(v.table),
                prog: "iptables",
            };
            let rule = match parse(&argv, o) {
                Ok(p) => p.rules.into_iter().next().expect("a rule"),
                Err(e) => {
                    misses.push(format!(
                        "{}:{} [{fam_name} {}] nfkeeper refuses `{}`: {}",
                        v.file, v.line, v.chain, v.input, e.msg
                    ));
                    continue;
                }
            };
            // The vector's save form is what nfkeeper prints too (the
            // conformance test checks iptables' own vectors; this covers
            // the extra ones).
            let mut printed = format!("-A {}", v.chain);
            save_rule_body(
                &mut printed,
                v.family,
                &rule,
                Counters::default(),
                CounterStyle::None,
            );
            if printed != format!("-A {} {}", v.chain, v.saved) {
                misses.push(format!(
                    "{}:{} nfkeeper prints `{printed}`, the vector says `{}`",
                    v.file, v.line, v.saved
                ));
            }
            let mut ours = Vec::new();
            let mut missing = None;
            for m in &rule.matches {
                if NATIVE_IN_IPTABLES_NFT.contains(&m.name()) {
                    continue;
                }
                let i = match m {
                    Match::Set(s) => set_index(&s.name).map(|n| set::info(s, n)),
                    _ => info(m, v.family),
                };
                match i {
                    Some(i) => ours.push(i),
                    None => missing = Some(m.name()),
                }
            }
            let mut load = vec![
                bin(v.family).to_string(),
                "-t".into(),
                tname.into(),
                "-A".into(),
                v.chain.clone(),
            ];
            load.extend(tokenize(&v.saved).expect("tokenize"));
            if let Err(e) = run(&load) {
                t.refused += 1;
                if verbose {
                    eprintln!(
                        "{}:{} [{fam_name}] iptables-nft refused: {e}",
                        v.file, v.line
                    );
                }
                continue;
            }
            let theirs = dump_last(&mut sock, v.family, tname, &v.chain).expect("dump");
            // Delete just this rule: set-up rules (estimators) stay.
            load[3] = "-D".into();
            if let Err(e) = run(&load) {
                misses.push(format!("{}:{} cannot delete the rule: {e}", v.file, v.line));
            }
            // Where iptables' save form does not load back as what was
            // written (e.g. `-m ipcomp --ipcompspi :` prints as
            // `-m ipcomp`, which loads as CPI 0), the rule as written is
            // what nfkeeper's value stands for.
            let mut theirs = theirs;
            let mut as_written = false;
            if missing.is_none() && compare(&ours, &theirs).is_err() && v.input != v.saved {
                as_written = true;
                load[3] = "-A".into();
                load.truncate(5);
                load.extend(words.iter().cloned());
                if run(&load).is_ok() {
                    theirs = dump_last(&mut sock, v.family, tname, &v.chain).expect("dump");
                    load[3] = "-D".into();
                    let _ = run(&load);
                }
            }
            let verdict = match missing {
                Some(m) => Err(format!(
                    "no compat encoder for -m {m}; kernel: {}",
                    theirs
                        .iter()
                        .map(|(n, r, d)| format!("{n} rev {r} {}", hex(d)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                None => compare(&ours, &theirs),
            };
            match verdict {
                Ok(()) => {
                    t.equal += 1;
                    if as_written {
                        t.as_written += 1;
                        if verbose {
                            eprintln!("{}:{} equal to the rule as written", v.file, v.line);
                        }
                    }
                }
                Err(why) => misses.push(format!(
                    "{}:{} [{fam_name} {}] `{}`\n    {why}",
                    v.file, v.line, v.chain, v.saved
                )),
            }
        }
        (tally, misses, skipped)
    });
    let Some((tally, misses, skipped)) = res else {
        return;
    };
    for s in &skipped {
        println!("{s}");
    }
    let offered = |f: &str| {
        kernel_matches(if f == "ip" {
            Family::Ipv4
        } else {
            Family::Ipv6
        })
    };
    println!(
        "\n{:<12} {:<4} {:>6} {:>6} {:>8} {:>10}  kernel",
        "module", "fam", "lines", "equal", "refused", "as-written"
    );
    let mut failed = Vec::new();
    for ((m, f), t) in &tally {
        let has = offered(f).iter().any(|k| k == m);
        let checked = t.lines - t.refused;
        println!(
            "{:<12} {:<4} {:>6} {:>6} {:>8} {:>10}  {}",
            m,
            f,
            t.lines,
            t.equal,
            t.refused,
            t.as_written,
            if has { "offers it" } else { "lacks it" }
        );
        if has && t.equal != checked {
            failed.push(format!("{m}/{f}"));
        }
    }
    let n = if verbose {
        misses.len()
    } else {
        misses.len().min(40)
    };
    for miss in &misses[..n] {
        println!("{miss}");
    }
    assert!(failed.is_empty(), "compat info misses in: {failed:?}");
    let other: Vec<&String> = misses.iter().filter(|m| !m.contains("    ")).collect();
    assert!(other.is_empty(), "{other:#?}");
}

/// An nft_compat `match` expression carrying `c`.
fn match_expr(c: &CompatInfo) -> Expr {
    Expr::Match {
        name: c.name.to_string(),
        rev: c.rev,
        info: c.info.clone(),
    }
}

/// `-m limit`, which iptables-nft always stores as a native `limit`
/// expression, so there is no iptables-nft compat info to compare with:
/// every OK vector's info is loaded through nft_compat as nfkeeper would
/// load it, and the kernel must accept it (xt_limit checks the rate) and
/// dump the same bytes back.
#[test]
fn limit_infos_load_through_nft_compat() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/iptables-1.8.11/extensions/libxt_limit.t");
    let Ok(text) = std::fs::read_to_string(&dir) else {
        eprintln!("SKIP: conformance vectors not found");
        return;
    };
    let mut rules = Vec::new();
    for line in text.lines() {
        let item: Vec<&str> = line.split(';').collect();
        if item.len() >= 3 && item[2] == "OK" && item.get(3).is_none() {
            rules.push(item[0].to_string());
        }
    }
    assert!(!rules.is_empty(), "no OK limit vectors");
    let n = rules.len();
    let res = in_netns(move || {
        let mut sock = Socket::open().expect("netlink");
        let fam = nft::Family::Ipv4;
        let mut failures = Vec::new();
        for r in &rules {
            let words = tokenize(r).expect("tokenize");
            let mut argv: Vec<&str> = vec!["-A", "INPUT"];
            argv.extend(words.iter().map(String::as_str));
            let o = ParseOpts {
                family: Family::Ipv4,
                restore: true,
                table: Some(TableKind::Filter),
                prog: "iptables",
            };
            let rule = parse(&argv, o).expect("parse").rules.remove(0);
            let ours = info(&rule.matches[0], Family::Ipv4).expect("limit info");
            let mut b = sock.batch(None);
            b.add(&nft::Table::new(fam, "nfkcompat"), 1);
            b.delete(&nft::Table::new(fam, "nfkcompat"), 1);
            b.add(&nft::Table::new(fam, "nfkcompat"), 1);
            b.add(&nft::Chain::new(fam, "nfkcompat", "c"), 1);
            let nr = nft::Rule::new(fam, "nfkcompat", "c", vec![match_expr(&ours)]);
            b.add_rule(&nr, nft::batch::Placement::Append, false, 2);
            let rep = sock.commit(&mut b).expect("commit");
            if !rep.outcome.is_ok() {
                failures.push(format!("`{r}`: kernel refused: {:?}", rep.outcome.errors));
                continue;
            }
            let back = dump_last(&mut sock, Family::Ipv4, "nfkcompat", "c").expect("dump");
            if let Err(why) = compare(std::slice::from_ref(&ours), &back) {
                failures.push(format!("`{r}`: {why}"));
            }
        }
        failures
    });
    let Some(failures) = res else { return };
    println!("limit: {n} vectors loaded through nft_compat");
    assert!(failures.is_empty(), "{failures:#?}");
}

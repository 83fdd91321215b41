//! The iptables 1.8.11 rule test vectors (`../shared/conformance/.../*.t`):
//! every OK line of a supported module must print back exactly as expected,
//! every FAIL line must be rejected, and lines using an unsupported module must
//! be rejected. Prints a per-module table.
//!
//! Set `CONFORMANCE_MODULE=tcp,udp` to run only some modules (development);
//! `CONFORMANCE_VERBOSE=1` lists every miss.

use iptables::ext::{match_names, target_names};
use iptables::parse::{parse, Command, ParseOpts};
use iptables::print::save::{save_rule_body, CounterStyle};
use ruleset::{Counters, Family, TableKind};
use std::path::PathBuf;

/// Modules the product promises (issue: foundation), all at 100%.
const REQUIRED: &[&str] = &[
    "standard",
    "tcp",
    "udp",
    "icmp",
    "icmp6",
    "sctp",
    "multiport",
    "conntrack",
    "state",
    "comment",
    "limit",
    "recent",
    "addrtype",
    "iprange",
    "mac",
    "mark",
    "connmark",
    "set",
    "statistic",
    "nfacct",
    "rpfilter",
    "ttl",
    "hl",
    "length",
    "pkttype",
    "owner",
    "physdev",
    "tos",
    "dscp",
    "ah",
    "esp",
    "frag",
    "REJECT",
    "LOG",
    "NFLOG",
    "MASQUERADE",
    "SNAT",
    "DNAT",
    "REDIRECT",
    "MARK",
    "CONNMARK",
    "CT",
    "NOTRACK",
    "TCPMSS",
    "CHECKSUM",
    "TRACE",
];

/// FAIL vectors whose rejection comes from the kernel, not the syntax: the
/// named ipset / nfacct object does not exist. The model accepts any name;
/// the kernel backend's conformance test checks these. (file, rule)
const NEEDS_KERNEL_OBJECTS: &[(&str, &str)] = &[
    ("libxt_set.t", "-m set --match-set foo src,dst"),
    ("libxt_nfacct.t", "-m nfacct --nfacct-name wrong"),
    ("libxt_SET.t", "-j SET --add-set foo src,dst"),
];

pub fn conformance_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("NFKEEPER_CONFORMANCE_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/conformance/iptables-1.8.11"),
    };
    dir.is_dir().then_some(dir)
}

#[derive(Default)]
struct Tally {
    lines: usize,
    passed: usize,
    misses: Vec<String>,
}

fn module_of(file: &str) -> (String, Vec<Family>) {
    let stem = file.trim_end_matches(".t");
    if stem == "iptables" {
        return ("standard".into(), vec![Family::Ipv4]);
    }
    if let Some(m) = stem.strip_prefix("libxt_") {
        return (m.into(), vec![Family::Ipv4, Family::Ipv6]);
    }
    if let Some(m) = stem.strip_prefix("libipt_") {
        return (m.into(), vec![Family::Ipv4]);
    }
    if let Some(m) = stem.strip_prefix("libip6t_") {
        return (m.into(), vec![Family::Ipv6]);
    }
    (stem.into(), vec![])
}

fn supported(module: &str) -> bool {
    module == "standard" || match_names().contains(&module) || target_names().contains(&module)
}

/// Try a rule as `-A CHAIN RULE` in `table`; Ok(saved text after -A CHAIN).
fn try_rule(family: Family, table: TableKind, chain: &str, rule: &str) -> Result<String, String> {
    let words = iptables::parse::restore::tokenize(rule).map_err(|e| e.to_string())?;
    let mut argv: Vec<&str> = vec!["-A", chain];
    argv.extend(words.iter().map(String::as_str));
    let o = ParseOpts {
        family,
        restore: true,
        table: Some(table),
        prog: "iptables",
    };
    let parsed = parse(&argv, o).map_err(|e| e.to_string())?;
    if parsed.command != Command::Append(chain.into()) {
        return Err("not an append".into());
    }
    let mut out = String::new();
    for (i, r) in parsed.rules.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("-A ");
        out.push_str(chain);
        save_rule_body(&mut out, family, r, Counters::default(), CounterStyle::None);
    }
    Ok(out)
}

#[test]
fn conformance_vectors() {
    let Some(dir) = conformance_dir() else {
        eprintln!("SKIP: conformance vectors not found (../shared/conformance/iptables-1.8.11); set NFKEEPER_CONFORMANCE_DIR");
        return;
    };
    let only: Option<Vec<String>> = std::env::var("CONFORMANCE_MODULE")
        .ok()
        .map(|s| s.split(',').map(str::to_string).collect());
    let verbose = std::env::var_os("CONFORMANCE_VERBOSE").is_some();
    let mut files: Vec<_> = std::fs::read_dir(dir.join("extensions"))
        .expect("read extensions dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".t"))
        .collect();
    files.sort();
    let mut table: std::collections::BTreeMap<String, Tally> = Default::default();
    let mut unsupported: std::collections::BTreeMap<String, Tally> = Default::default();
    let mut deferred = 0usize;
    for file in &files {
        let (module, families) = module_of(file);
        if let Some(only) = &only {
            if !only.contains(&module) {
                continue;
            }
        }
        let text = std::fs::read_to_string(dir.join("extensions").join(file)).expect("read .t");
        let is_supported = supported(&module);
        for family in families {
            let mut chains: Vec<String> = Vec::new();
            let mut tbl = TableKind::Filter;
            for (lineno, line) in text.lines().enumerate() {
                let line = line.trim_end();
                if line.is_empty()
                    || line.starts_with('#')
                    || line.starts_with('@')
                    || line.starts_with('%')
                {
                    continue;
                }
                if let Some(c) = line.strip_prefix(':') {
                    chains = c.split(',').map(str::to_string).collect();
                    continue;
                }
                if let Some(t) = line.strip_prefix('*') {
                    tbl = TableKind::from_name(t).expect("table name");
                    continue;
                }
                let item: Vec<&str> = line.split(';').collect();
                if item.len() < 3 {
                    continue;
                }
                let mut res = item[2];
                if item.len() > 3 && item[3] == "LEGACY" {
                    // iptables-test.py treats any result other than OK and
                    // FAIL (e.g. a stray "=") as NOMATCH.
                    res = match item.get(4) {
                        Some(&"OK") => "OK",
                        Some(&"FAIL") => "FAIL",
                        Some(_) => "NOMATCH",
                        None => match res {
                            "OK" => "FAIL",
                            _ => "OK",
                        },
                    };
                }
                for chain in &chains {
                    let expect = if item[1] == "=" { item[0] } else { item[1] };
                    let want = format!("-A {chain} {expect}").trim_end().to_string();
                    if NEEDS_KERNEL_OBJECTS.contains(&(file.as_str(), item[0])) {
                        deferred += 1;
                        continue;
                    }
                    let got = try_rule(family, tbl, chain, item[0]);
                    let ok = match (res, &got) {
                        ("OK", Ok(text)) => *text == want,
                        ("NOMATCH", Ok(text)) => *text != want,
                        ("FAIL", Err(_)) => true,
                        _ => false,
                    };
                    let tally = if is_supported {
                        table.entry(module.clone()).or_default()
                    } else {
                        unsupported.entry(module.clone()).or_default()
                    };
                    tally.lines += 1;
                    if ok || (!is_supported && got.is_err()) {
                        tally.passed += 1;
                    } else {
                        tally.misses.push(format!(
                            "{file}:{} [{family:?} {chain}] {res}: `{}`\n    want: {want}\n    got:  {got:?}",
                            lineno + 1,
                            item[0]
                        ));
                    }
                }
            }
        }
    }
    println!("\n{:<14} {:>6} {:>6}", "module", "lines", "passed");
    let mut failed = Vec::new();
    for (m, t) in &table {
        println!(
            "{:<14} {:>6} {:>6}{}",
            m,
            t.lines,
            t.passed,
            if t.passed == t.lines {
                ""
            } else {
                "  <-- misses"
            }
        );
        if t.passed != t.lines {
            failed.push(m.clone());
        }
    }
    println!("\nunsupported modules (lines, rejected as required):");
    let mut accepted_unsupported = Vec::new();
    for (m, t) in &unsupported {
        println!("{:<14} {:>6} {:>6}", m, t.lines, t.passed);
        // A line of an unsupported module that names it (-m X / -j X) must
        // be rejected like an unknown extension.
        for miss in &t.misses {
            if miss.contains(&format!("-m {m} "))
                || miss.contains(&format!("-j {m} "))
                || miss.contains(&format!("-m {m}`"))
                || miss.contains(&format!("-j {m}`"))
            {
                accepted_unsupported.push(miss.clone());
            }
        }
    }
    println!("\nlines deferred to the kernel backend (named kernel objects): {deferred}");
    let missing: Vec<_> = REQUIRED.iter().filter(|m| !supported(m)).collect();
    println!("\nrequired modules not yet supported: {missing:?}");
    for (m, t) in table.iter().filter(|(_, t)| !t.misses.is_empty()) {
        let n = if verbose {
            t.misses.len()
        } else {
            5.min(t.misses.len())
        };
        println!("\n-- {m}: {} misses (showing {n})", t.misses.len());
        for miss in &t.misses[..n] {
            println!("{miss}");
        }
    }
    // Lines of unsupported modules that were accepted are a defect only when
    // the line actually uses the module (`-m X` / `-j X`).
    assert!(
        failed.is_empty(),
        "conformance misses in supported modules: {failed:?}"
    );
    if only.is_none() && std::env::var_os("CONFORMANCE_ALLOW_MISSING").is_none() {
        assert!(
            missing.is_empty(),
            "required modules not supported: {missing:?}"
        );
    }
}

//! `nfkeeper demo` and `nfkeeper load`: restore a ruleset into the model and
//! save it back, with timings. Until the kernel backend lands this is the
//! main job: it shows the model's cost per rule at scale.

use iptables::exec::{restore, save_table, RestoreOpts};
use iptables::Rule;
use ruleset::{Family, Ruleset, TableKind};
use std::io::Write;
use std::time::Instant;

fn arg_value(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// Load `text`, save it back; print the save text (if `print`) and timings.
fn load_and_save(text: &str, family: Family, counters: bool, print: bool, label: &str) -> i32 {
    let rss0 = rss_bytes();
    let mut rs: Ruleset<Rule> = Ruleset::new();
    let o = RestoreOpts {
        family,
        noflush: false,
        counters,
        test: false,
        table: None,
        prog: "nfkeeper",
    };
    let t0 = Instant::now();
    let stats = match restore(&mut rs, text, &o) {
        Ok(s) => s,
        Err(e) => {
            eprint!("{}", e.render("nfkeeper"));
            return e.exit_code();
        }
    };
    let load = t0.elapsed();
    let rss_model = rss_bytes().saturating_sub(rss0);
    let t1 = Instant::now();
    let mut out = String::with_capacity(text.len() + 1024);
    for kind in TableKind::ALL {
        let t = rs.table(family, kind);
        if text.contains(&format!("*{}", kind.name())) {
            save_table(t, counters, &mut out);
        }
    }
    let save = t1.elapsed();
    if print {
        let _ = std::io::stdout().write_all(out.as_bytes());
    }
    let rules = stats.rules.max(1);
    let overhead: usize = TableKind::ALL
        .iter()
        .map(|k| rs.table(family, *k))
        .filter(|t| t.rule_count() > 0)
        .map(|t| t.model_overhead_bytes())
        .sum();
    let per_rule = std::mem::size_of::<Rule>() + overhead / rules;
    eprintln!(
        "{label}: {} lines, {} rules in {} table(s)\n  restore into model: {:>9.3} ms ({:.0} rules/s)\n  save back:          {:>9.3} ms ({} bytes)\n  model memory:       ~{} bytes/rule (rule {} + model {}; matches' heap parts extra); RSS grew {} bytes/rule",
        stats.lines,
        stats.rules,
        stats.tables,
        load.as_secs_f64() * 1e3,
        stats.rules as f64 / load.as_secs_f64().max(1e-9),
        save.as_secs_f64() * 1e3,
        out.len(),
        per_rule,
        std::mem::size_of::<Rule>(),
        overhead / rules,
        rss_model / rules,
    );
    let same = normalise(text) == normalise(&out);
    eprintln!(
        "  round trip:         {}",
        if same {
            "identical"
        } else {
            "differs (input not in canonical form)"
        }
    );
    0
}

/// Lines without comments and blank lines, for the round-trip verdict.
fn normalise(s: &str) -> Vec<&str> {
    s.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect()
}

/// `nfkeeper demo [--rules N] [--print]`.
pub fn demo(args: &[String]) -> i32 {
    let n: usize = arg_value(args, "--rules")
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let print = args.iter().any(|a| a == "--print");
    eprintln!("nfkeeper demo: in-memory model only (the kernel is not touched)\n");
    let t = Instant::now();
    let cf = workload::cloud_foundry(n);
    let kp = workload::kube_proxy(n);
    eprintln!(
        "generated {} + {} bytes of restore input in {:.1} ms\n",
        cf.len(),
        kp.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    let a = load_and_save(
        &cf,
        Family::Ipv4,
        false,
        print,
        "Cloud Foundry shape (-A FORWARD -s 10.a.b.c/32 -j ACCEPT)",
    );
    if a != 0 {
        return a;
    }
    load_and_save(
        &kp,
        Family::Ipv4,
        false,
        print,
        "kube-proxy shape (comments, statistic, DNAT, MARK)",
    )
}

/// `nfkeeper load [-6] [-c] [--quiet] FILE`.
pub fn load(args: &[String]) -> i32 {
    let family = if args.iter().any(|a| a == "-6") {
        Family::Ipv6
    } else {
        Family::Ipv4
    };
    let counters = args.iter().any(|a| a == "-c");
    let quiet = args.iter().any(|a| a == "--quiet");
    let Some(path) = args.iter().find(|a| !a.starts_with('-')) else {
        eprintln!("usage: nfkeeper load [-6] [-c] [--quiet] FILE");
        return 2;
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("nfkeeper: can't read {path}: {e}");
            return 1;
        }
    };
    load_and_save(&text, family, counters, !quiet, path)
}

/// Resident set size of this process (Linux /proc), 0 where unknown.
fn rss_bytes() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<usize>().ok())
        })
        .map(|pages| pages * 4096)
        .unwrap_or(0)
}

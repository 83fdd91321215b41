//! The iptables-save dumps of the conformance folder restore into the model
//! and save back byte for byte (comment lines aside; tables in the order of
//! the input, as each dump was written by a different iptables).

use iptables::exec::{restore, save_table, RestoreOpts};
use iptables::Rule;
use ruleset::{Family, Ruleset, TableKind};
use std::path::PathBuf;

fn dumps_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("NFKEEPER_CONFORMANCE_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/conformance/iptables-1.8.11"),
    };
    let d = dir.join("dumps");
    d.is_dir().then_some(d)
}

fn without_comments(s: &str) -> String {
    s.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn dumps_round_trip() {
    let Some(dir) = dumps_dir() else {
        eprintln!(
            "SKIP: conformance dumps not found (../shared/conformance/iptables-1.8.11/dumps)"
        );
        return;
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("read dumps")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(!names.is_empty());
    let mut failures = Vec::new();
    for name in &names {
        let text = std::fs::read_to_string(dir.join(name)).expect("read dump");
        let family = if name.contains("ip6") {
            Family::Ipv6
        } else {
            Family::Ipv4
        };
        let with_counters = text.lines().any(|l| l.starts_with('['));
        let mut rs: Ruleset<Rule> = Ruleset::new();
        let o = RestoreOpts {
            family,
            noflush: false,
            counters: true,
            test: false,
            table: None,
            prog: "iptables-restore",
        };
        if let Err(e) = restore(&mut rs, &text, &o) {
            failures.push(format!(
                "{name}: restore failed: {}",
                e.render("iptables-restore")
            ));
            continue;
        }
        let mut out = String::new();
        for line in text.lines() {
            if let Some(t) = line.strip_prefix('*').and_then(TableKind::from_name) {
                save_table(rs.table(family, t), with_counters, &mut out);
            }
        }
        // iptables 1.8 saves protocols outside its own short list by number
        // (`-p 47`); the dumps were written by older versions that printed
        // the /etc/protocols name. iptables' own dump test maps it the same way.
        let out = out.replace("-p 47 ", "-p gre ");
        let want = without_comments(&text);
        if out != want {
            let diff: Vec<String> = want
                .lines()
                .zip(out.lines())
                .filter(|(a, b)| a != b)
                .take(5)
                .map(|(a, b)| format!("  want: {a}\n  got:  {b}"))
                .collect();
            failures.push(format!(
                "{name}: save differs ({} vs {} lines)\n{}",
                want.lines().count(),
                out.lines().count(),
                diff.join("\n")
            ));
        } else {
            println!("{name}: identical ({} lines)", want.lines().count());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

//! `References:` of `ipset list` against the real thing: the same sets
//! and rules written with ipset + iptables-legacy in one namespace and
//! with nfkeeper in another, every set's reference count compared after
//! each step (sets used by 0, 1 and 2 rules, a `-j SET` naming one set
//! twice, rules in two tables, rules removed). Needs root, `ip`, `ipset`
//! and `iptables-legacy` (skips otherwise).

mod common;

use common::Ns;
use std::process::Command;

/// Whether `prog` runs here.
fn have(prog: &str, arg: &str) -> bool {
    Command::new(prog)
        .arg(arg)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// (set name, references) of each set in `ipset list` text, in order.
fn references(list: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut name = String::new();
    for l in list.lines() {
        if let Some(n) = l.strip_prefix("Name: ") {
            name = n.to_string();
        }
        if let Some(r) = l.strip_prefix("References: ") {
            out.push((name.clone(), r.to_string()));
        }
    }
    out
}

fn stdout_of(o: std::process::Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Each step: the command line (`ipset ...` or `iptables ...`, run as
/// ipset/iptables-legacy in the oracle and through nfkeeper in ours),
/// then the references every set must have after it.
const STEPS: &[(&str, &[(&str, &str)])] = &[
    ("ipset create a hash:ip", &[("a", "0")]),
    ("ipset create b hash:ip", &[("a", "0"), ("b", "0")]),
    (
        "ipset create c hash:net",
        &[("a", "0"), ("b", "0"), ("c", "0")],
    ),
    (
        "iptables -A INPUT -m set --match-set b src -j ACCEPT",
        &[("a", "0"), ("b", "1"), ("c", "0")],
    ),
    (
        "iptables -A INPUT -p tcp -m set --match-set c src -j DROP",
        &[("a", "0"), ("b", "1"), ("c", "1")],
    ),
    (
        "iptables -t mangle -A PREROUTING -m set --match-set c dst -j ACCEPT",
        &[("a", "0"), ("b", "1"), ("c", "2")],
    ),
    (
        "iptables -A FORWARD -j SET --add-set a src --del-set a dst",
        &[("a", "2"), ("b", "1"), ("c", "2")],
    ),
    (
        "iptables -D INPUT -m set --match-set b src -j ACCEPT",
        &[("a", "2"), ("b", "0"), ("c", "2")],
    ),
    (
        "iptables -t mangle -F",
        &[("a", "2"), ("b", "0"), ("c", "1")],
    ),
    ("iptables -F", &[("a", "0"), ("b", "0"), ("c", "0")]),
];

#[test]
fn references_match_ipset_with_iptables_legacy() {
    if !common::prerequisites() {
        return;
    }
    if !have("ipset", "version") || !have("iptables-legacy", "-V") {
        eprintln!("SKIP: the oracle needs ipset and iptables-legacy");
        return;
    }
    let oracle = Ns::new("refs-o");
    let ours = Ns::new("refs-n");
    for (line, want) in STEPS {
        let mut words: Vec<&str> = line.split_whitespace().collect();
        if words[0] == "iptables" {
            words[0] = "iptables-legacy";
        }
        stdout_of(oracle.exec(&words), &format!("oracle `{line}`"));
        ours.nfk(line);
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(n, r)| (n.to_string(), r.to_string()))
            .collect();
        let theirs = references(&stdout_of(oracle.exec(&["ipset", "list"]), "ipset list"));
        assert_eq!(theirs, want, "ipset after `{line}` (the table is wrong)");
        let whole = references(&stdout_of(ours.nfk_output("ipset list"), "nfkeeper list"));
        assert_eq!(whole, want, "nfkeeper `ipset list` after `{line}`");
        for (name, r) in &want {
            let one = references(&stdout_of(
                ours.nfk_output(&format!("ipset list {name}")),
                "nfkeeper list SET",
            ));
            assert_eq!(
                one,
                vec![(name.clone(), r.clone())],
                "nfkeeper `ipset list {name}` after `{line}`"
            );
        }
    }
    for n in ["a", "b", "c"] {
        oracle.exec(&["ipset", "destroy", n]);
    }
}

//! Differential packet test against iptables-legacy: generated rulesets
//! (gen.rs) with long runs of every key kind nfkeeper compiles into sets
//! and verdict maps are loaded with nfkeeper (run compilation on) into one
//! fresh namespace and with iptables-legacy-restore into another; the same
//! probe packets (probe.rs) go through both; every packet's fate and
//! `iptables-save -c` — rule counters and the built-in chains' policy
//! counters — must agree.
//!
//! Seeds: 1..=8 by default (about 5 s in release); NFKEEPER_DIFF_SEEDS=N
//! runs 1..=N, NFKEEPER_DIFF_SEEDS=A,B,C those seeds. Skips without root,
//! `ip` or iptables-legacy.

#[path = "../common/mod.rs"]
mod common;
mod gen;
mod probe;

use common::Ns;
use probe::Fate;
use std::io::Write as _;
use std::process::{Command, Output, Stdio};

const PROBES: usize = 1500;

fn seeds() -> Vec<u64> {
    match std::env::var("NFKEEPER_DIFF_SEEDS") {
        Ok(v) if v.contains(',') => v
            .split(',')
            .map(|s| s.trim().parse().expect("seed"))
            .collect(),
        Ok(v) => (1..=v.trim().parse::<u64>().expect("NFKEEPER_DIFF_SEEDS")).collect(),
        Err(_) => (1..=8).collect(),
    }
}

fn have(prog: &str) -> bool {
    Command::new(prog)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `ARGV` in namespace `ns` with `stdin`, nfkeeper's settings in the
/// environment (direct mode, no daemon, compilation `compile`).
fn run(ns: &Ns, argv: &[&str], stdin: &str, compile: &str) -> Output {
    let mut c = Command::new("ip")
        .args(["netns", "exec", &ns.name])
        .args(argv)
        .env("NFKEEPER_MODE", "direct")
        .env("NFKEEPER_COMPILE", compile)
        .env_remove("NFKEEPER_OFFLINE_STATE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    c.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let o = c.wait_with_output().expect("wait");
    assert!(
        o.status.success(),
        "{argv:?} in {}: {}",
        ns.name,
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// A namespace whose `lo` is up and where all of 10/8 is local.
fn netns(tag: &str) -> Ns {
    let ns = Ns::new(tag);
    ns.ip("link set lo up");
    ns.ip("route add local 10.0.0.0/8 dev lo");
    ns
}

/// `iptables-save -c` output without its dated comment lines.
fn saved(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Sum of the policy counters' packets in a save.
fn policy_packets(save: &str) -> u64 {
    save.lines()
        .filter(|l| l.starts_with(':') && !l.contains(" - ["))
        .filter_map(|l| l.rsplit_once('[')?.1.split(':').next()?.parse::<u64>().ok())
        .sum()
}

fn first_difference(a: &str, b: &str) -> String {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut out = String::new();
    for i in 0..la.len().max(lb.len()) {
        let (x, y) = (la.get(i).copied(), lb.get(i).copied());
        if x != y {
            out.push_str(&format!(
                "line {}:\n  nfkeeper: {x:?}\n  legacy:   {y:?}\n",
                i + 1
            ));
            if out.len() > 3000 {
                break;
            }
        }
    }
    out
}

#[test]
fn nfkeeper_and_legacy_agree_on_every_packet_and_counter() {
    if !common::prerequisites() {
        return;
    }
    if !have("iptables-legacy-restore") || !have("iptables-legacy-save") {
        eprintln!("SKIP: iptables-legacy is not installed");
        return;
    }
    let nfk = env!("CARGO_BIN_EXE_nfkeeper");
    let (mut rules, mut sets, mut packets, mut policy) = (0, 0, 0, 0);
    let mut fates = [0usize; 3];
    for seed in seeds() {
        // Half the seeds with the default shortest run, half with runs of
        // 4, so that short runs compile too.
        let compile = if seed % 2 == 0 { "runs" } else { "runs:4" };
        let rs = gen::ruleset(seed);
        let probes = gen::probes(seed, &rs.keys, PROBES);
        let a = netns(&format!("dn{seed}"));
        let b = netns(&format!("dl{seed}"));
        run(&a, &[nfk, "iptables-restore"], &rs.restore, compile);
        run(&b, &["iptables-legacy-restore"], &rs.restore, compile);
        let nft = run(&a, &["nft", "list", "ruleset"], "", compile);
        let compiled = String::from_utf8_lossy(&nft.stdout).matches(" @").count();

        let fa = probe::run(&format!("/run/netns/{}", a.name), &probes);
        let fb = probe::run(&format!("/run/netns/{}", b.name), &probes);
        let sa = saved(&run(&a, &[nfk, "iptables-save", "-c"], "", compile));
        let sb = saved(&run(&b, &["iptables-legacy-save", "-c"], "", compile));

        let wrong: Vec<String> = fa
            .iter()
            .zip(&fb)
            .enumerate()
            .filter(|(_, (x, y))| x != y)
            .take(10)
            .map(|(i, (x, y))| format!("probe {i} {:?}: nfkeeper {x:?}, legacy {y:?}", probes[i]))
            .collect();
        let context = || {
            format!(
                "seed {seed} (NFKEEPER_DIFF_SEEDS={seed}, compile {compile})\n--- ruleset ---\n{}",
                rs.restore
            )
        };
        assert!(
            wrong.is_empty(),
            "verdicts differ:\n{}\n{}",
            wrong.join("\n"),
            context()
        );
        assert!(
            sa == sb,
            "iptables-save -c differs:\n{}\n{}",
            first_difference(&sa, &sb),
            context()
        );
        if let Ok(dir) = std::env::var("NFKEEPER_DIFF_DUMP") {
            let _ = std::fs::write(format!("{dir}/seed{seed}.save"), &sa);
            let _ = std::fs::write(format!("{dir}/seed{seed}.nft"), &nft.stdout);
        }
        rules += rs.rules;
        sets += compiled;
        packets += probes.len();
        policy += policy_packets(&sb);
        for f in &fa {
            fates[match f {
                Fate::DroppedInOutput => 0,
                Fate::DroppedInInput => 1,
                Fate::Delivered => 2,
            }] += 1;
        }
        eprintln!(
            "seed {seed}: {} rules, {compiled} compiled lookups, {} probes agree",
            rs.rules,
            probes.len()
        );
    }
    eprintln!(
        "{rules} rules, {sets} compiled lookups, {packets} probes \
         (dropped in OUTPUT {}, in INPUT {}, delivered {}), {policy} packets at a policy",
        fates[0], fates[1], fates[2]
    );
    // The test must be able to fail: the rulesets compiled, probes took
    // every path, and policies counted packets.
    assert!(sets > 0, "no run was compiled");
    assert!(
        fates.iter().all(|&n| n > 0),
        "some fate never happened: {fates:?}"
    );
    assert!(policy > 0, "no packet reached a policy");
}

//! `nfkeeper migrate --from legacy` against the kernel, iptables-legacy
//! the oracle: each case loads a ruleset with `iptables-legacy-restore`
//! (or `ip6tables-legacy-restore`, or one `iptables-legacy -A` per
//! conformance vector) in a fresh network namespace, then checks that
//! `--dry-run` changes nothing, that migrate moves it (nfkeeper's
//! iptables-save, counters zeroed and `#` lines dropped, equals
//! iptables-legacy-save's from before, table by table), that the legacy
//! tables are left empty with ACCEPT policies, that `nfkeeper verify` is
//! clean, and that a second migrate finds nothing to do. Refusals (an
//! extension not decoded, an nfkeeper table in use, a rule nfkeeper's
//! tables cannot hold) change nothing. Skips without root or
//! iptables-legacy; the vector and dump cases skip without
//! `../shared/conformance`.

mod common;

use common::{prerequisites, Ns};
use std::collections::BTreeMap;
use std::process::Command;

mod migrate_support;

use migrate_support::{
    conformance, load_vectors, migrate_from, nfk_save, oracle_restore, oracle_save, prog, tables,
    text, NFK,
};

fn legacy_restore(ns: &Ns, v6: bool, rules: &str) {
    oracle_restore(ns, v6, "legacy", rules)
}

fn legacy_save(ns: &Ns, v6: bool) -> BTreeMap<String, Vec<String>> {
    oracle_save(ns, v6, "legacy")
}

fn migrate(ns: &Ns, args: &[&str]) -> (i32, String, String) {
    migrate_from(ns, "legacy", args)
}

fn have_legacy() -> bool {
    if !prerequisites() {
        return false;
    }
    let ok = Command::new("iptables-legacy")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("SKIP: iptables-legacy (the oracle) is not installed");
    }
    ok
}

/// Every table of `before` (that is not empty) is empty in legacy now.
fn assert_legacy_emptied(ns: &Ns, v6: bool) {
    for (t, lines) in legacy_save(ns, v6) {
        for l in &lines {
            let ok = l.starts_with('*')
                || l == "COMMIT"
                || (l.starts_with(':') && l.ends_with(" ACCEPT [0:0]"));
            assert!(ok, "legacy {t} not emptied: {l}");
        }
    }
}

/// `got` (nfkeeper) equals `want` (the oracle), or a panic naming the
/// lines on one side only.
fn same_lines(got: &[String], want: &[String], what: &str) {
    if got != want {
        let missing: Vec<&String> = want.iter().filter(|l| !got.contains(l)).collect();
        let extra: Vec<&String> = got.iter().filter(|l| !want.contains(l)).collect();
        panic!("{what} differs\nlegacy only: {missing:#?}\nnfkeeper only: {extra:#?}");
    }
}

/// The whole round: dry run, migrate, compare, verify, migrate again.
fn full_round(ns: &Ns, v6: bool, what: &str) {
    let before = legacy_save(ns, v6);
    let (code, out, err) = migrate(ns, &["--dry-run"]);
    assert_eq!(code, 0, "{what}: dry run: {err}");
    assert!(
        out.contains("dry run: nothing was changed"),
        "{what}: {out}"
    );
    assert_eq!(
        legacy_save(ns, v6),
        before,
        "{what}: the dry run changed legacy"
    );
    assert!(
        nfk_save(ns, v6).is_empty(),
        "{what}: the dry run loaded nfkeeper"
    );
    // The dry run prints the restore text: the same tables as the oracle.
    let dry = tables(
        &out.lines()
            .filter(|l| {
                !l.starts_with("ip") && !l.starts_with("dry run") && !l.starts_with("nfkeeper's")
            })
            .map(|l| {
                // `[P:B] -A ...` rules
                match l.strip_prefix('[').and_then(|r| r.split_once("] ")) {
                    Some((_, rest)) => format!("{rest}\n"),
                    None => format!("{l}\n"),
                }
            })
            .collect::<String>(),
    );
    for (t, lines) in &before {
        if lines
            .iter()
            .any(|l| l.starts_with("-A") || (l.starts_with(':') && !l.contains(" ACCEPT [")))
        {
            let got = dry.get(t).cloned().unwrap_or_default();
            same_lines(&got, lines, &format!("{what}: dry-run text of {t}"));
        }
    }

    let (code, out, err) = migrate(ns, &[]);
    assert_eq!(code, 0, "{what}: migrate: {err}\n{out}");
    assert!(out.contains("emptied legacy tables: "), "{what}: {out}");
    let after = nfk_save(ns, v6);
    for (t, lines) in &before {
        let used = lines
            .iter()
            .any(|l| l.starts_with("-A") || (l.starts_with(':') && !l.contains(" ACCEPT [")));
        if !used {
            continue;
        }
        let got = after.get(t).cloned().unwrap_or_default();
        same_lines(&got, lines, &format!("{what}: table {t}"));
    }
    assert_legacy_emptied(ns, v6);
    let (code, out, err) = text(&ns.exec(&[NFK, "verify", "-q"]));
    assert_eq!((code, out.as_str()), (0, ""), "{what}: verify: {err}");
    let (code, out, _) = migrate(ns, &[]);
    assert_eq!(code, 0, "{what}");
    assert!(
        out.starts_with("nfkeeper migrate: nothing to migrate"),
        "{what}: {out}"
    );
}

const HAND_V4: &str = include_str!("../testdata/migrate/hand_v4.rules");

const HAND_V6: &str = include_str!("../testdata/migrate/hand_v6.rules");

#[test]
fn hand_written_rulesets_move_both_families() {
    if !have_legacy() {
        return;
    }
    let ns = Ns::new("mig-hand");
    legacy_restore(&ns, false, HAND_V4);
    legacy_restore(&ns, true, HAND_V6);
    // Both families at once: -4 and -6 leave the other alone.
    let before6 = legacy_save(&ns, true);
    let (code, out, err) = migrate(&ns, &["-4", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("ip6 "), "{out}");
    full_round_pair(&ns, before6);
}

/// Run the IPv4 round with -4 (the IPv6 tables stay), then the IPv6 one.
fn full_round_pair(ns: &Ns, before6: BTreeMap<String, Vec<String>>) {
    // The IPv4 round with both families present would also move IPv6, so
    // its checks run per family: IPv4 first with -4.
    let before4 = legacy_save(ns, false);
    let (code, out, err) = migrate(ns, &["-4"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ip filter: moved 24 rules, 6 chains (3 user), policies INPUT DROP, FORWARD DROP, OUTPUT ACCEPT"), "{out}");
    let emptied = out
        .lines()
        .find_map(|l| l.strip_prefix("emptied legacy tables: "))
        .unwrap_or("");
    let mut got: Vec<&str> = emptied.split(", ").collect();
    got.sort();
    assert_eq!(got, ["ip filter", "ip mangle", "ip nat", "ip raw"], "{out}");
    assert_eq!(legacy_save(ns, true), before6, "-4 touched IPv6");
    let after4 = nfk_save(ns, false);
    for (t, lines) in &before4 {
        assert_eq!(after4.get(t), Some(lines), "table {t}");
    }
    assert_legacy_emptied(ns, false);
    full_round(ns, true, "hand-written IPv6");
}

#[test]
fn conformance_dumps_move() {
    if !have_legacy() {
        return;
    }
    let Some(dir) = conformance() else { return };
    // (file, IPv6). A dump nfkeeper's own iptables-restore refuses (in a
    // scratch namespace) must make migrate refuse and change nothing; the
    // others must move.
    let cases = [
        ("ipt-restore__iptables.dump", false),
        ("ipt-restore__ip6tables.dump", true),
        ("ipt-save__fedora27-ip6tables", true),
        ("firewalld-restore__ipt-save-completed.txt", false),
        ("ipt-save__ipt-save-filter.txt", false),
        ("ipt-save__policy-drop.txt", false),
        ("ipt-save__wireless.txt", false),
        ("ipt-save__fedora27-iptables", false),
    ];
    let mut moved = 0;
    for (file, v6) in cases {
        let path = dir.join("dumps").join(file);
        let rules = std::fs::read_to_string(&path).unwrap();
        let scratch = Ns::new("mig-dscr");
        let cmd = format!("{NFK} {} < {}", prog(v6, "tables-restore"), path.display());
        let holds = scratch.exec(&["sh", "-c", &cmd]);
        drop(scratch);
        let ns = Ns::new("mig-dump");
        legacy_restore(&ns, v6, &rules);
        if holds.status.success() {
            full_round(&ns, v6, file);
            moved += 1;
            continue;
        }
        // Which refused rule comes first depends on the table order, so
        // only the refusal is compared.
        let before = legacy_save(&ns, v6);
        let (code, _, err) = migrate(&ns, &[]);
        assert_eq!(code, 1, "{file}: {err}");
        assert!(
            err.contains("(nfkeeper): ") && err.contains("the legacy tables are unchanged"),
            "{file}: {err}"
        );
        assert_eq!(legacy_save(&ns, v6), before, "{file}");
        assert!(nfk_save(&ns, v6).is_empty(), "{file}");
    }
    assert!(moved >= 6, "{moved} dumps moved");
}

/// `! --OPT 0:MAX` (a full 8, 16 or 32-bit range) in a save form: iptables-legacy
/// 1.8.9 prints an inverted full range as nothing (1.8.11 prints it).
fn inverted_full_range(saved: &str) -> bool {
    let w: Vec<&str> = saved.split_whitespace().collect();
    w.windows(3).any(|t| {
        t[0] == "!"
            && t[1].starts_with("--")
            && ["0:255", "0:65535", "0:4294967295"].contains(&t[2])
    })
}

/// Vectors left out: ICMP type 255 with any code, which the oracle
/// (iptables-legacy 1.8.9) prints as `any` and 1.8.11 as `255/255`;
/// `--nflog-range`, which the kernel ignores (it copies a length only with
/// `--nflog-size`'s flag) and nfkeeper's model (like iptables-nft) has no
/// form for: migrate drops it, see `nflog_range_is_dropped`; and a rule
/// whose save form reads back as another rule, which migrate refuses (see
/// `refusals_change_nothing`).
/// Also NFQUEUE's open-ended `--queue-balance`, which 1.8.9 ends at 65535
/// and 1.8.11 at 65534 (its parser refuses 65535, so migrate refuses
/// such a rule: its save form does not parse).
const ORACLE_DIFFS: &[&str] = &[
    "--icmp-type 255/255",
    "--nflog-range",
    "--ipcompspi :",
    "--queue-balance :",
    "--queue-balance 4:",
];

/// Conformance vectors of the extensions migrate decodes, one
/// `iptables-legacy -A` each (the ones legacy refuses on this kernel, and
/// the ones nfkeeper's tables cannot hold, are left out), then one
/// migration of them all.
#[test]
fn conformance_vectors_move() {
    if !have_legacy() {
        return;
    }
    let Some(dir) = conformance() else { return };
    let skip = |rule: &str, saved: &str| {
        inverted_full_range(saved) || ORACLE_DIFFS.iter().any(|d| rule.contains(d))
    };
    for v6 in [false, true] {
        let ns = Ns::new(if v6 { "mig-vec6" } else { "mig-vec4" });
        let scratch = Ns::new(if v6 { "mig-scr6" } else { "mig-scr4" });
        let (loaded, refused, nfk_refused) = load_vectors(&ns, &scratch, v6, "legacy", &dir, &skip);
        eprintln!(
            "{}: {loaded} vectors loaded by iptables-legacy, {refused} refused by it, \
             {nfk_refused} that nfkeeper's tables cannot hold left out",
            if v6 { "IPv6" } else { "IPv4" }
        );
        assert!(loaded > 200, "{loaded} vectors loaded");
        full_round(&ns, v6, if v6 { "IPv6 vectors" } else { "IPv4 vectors" });
    }
}

#[test]
fn refusals_change_nothing() {
    if !have_legacy() {
        return;
    }
    // (what, IPv6, legacy rules, exit code, stderr contains)
    let cases: &[(&str, bool, &str, i32, &str)] = &[
        (
            "a match not decoded",
            false,
            "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:c - [0:0]\n-A c -j ACCEPT\n-A c -m set --match-set s src -j ACCEPT\nCOMMIT\n",
            1,
            "table filter, chain c, rule 2: match set: ipset sets are named by the kernel's set index",
        ),
        (
            "a target not decoded",
            true,
            "*mangle\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n-A OUTPUT -j RATEEST --rateest-name r --rateest-interval 1s --rateest-ewmalog 8s\nCOMMIT\n",
            1,
            "table mangle, chain OUTPUT, rule 1: target RATEEST: extension not decoded",
        ),
        (
            "a rule whose save form reads back as another",
            false,
            "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -p ipcomp -m ipcomp --ipcompspi 0:4294967295\nCOMMIT\n",
            1,
            "table filter, chain INPUT, rule 1: rule: its save form `-p ipcomp -m ipcomp` reads back as another rule (`-p ipcomp -m ipcomp --ipcompspi 0`)",
        ),
        (
            "a rule nfkeeper's tables cannot hold",
            false,
            "*mangle\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n-A FORWARD -p udp -j CHECKSUM --checksum-fill\nCOMMIT\n",
            1,
            "loading the ip ruleset failed",
        ),
    ];
    for (what, v6, rules, want_code, want_err) in cases {
        let ns = Ns::new("mig-refuse");
        if rules.contains("--match-set") {
            let o = ns.exec(&["ipset", "create", "s", "hash:ip"]);
            if !o.status.success() {
                eprintln!("SKIP {what}: ipset: {}", String::from_utf8_lossy(&o.stderr));
                continue;
            }
        }
        legacy_restore(&ns, *v6, rules);
        let before = legacy_save(&ns, *v6);
        let (code, _, err) = migrate(&ns, &[]);
        assert_eq!(code, *want_code, "{what}: {err}");
        assert!(err.contains(want_err), "{what}: {err}");
        assert_eq!(legacy_save(&ns, *v6), before, "{what}: legacy changed");
        assert!(
            nfk_save(&ns, *v6)
                .values()
                .all(|t| !t.iter().any(|l| l.starts_with("-A"))),
            "{what}: nfkeeper changed"
        );
    }

    // nfkeeper's table in use: refused, then --replace replaces it.
    let ns = Ns::new("mig-busy");
    legacy_restore(&ns, false, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -j DROP\nCOMMIT\n");
    let o = ns.exec(&[NFK, "iptables", "-A", "OUTPUT", "-j", "ACCEPT"]);
    assert!(o.status.success());
    let before = legacy_save(&ns, false);
    let (code, out, _) = migrate(&ns, &["--dry-run"]);
    assert_eq!(code, 0);
    assert!(
        out.contains(
            "nfkeeper's ip table filter: already holding rules, would refuse (see --replace)"
        ),
        "{out}"
    );
    let (code, _, err) = migrate(&ns, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("nfkeeper's ip table filter already holds rules; use --replace"),
        "{err}"
    );
    assert_eq!(legacy_save(&ns, false), before);
    let (code, out, err) = migrate(&ns, &["--replace"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("emptied legacy tables: ip filter"), "{out}");
    assert_eq!(nfk_save(&ns, false)["filter"], before["filter"]);
    assert_legacy_emptied(&ns, false);

    // nfkeeper tables the legacy ruleset does not have are left alone.
    let ns = Ns::new("mig-other");
    legacy_restore(&ns, false, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -j DROP\nCOMMIT\n");
    let o = ns.exec(&[
        NFK,
        "iptables",
        "-t",
        "nat",
        "-A",
        "POSTROUTING",
        "-j",
        "MASQUERADE",
    ]);
    assert!(o.status.success());
    let (code, _, err) = migrate(&ns, &[]);
    assert_eq!(code, 0, "{err}");
    let after = nfk_save(&ns, false);
    assert!(
        after["nat"].contains(&"-A POSTROUTING -j MASQUERADE".to_string()),
        "{after:?}"
    );
    assert!(
        after["filter"].contains(&"-A INPUT -j DROP".to_string()),
        "{after:?}"
    );
}

#[test]
fn usage_errors() {
    // No kernel needed: these fail before reading anything.
    let cases: &[(&[&str], i32, &str)] = &[
        (&["migrate"], 2, "--from legacy or --from nft is required"),
        (
            &["migrate", "--from", "x"],
            2,
            "unknown source \"x\" (legacy or nft)",
        ),
        (
            &["migrate", "--from", "legacy", "--bogus"],
            2,
            "unknown option \"--bogus\"",
        ),
    ];
    for (args, want, msg) in cases {
        let o = Command::new(NFK).args(*args).output().unwrap();
        let (code, _, err) = text(&o);
        assert_eq!(code, *want, "{args:?}");
        assert!(err.contains(msg), "{args:?}: {err}");
    }
    let o = Command::new(NFK)
        .args(["migrate", "--help"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("usage: nfkeeper migrate --from legacy|nft")
    );
}

/// `--nflog-range` has no effect in the kernel and no form in nfkeeper's
/// model: migrate moves the rule without it.
#[test]
fn nflog_range_is_dropped() {
    if !have_legacy() {
        return;
    }
    let ns = Ns::new("mig-nflog");
    legacy_restore(&ns, false, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -j NFLOG --nflog-group 2 --nflog-range 5\nCOMMIT\n");
    let (code, _, err) = migrate(&ns, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        nfk_save(&ns, false)["filter"][4],
        "-A INPUT -j NFLOG --nflog-group 2"
    );
    assert_legacy_emptied(&ns, false);
}

/// Rule and policy counters move with the rules (`iptables-save -c`).
#[test]
fn counters_move() {
    if !have_legacy() {
        return;
    }
    let rules = "*filter\n:INPUT DROP [7:700]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:c - [0:0]\n[5:100] -A INPUT -p tcp -j c\n[3:33] -A c -j ACCEPT\nCOMMIT\n";
    let ns = Ns::new("mig-counters");
    let path =
        std::env::temp_dir().join(format!("nfk-migrate-{}-counters.rules", std::process::id()));
    std::fs::write(&path, rules).unwrap();
    let o = ns.exec(&[
        "sh",
        "-c",
        &format!("iptables-legacy-restore -c < {}", path.display()),
    ]);
    let _ = std::fs::remove_file(&path);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (code, _, err) = migrate(&ns, &[]);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = text(&ns.exec(&[NFK, "iptables-save", "-c"]));
    let got: String = out
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(got, rules);
}

/// With `nfkeeper serve` answering in the namespace, the load goes through
/// the daemon (as `nfkeeper iptables-restore` would), and the daemon's
/// model is the kernel's afterwards (`nfkeeper verify` compares them).
#[test]
fn migrate_through_the_daemon() {
    if !have_legacy() {
        return;
    }
    let ns = Ns::new("mig-daemon");
    legacy_restore(&ns, false, HAND_V4);
    let before = legacy_save(&ns, false);
    let sock = std::env::temp_dir().join(format!("nfk-migrate-{}.sock", std::process::id()));
    let env = format!("NFKEEPER_SOCKET={}", sock.display());
    let mut daemon = Command::new("ip")
        .args([
            "netns", "exec", &ns.name, "env", &env, NFK, "serve", "--quiet",
        ])
        .stdin(std::process::Stdio::null())
        .spawn()
        .expect("spawn nfkeeper serve");
    let up = (0..500).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        ns.exec(&["env", &env, NFK, "status"]).status.success()
    });
    let run = |args: &[&str]| {
        let mut argv = vec!["env", &env, NFK];
        argv.extend_from_slice(args);
        text(&ns.exec(&argv))
    };
    let migrated = run(&["migrate", "--from", "legacy", "-4"]);
    let status = run(&["status"]);
    let verified = run(&["verify", "-q", "-4"]);
    let saved = run(&["iptables-save"]);
    let _ = daemon.kill();
    let _ = daemon.wait();
    let _ = std::fs::remove_file(&sock);
    assert!(up, "nfkeeper serve did not answer");
    assert_eq!(migrated.0, 0, "{}", migrated.2);
    // The daemon committed the restore and its model holds the rules.
    let commits: u64 = status
        .1
        .lines()
        .find_map(|l| l.trim().strip_prefix("commits:"))
        .and_then(|c| c.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    assert!(commits >= 1, "{}", status.1);
    assert!(
        status
            .1
            .contains("table ip nfkeeper_filter: 6 chains, 24 rules"),
        "{}",
        status.1
    );
    assert_eq!((verified.0, verified.1.as_str()), (0, ""), "{}", verified.2);
    let after = tables(&saved.1);
    for (t, lines) in &before {
        same_lines(
            after.get(t).map_or(&[][..], |v| v),
            lines,
            &format!("daemon: table {t}"),
        );
    }
    assert_legacy_emptied(&ns, false);
}

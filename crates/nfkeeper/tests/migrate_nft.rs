//! `nfkeeper migrate --from nft` against the kernel, iptables-nft the
//! oracle: each case loads a ruleset with `iptables-nft-restore` (or
//! `ip6tables-nft-restore`, or one `iptables-nft -A` per conformance
//! vector) in a fresh network namespace, then checks that `--dry-run`
//! changes nothing, that migrate moves it (nfkeeper's iptables-save,
//! counters zeroed and `#` lines dropped, equals iptables-nft-save's from
//! before, table by table), that iptables-nft's tables are gone and other
//! tables untouched, that `nfkeeper verify` is clean, and that a second
//! migrate finds nothing to do. A rule iptables-nft would not write
//! refuses with nothing changed. Skips without root or iptables-nft; the
//! vector case skips without `../shared/conformance`.

mod common;

use common::{prerequisites, Ns};
use std::collections::BTreeMap;
use std::process::Command;

mod migrate_support;

use migrate_support::{
    conformance, load_vectors, migrate_from, nfk_save, oracle_restore, oracle_save, prog, text, NFK,
};

fn nft_restore(ns: &Ns, v6: bool, rules: &str) {
    oracle_restore(ns, v6, "nft", rules)
}

fn nft_save(ns: &Ns, v6: bool) -> BTreeMap<String, Vec<String>> {
    oracle_save(ns, v6, "nft")
}

fn migrate(ns: &Ns, args: &[&str]) -> (i32, String, String) {
    migrate_from(ns, "nft", args)
}

const HAND_V4: &str = include_str!("../testdata/migrate/hand_v4.rules");
const HAND_V6: &str = include_str!("../testdata/migrate/hand_v6.rules");
const NATIVE_V4: &str = include_str!("../testdata/migrate/nft_native_v4.rules");

fn have_nft() -> bool {
    if !prerequisites() {
        return false;
    }
    let ok = ["iptables-nft", "nft"].iter().all(|p| {
        Command::new(p)
            .arg("--version")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    });
    if !ok {
        eprintln!("SKIP: iptables-nft or nft (the oracles) is not installed");
    }
    ok
}

/// Which of iptables-nft's tables, and of the foreign ones the tests add,
/// exist, as `table FAMILY NAME` lines. One `nft list table` each: `nft
/// list tables` (1.0.6) reads every rule and aborts on some of nfkeeper's
/// native sctp chunk matches.
fn nft_tables(ns: &Ns) -> Vec<String> {
    let mut names: Vec<String> = ["ip", "ip6"]
        .iter()
        .flat_map(|f| {
            ["filter", "nat", "mangle", "raw", "security"]
                .iter()
                .map(move |t| format!("table {f} {t}"))
        })
        .collect();
    names.extend([
        "table inet keepme".to_string(),
        "table ip other".to_string(),
    ]);
    names
        .into_iter()
        .filter(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            ns.exec(&["nft", "list", "table", w[1], w[2]])
                .status
                .success()
        })
        .collect()
}

/// Whether a save's table holds something to move.
fn used(lines: &[String]) -> bool {
    lines
        .iter()
        .any(|l| l.starts_with("-A") || (l.starts_with(':') && !l.contains(" ACCEPT [")))
}

fn same_lines(got: &[String], want: &[String], what: &str) {
    if got != want {
        let missing: Vec<&String> = want.iter().filter(|l| !got.contains(l)).collect();
        let extra: Vec<&String> = got.iter().filter(|l| !want.contains(l)).collect();
        panic!("{what} differs\niptables-nft only: {missing:#?}\nnfkeeper only: {extra:#?}");
    }
}

/// The whole round over both families: dry run, migrate, compare, the
/// source tables gone (others kept), verify, migrate again.
fn full_round(ns: &Ns, what: &str) {
    let before = [nft_save(ns, false), nft_save(ns, true)];
    assert!(
        before.iter().any(|b| b.values().any(|l| used(l))),
        "{what}: nothing loaded"
    );
    let listed = nft_tables(ns);
    let (code, out, err) = migrate(ns, &["--dry-run"]);
    assert_eq!(code, 0, "{what}: dry run: {err}");
    assert!(
        out.contains("dry run: nothing was changed"),
        "{what}: {out}"
    );
    assert_eq!(nft_tables(ns), listed, "{what}: the dry run changed tables");
    assert_eq!(
        [nft_save(ns, false), nft_save(ns, true)],
        before,
        "{what}: the dry run changed iptables-nft's tables"
    );

    let (code, out, err) = migrate(ns, &[]);
    assert_eq!(code, 0, "{what}: migrate: {err}\n{out}");
    let deleted = out
        .lines()
        .find_map(|l| l.strip_prefix("deleted iptables-nft tables: "))
        .unwrap_or_else(|| panic!("{what}: {out}"));
    for (v6, b) in before.iter().enumerate() {
        let v6 = v6 == 1;
        let after = nfk_save(ns, v6);
        for (t, lines) in b.iter().filter(|(_, l)| used(l)) {
            let got = after.get(t).cloned().unwrap_or_default();
            same_lines(&got, lines, &format!("{what}: {} {t}", prog(v6, "")));
            let name = format!("{} {t}", if v6 { "ip6" } else { "ip" });
            assert!(deleted.split(", ").any(|d| d == name), "{what}: {out}");
        }
    }
    let now = nft_tables(ns);
    for l in &listed {
        let moved = deleted.split(", ").any(|d| *l == format!("table {d}"));
        assert_eq!(now.contains(l), !moved, "{what}: {l}\n{now:?}");
    }
    let (code, out, err) = text(&ns.exec(&[NFK, "verify", "-q"]));
    assert_eq!((code, out.as_str()), (0, ""), "{what}: verify: {err}");
    let (code, out, _) = migrate(ns, &[]);
    assert_eq!(code, 0, "{what}");
    assert!(
        out.starts_with("nfkeeper migrate: nothing to migrate"),
        "{what}: {out}"
    );
}

#[test]
fn hand_written_rulesets_move_both_families() {
    if !have_nft() {
        return;
    }
    let ns = Ns::new("mign-hand");
    nft_restore(&ns, false, HAND_V4);
    nft_restore(&ns, true, HAND_V6);
    // A table iptables-nft does not own stays as it is.
    for cmd in [
        "add table inet keepme",
        "add chain inet keepme c { type filter hook input priority 0; }",
        "add table ip other",
    ] {
        let o = ns.exec(&["sh", "-c", &format!("nft '{cmd}'")]);
        assert!(o.status.success(), "{cmd}: {}", text(&o).2);
    }
    full_round(&ns, "hand-written");
    let now = nft_tables(&ns);
    assert!(now.contains(&"table inet keepme".to_string()), "{now:?}");
    assert!(now.contains(&"table ip other".to_string()), "{now:?}");
}

/// The native shapes iptables-nft writes (ports, ranges, flags, marks,
/// limits, prefixes, interfaces, fragments), each family alone.
#[test]
fn native_shapes_move() {
    if !have_nft() {
        return;
    }
    let ns = Ns::new("mign-native");
    nft_restore(&ns, false, NATIVE_V4);
    let (code, out, err) = migrate(&ns, &["-6"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("nfkeeper migrate: nothing to migrate"),
        "{out}"
    );
    full_round(&ns, "native shapes");
}

/// A rule iptables-nft does not write (a native `ct state`), in any
/// table, refuses the whole migration with where it is; nothing changes.
#[test]
fn refusal_changes_nothing() {
    if !have_nft() {
        return;
    }
    let ns = Ns::new("mign-refuse");
    nft_restore(&ns, false, HAND_V4);
    nft_restore(&ns, true, HAND_V6);
    let o = ns.exec(&["nft", "add rule ip6 filter ext ct state established accept"]);
    assert!(o.status.success(), "{}", text(&o).2);
    let before = [nft_save(&ns, false), nft_save(&ns, true)];
    let listed = nft_tables(&ns);
    let (code, out, err) = migrate(&ns, &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.starts_with(
            "nfkeeper migrate: cannot migrate iptables-nft ip6 table filter, chain ext, rule 3: \
             rule: expression Ct {"
        ) && err.ends_with("; nothing was changed\n"),
        "{err}"
    );
    assert_eq!(nft_tables(&ns), listed);
    assert_eq!([nft_save(&ns, false), nft_save(&ns, true)], before);
    assert!(nfk_save(&ns, false).is_empty() && nfk_save(&ns, true).is_empty());
}

/// Vectors left out, where iptables-nft 1.8.9 (the oracle here) and 1.8.11
/// (which nfkeeper follows) save differently: ICMP type 255 with any code
/// (`any` against `255/255`), NFQUEUE's open-ended `--queue-balance`, and
/// `--ipcompspi :`, whose save form reads back as another rule (migrate
/// refuses it, as under `--from legacy`).
const ORACLE_DIFFS: &[&str] = &[
    "--icmp-type 255/255",
    "--ipcompspi :",
    "--queue-balance :",
    "--queue-balance 4:",
];

/// `! --OPT 0:MAX` (a full 8, 16 or 32-bit range) in a save form:
/// iptables 1.8.9 prints an inverted full range as nothing (1.8.11 prints
/// it).
fn inverted_full_range(saved: &str) -> bool {
    let w: Vec<&str> = saved.split_whitespace().collect();
    w.windows(3).any(|t| {
        t[0] == "!"
            && t[1].starts_with("--")
            && ["0:255", "0:65535", "0:4294967295"].contains(&t[2])
    })
}

/// Conformance vectors of the extensions migrate decodes, one
/// `iptables-nft -A` each (the ones iptables-nft refuses on this kernel,
/// and the ones nfkeeper's tables cannot hold, left out), then one
/// migration of them all per family.
#[test]
fn conformance_vectors_move() {
    if !have_nft() {
        return;
    }
    let Some(dir) = conformance() else { return };
    let skip = |rule: &str, saved: &str| {
        inverted_full_range(saved) || ORACLE_DIFFS.iter().any(|d| rule.contains(d))
    };
    for v6 in [false, true] {
        let ns = Ns::new(if v6 { "mign-vec6" } else { "mign-vec4" });
        let scratch = Ns::new(if v6 { "mign-scr6" } else { "mign-scr4" });
        let (loaded, refused, nfk_refused) = load_vectors(&ns, &scratch, v6, "nft", &dir, &skip);
        eprintln!(
            "{}: {loaded} vectors loaded by iptables-nft, {refused} refused by it, \
             {nfk_refused} that nfkeeper's tables cannot hold left out",
            if v6 { "IPv6" } else { "IPv4" }
        );
        assert!(loaded > 200, "{loaded} vectors loaded");
        full_round(&ns, if v6 { "IPv6 vectors" } else { "IPv4 vectors" });
    }
}

/// The conformance dumps nfkeeper's own iptables-restore holds (checked
/// in a scratch namespace), each through iptables-nft-restore, move.
#[test]
fn conformance_dumps_move() {
    if !have_nft() {
        return;
    }
    let Some(dir) = conformance() else { return };
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
        let scratch = Ns::new("mign-dscr");
        let cmd = format!("{NFK} {} < {}", prog(v6, "tables-restore"), path.display());
        let holds = scratch.exec(&["sh", "-c", &cmd]);
        drop(scratch);
        if !holds.status.success() {
            continue;
        }
        let ns = Ns::new("mign-dump");
        nft_restore(&ns, v6, &rules);
        full_round(&ns, file);
        moved += 1;
    }
    assert!(moved >= 6, "{moved} dumps moved");
}

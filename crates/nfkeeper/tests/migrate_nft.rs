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
use std::process::{Command, Output};

const NFK: &str = env!("CARGO_BIN_EXE_nfkeeper");

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

fn text(o: &Output) -> (i32, String, String) {
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn prog(v6: bool, tool: &str) -> String {
    format!("{}{tool}", if v6 { "ip6" } else { "ip" })
}

/// `{ip,ip6}tables-nft-restore` of `rules` in `ns`; must succeed.
fn nft_restore(ns: &Ns, v6: bool, rules: &str) {
    let path = std::env::temp_dir().join(format!(
        "nfk-migrate-nft-{}-{}.rules",
        std::process::id(),
        ns.name
    ));
    std::fs::write(&path, rules).unwrap();
    let cmd = format!("{} < {}", prog(v6, "tables-nft-restore"), path.display());
    let o = ns.exec(&["sh", "-c", &cmd]);
    let _ = std::fs::remove_file(&path);
    assert!(
        o.status.success(),
        "{cmd}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A save's tables: name -> lines, `#` lines dropped, counters zeroed.
fn tables(save: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut cur = String::new();
    for l in save.lines().filter(|l| !l.starts_with('#')) {
        if let Some(t) = l.strip_prefix('*') {
            cur = t.to_string();
        }
        let l = match l.split_once(" [") {
            Some((head, _)) if l.starts_with(':') => format!("{head} [0:0]"),
            _ => l.to_string(),
        };
        out.entry(cur.clone()).or_default().push(l);
    }
    out
}

/// iptables-nft-save in the save form of the iptables nfkeeper follows
/// (1.8.11): up to 1.8.10 save named protocols from /etc/protocols that
/// 1.8.11 prints as numbers.
fn nft_save(ns: &Ns, v6: bool) -> BTreeMap<String, Vec<String>> {
    let (code, out, err) = text(&ns.exec(&[&prog(v6, "tables-nft-save")]));
    assert_eq!(code, 0, "{err}");
    tables(&out.replace(" -p gre ", " -p 47 "))
}

fn nfk_save(ns: &Ns, v6: bool) -> BTreeMap<String, Vec<String>> {
    let (code, out, err) = text(&ns.exec(&[NFK, &prog(v6, "tables-save")]));
    assert_eq!(code, 0, "{err}");
    tables(&out)
}

/// `nft list tables`, one `table FAMILY NAME` a line.
fn nft_tables(ns: &Ns) -> Vec<String> {
    let (code, out, err) = text(&ns.exec(&["nft", "list", "tables"]));
    assert_eq!(code, 0, "{err}");
    out.lines().map(str::to_string).collect()
}

fn migrate(ns: &Ns, args: &[&str]) -> (i32, String, String) {
    let mut argv = vec![NFK, "migrate", "--from", "nft"];
    argv.extend_from_slice(args);
    text(&ns.exec(&argv))
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

//! What the two migrate tests share (migrate.rs: iptables-legacy the
//! oracle; migrate_nft.rs: iptables-nft): running `nfkeeper migrate`, the
//! oracle's restore and save, nfkeeper's save, saves as tables of lines,
//! and where the conformance data is. `oracle` is the iptables backend's
//! name as its programs carry it: `legacy` or `nft`.

use crate::common::Ns;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Output;

pub const NFK: &str = env!("CARGO_BIN_EXE_nfkeeper");

/// Exit code, stdout and stderr.
pub fn text(o: &Output) -> (i32, String, String) {
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `iptables…` or `ip6tables…`: `tool` after the family's prefix.
pub fn prog(v6: bool, tool: &str) -> String {
    format!("{}{tool}", if v6 { "ip6" } else { "ip" })
}

/// `nfkeeper migrate --from FROM ARGS` in `ns`.
pub fn migrate_from(ns: &Ns, from: &str, args: &[&str]) -> (i32, String, String) {
    let mut argv = vec![NFK, "migrate", "--from", from];
    argv.extend_from_slice(args);
    text(&ns.exec(&argv))
}

/// `{ip,ip6}tables-ORACLE-restore` of `rules` in `ns`; must succeed.
pub fn oracle_restore(ns: &Ns, v6: bool, oracle: &str, rules: &str) {
    let path = std::env::temp_dir().join(format!(
        "nfk-migrate-{oracle}-{}-{}.rules",
        std::process::id(),
        ns.name
    ));
    std::fs::write(&path, rules).unwrap();
    let tool = prog(v6, &format!("tables-{oracle}-restore"));
    let cmd = format!("{tool} < {}", path.display());
    let o = ns.exec(&["sh", "-c", &cmd]);
    let _ = std::fs::remove_file(&path);
    assert!(
        o.status.success(),
        "{cmd}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A save's tables: name -> lines, `#` lines dropped, counters zeroed.
pub fn tables(save: &str) -> BTreeMap<String, Vec<String>> {
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

/// `{ip,ip6}tables-ORACLE-save`, in the save form of the iptables
/// nfkeeper follows (1.8.11): the oracle here may be older, and up to
/// 1.8.10 save named protocols from /etc/protocols that 1.8.11 prints as
/// numbers.
pub fn oracle_save(ns: &Ns, v6: bool, oracle: &str) -> BTreeMap<String, Vec<String>> {
    let tool = prog(v6, &format!("tables-{oracle}-save"));
    let (code, out, err) = text(&ns.exec(&[&tool]));
    assert_eq!(code, 0, "{err}");
    tables(&out.replace(" -p gre ", " -p 47 "))
}

/// nfkeeper's iptables-save (or ip6tables-save) in `ns`, as tables.
pub fn nfk_save(ns: &Ns, v6: bool) -> BTreeMap<String, Vec<String>> {
    let (code, out, err) = text(&ns.exec(&[NFK, &prog(v6, "tables-save")]));
    assert_eq!(code, 0, "{err}");
    tables(&out)
}

/// iptables 1.8.11's conformance data, if it is beside the workspace.
pub fn conformance() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/iptables-1.8.11");
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!("SKIP: conformance data not found at {}", d.display());
        None
    }
}

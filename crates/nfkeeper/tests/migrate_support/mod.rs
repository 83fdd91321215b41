//! What the two migrate tests share (migrate.rs: iptables-legacy the
//! oracle; migrate_nft.rs: iptables-nft): running `nfkeeper migrate`, the
//! oracle's restore and save, nfkeeper's save, saves as tables of lines,
//! and where the conformance data is. `oracle` is the iptables backend's
//! name as its programs carry it: `legacy` or `nft`.

use crate::common::Ns;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
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

/// Every OK vector of the conformance data in `dir` whose extension
/// migrate decodes, loaded into `ns` with `{ip,ip6}tables-ORACLE` one
/// `-A` each (user chains created as named), except those `skip(rule,
/// saved form)` leaves out and those nfkeeper's own tables cannot hold
/// (tried first in `scratch`: such a rule makes a migration refuse whole,
/// which the refusal tests cover). Returns (loaded by the oracle, refused
/// by it, left out as nfkeeper could not hold them).
pub fn load_vectors(
    ns: &Ns,
    scratch: &Ns,
    v6: bool,
    oracle: &str,
    dir: &Path,
    skip: &dyn Fn(&str, &str) -> bool,
) -> (usize, usize, usize) {
    let decoded: Vec<&str> = xtables::decode::matches::names()
        .into_iter()
        .chain(xtables::decode::targets::names())
        .chain(["standard"])
        .collect();
    let mut files: Vec<String> = std::fs::read_dir(dir.join("extensions"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".t"))
        .collect();
    files.sort();
    let (mut loaded, mut refused, mut nfk_refused) = (0, 0, 0);
    let mut user_chains: Vec<(String, String)> = Vec::new();
    let (ipt, nfk) = (prog(v6, &format!("tables-{oracle}")), prog(v6, "tables"));
    for file in &files {
        let stem = file.trim_end_matches(".t");
        let module = match (
            stem.strip_prefix("libxt_"),
            stem.strip_prefix("libipt_"),
            stem.strip_prefix("libip6t_"),
        ) {
            (Some(m), _, _) => m,
            (_, Some(m), _) if !v6 => m,
            (_, _, Some(m)) if v6 => m,
            _ => continue,
        };
        if !decoded.contains(&module) {
            continue;
        }
        let body = std::fs::read_to_string(dir.join("extensions").join(file)).unwrap();
        let (mut table, mut chain) = ("filter".to_string(), "INPUT".to_string());
        for line in body.lines() {
            if let Some(t) = line.strip_prefix('*') {
                table = t.to_string();
                continue;
            }
            if let Some(c) = line.strip_prefix(':') {
                chain = c.split(',').next().unwrap().to_string();
                continue;
            }
            let item: Vec<&str> = line.split(';').collect();
            if item.len() < 3 || item[2] != "OK" || line.starts_with('#') {
                continue;
            }
            let saved = if item[1] == "=" { item[0] } else { item[1] };
            if skip(item[0], saved) {
                continue;
            }
            let builtin = ["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"]
                .contains(&chain.as_str());
            if !builtin && !user_chains.contains(&(table.clone(), chain.clone())) {
                let _ = ns.exec(&[&ipt, "-t", &table, "-N", &chain]);
                let _ = scratch.exec(&[NFK, &nfk, "-t", &table, "-N", &chain]);
                user_chains.push((table.clone(), chain.clone()));
            }
            let words = iptables::parse::restore::tokenize(item[0]).unwrap();
            let mut tail: Vec<&str> = vec!["-t", &table, "-A", &chain];
            tail.extend(words.iter().map(String::as_str));
            let mut argv: Vec<&str> = vec![NFK, &nfk];
            argv.extend(&tail);
            if !scratch.exec(&argv).status.success() {
                nfk_refused += 1;
                continue;
            }
            let mut argv: Vec<&str> = vec![&ipt];
            argv.extend(&tail);
            if ns.exec(&argv).status.success() {
                loaded += 1;
            } else {
                refused += 1;
            }
        }
    }
    (loaded, refused, nfk_refused)
}

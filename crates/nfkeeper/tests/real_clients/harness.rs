//! Runs one client's sequence twice, each time as the first process of
//! fresh pid, network and mount namespaces (`unshare --fork --kill-child`,
//! see ns.sh and run.rs): once with the client's `iptables` resolved to
//! iptables-nft, once to nfkeeper. Then compares what the client did
//! (compare.rs): its steps' exit codes, the errors it logged, and every
//! snapshot of iptables-save, ip6tables-save and ipset save.

use crate::compare::differences;
use crate::run::{Run, Side, PATH};
use std::process::{Command, Stdio};

/// One client sequence: a script under tests/real_clients/ and a case.
pub struct Client {
    /// Test name, also in the scratch directory's name.
    pub name: &'static str,
    /// The script ns.sh sources (defines `client_run`).
    pub script: &'static str,
    /// Passed to the script as `$CASE`.
    pub case: &'static str,
    /// Programs that must exist (else the test skips), with the Debian
    /// package that brings each.
    pub needs: &'static [(&'static str, &'static str)],
    /// Save lines iptables-nft has and nfkeeper is known not to write.
    pub known: &'static [Known],
    /// A known failure of the whole case: if the sides differ and
    /// nfkeeper's run logged `signature`, the test skips with `why`.
    pub known_failure: Option<Known>,
}

/// A known difference: `signature` is a substring of the line concerned.
pub struct Known {
    pub signature: &'static str,
    pub why: &'static str,
}

/// Why this client cannot run here, if it cannot.
fn skip_reason(c: &Client) -> Option<String> {
    if !testkit::is_root() {
        return Some("needs root (network, mount and pid namespaces)".into());
    }
    let mut missing: Vec<String> = Vec::new();
    let common = [
        ("unshare", "util-linux"),
        ("setpriv", "util-linux"),
        ("iptables-nft", "iptables"),
        ("ip", "iproute2"),
    ];
    for (prog, package) in c.needs.iter().chain(&common) {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {prog}")])
            .env("PATH", PATH)
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            missing.push(format!("{prog} (Debian package {package})"));
        }
    }
    (!missing.is_empty()).then(|| format!("not installed: {}", missing.join(", ")))
}

/// A line for the test's log that the test harness does not capture (it
/// captures only the print macros): skips and known differences must show
/// in CI's output also when the test passes.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Runs `c` under both sides and asserts they did the same.
pub fn check(c: &Client) {
    if let Some(why) = skip_reason(c) {
        say(&format!("SKIP real_clients::{}: {why}", c.name));
        return;
    }
    let nft = Run::start(c, Side::Nft).finish();
    let nfk = Run::start(c, Side::Nfkeeper).finish();

    // The wiring: each side's tools are what it claims.
    let nfk_bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_nfkeeper")).expect("nfkeeper");
    assert!(
        nft.wiring
            .contains("iptables -> /usr/sbin/xtables-nft-multi"),
        "{}: iptables-nft side not wired to iptables-nft:\n{}",
        c.name,
        nft.wiring
    );
    assert!(
        nfk.wiring
            .contains(&format!("iptables -> {}", nfk_bin.display()))
            && !nfk.wiring.contains("ipset -> ipset"),
        "{}: nfkeeper side not wired to nfkeeper:\n{}",
        c.name,
        nfk.wiring
    );
    // The oracle side must have run the whole sequence cleanly, or an
    // environment problem would pass as agreement.
    let failed: Vec<&str> = nft.steps.lines().filter(|l| !l.ends_with(" 0")).collect();
    assert!(
        !nft.steps.is_empty() && failed.is_empty(),
        "{}: the iptables-nft side's steps failed: {failed:?}\n{}",
        c.name,
        nft.log
    );
    assert!(
        nft.saves
            .values()
            .any(|s| s.lines().any(|l| l.starts_with("-A "))),
        "{}: the iptables-nft side wrote no rule at all",
        c.name
    );

    let mut notes = Vec::new();
    let diffs = differences(c, &nft, &nfk, &mut notes);
    for n in &notes {
        say(&format!("KNOWN DIFFERENCE real_clients::{}: {n}", c.name));
    }
    if diffs.is_empty() {
        eprintln!(
            "real_clients::{}: iptables-nft and nfkeeper agree ({} snapshots, {} steps)",
            c.name,
            nft.saves.len(),
            nft.steps.lines().count()
        );
        if let Some(k) = &c.known_failure {
            say(&format!(
                "real_clients::{}: the known failure is gone ({}): update the test",
                c.name, k.why
            ));
        }
        return;
    }
    if let Some(k) = &c.known_failure {
        if nfk.errors.contains(k.signature) || nfk.log.contains(k.signature) {
            let first: String = diffs[0].lines().take(8).collect::<Vec<_>>().join("\n");
            say(&format!(
                "SKIP real_clients::{} (known failure): {}\nfirst difference: {first}",
                c.name, k.why
            ));
            return;
        }
    }
    panic!(
        "{}: iptables-nft and nfkeeper differ:\n{}\n--- nfkeeper's steps:\n{}",
        c.name,
        diffs.join("\n"),
        nfk.log
    );
}

//! `--noflush` rewrites through `nfkeeper serve`: the daemon's model does
//! not follow packet counts, so before planning it reads the counters of
//! the chains a restore declares (`keeper::read::refresh_counters`). A
//! rewrite with the same content keeps every kernel rule whose counters
//! are already what the input says (plain rules and a
//! compiled run alike) and resets the others, as direct mode does (seen
//! with `nft monitor`). Needs root and `nsenter` (skips otherwise).

mod daemon_support;
use daemon_support::{Ns, Serve};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// What `nft monitor` reports in the namespace while `f` runs: one line
/// per object the kernel added, replaced or deleted.
fn monitored(ns: &Ns, f: impl FnOnce()) -> Vec<String> {
    let mut mon = Command::new("nsenter")
        .arg(ns.path())
        .args(["nft", "monitor"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("nft monitor");
    // Subscribed before the write: nft starts listening at once, give it
    // the time to get there.
    std::thread::sleep(Duration::from_millis(300));
    f();
    std::thread::sleep(Duration::from_millis(300));
    let _ = mon.kill();
    let out = mon.wait_with_output().expect("nft monitor output");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

/// `iptables-save -c` of `web`'s rules, read in direct mode.
fn counted(ns: &Ns) -> Vec<String> {
    let o = ns.run(
        "direct",
        Path::new("/nonexistent"),
        &["iptables-save", "-c"],
        "",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains(" -A web "))
        .map(String::from)
        .collect()
}

#[test]
fn same_content_rewrites_keep_rules_and_reset_counts() {
    if Command::new("nft").arg("--version").output().is_err() {
        eprintln!("SKIP: needs nft (apt-get install nftables) to watch the kernel's changes");
        return;
    }
    let Some(ns) = Ns::new("rewrite") else { return };
    let sock = std::env::temp_dir().join(format!("{}.sock", ns.0));
    let _serve = Serve::launch(&ns, &sock, &["--compile-runs=4"], &[]);
    // Two plain rules (one counting), then a run of six addresses.
    let mut body = String::from(
        "-A web -p tcp -m tcp --dport 22 -j ACCEPT\n-A web -p udp -m udp --dport 53 -j ACCEPT\n",
    );
    for i in 1..=6 {
        body.push_str(&format!("-A web -s 10.0.0.{i}/32 -j ACCEPT\n"));
    }
    let counted_first = body.replacen("-A web -p tcp", "[7:700] -A web -p tcp", 1);
    let first = format!("*filter\n:web - [0:0]\n{counted_first}COMMIT\n");
    let o = ns.run(
        "daemon",
        &sock,
        &["iptables-restore", "--noflush", "--counters"],
        &first,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        counted(&ns)[0].starts_with("[7:700] "),
        "{:?}",
        counted(&ns)
    );
    // The same content again, without counters: every count must be 0
    // after it; the counting rule is rewritten (one replace), every other
    // rule and the run's elements are left alone.
    let again = format!("*filter\n:web - [0:0]\n{body}COMMIT\n");
    let events = monitored(&ns, || {
        let o = ns.run("daemon", &sock, &["iptables-restore", "--noflush"], &again);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    });
    let changes: Vec<&String> = events
        .iter()
        .filter(|l| l.contains("rule ") || l.contains("element "))
        .collect();
    // A replace is reported as the old rule's delete and the new one's add.
    assert_eq!(changes.len(), 2, "{events:#?}");
    assert!(changes[0].starts_with("delete rule "), "{events:#?}");
    assert!(
        changes[1].starts_with("add rule ") && changes[1].contains("dport 22"),
        "{events:#?}"
    );
    for l in counted(&ns) {
        assert!(l.starts_with("[0:0] "), "{l}");
    }
    assert_eq!(
        counted(&ns).len(),
        8,
        "the rewrite keeps all eight logical rules"
    );
}

/// Through the daemon (whole model: the old rules' texts are printed from
/// their bodies), a line repeating a rule's text from before a rename in
/// the same restore means the old name, as the parse would: refused when
/// that chain is gone, nothing applied; the new name is accepted (the
/// refused restore's rename left no trace in the daemon's view).
#[test]
fn old_texts_after_a_rename_mean_what_they_say() {
    let Some(ns) = Ns::new("rename") else { return };
    let sock = std::env::temp_dir().join(format!("{}.sock", ns.0));
    let _serve = Serve::launch(&ns, &sock, &[], &[]);
    let start = "*filter\n:front - [0:0]\n:web - [0:0]\n-A front -s 10.0.0.1/32 -j web\n-A web -j ACCEPT\nCOMMIT\n";
    let o = ns.run("daemon", &sock, &["iptables-restore", "--noflush"], start);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = ns.kernel_save();
    let old_name = "*filter\n-E web www\n:front - [0:0]\n-A front -s 10.0.0.1/32 -j web\nCOMMIT\n";
    let o = ns.run(
        "daemon",
        &sock,
        &["iptables-restore", "--noflush"],
        old_name,
    );
    assert!(!o.status.success(), "accepted a jump to a renamed chain");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Chain 'web' does not exist") && err.contains("Error occurred at line: 4"),
        "{err}"
    );
    assert_eq!(ns.kernel_save(), before, "half applied");
    let new_name = "*filter\n-E web www\n:front - [0:0]\n-A front -s 10.0.0.1/32 -j www\nCOMMIT\n";
    let o = ns.run(
        "daemon",
        &sock,
        &["iptables-restore", "--noflush"],
        new_name,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        ns.kernel_save()
            .contains("-A front -s 10.0.0.1/32 -j www\n"),
        "{}",
        ns.kernel_save()
    );
}

//! The daemon on the fake kernel (crate `nfk-fakekernel`), without root:
//! a whole `nfkeeper serve` in this process — writer, coherence, front-end —
//! talking to an in-memory nf_tables kernel, reached over a unix socket in
//! a temporary directory as clients reach it. What is checked is the
//! daemon's own logic: group commit, a write the kernel refuses cut out of
//! its group, foreign changes noticed and re-read, run sets dropped with
//! the chains flushed, the foreign-object list kept current.

use fakekernel::Kernel;
use proto::client::Client;
use proto::{Fam, Request};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A daemon serving `k` on a socket of its own; returns the socket path.
fn daemon(k: &Kernel) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "nfk-daemon-fake-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("serve.sock");
    let cfg = daemon::Config {
        // Admit whoever runs the tests.
        group: Some(rustix::process::getgid().as_raw()),
        quiet: true,
        settings: keeper::Settings::default(),
        ..daemon::Config::default()
    };
    let kernel = daemon::Kernel {
        sock: k.socket(),
        events: Ok(k.event_socket()),
    };
    let (sh, listener) = daemon::start(cfg, kernel, 0, &path).expect("start");
    std::thread::spawn(move || daemon::listen::accept_loop(Arc::clone(&sh), listener));
    path
}

/// Run `iptables ARGS` through the daemon: (exit code, stdout, stderr).
fn iptables(path: &Path, args: &[&str]) -> (i32, String, String) {
    let mut c = Client::connect(path).expect("connect");
    let out = c
        .run(&Request::Iptables {
            family: Fam::V4,
            prog: "iptables".into(),
            args: args.iter().map(|a| a.to_string()).collect(),
        })
        .expect("call");
    (
        out.code,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn restore(path: &Path, text: &str, noflush: bool) -> (i32, String) {
    let mut c = Client::connect(path).expect("connect");
    let out = c
        .run(&Request::Restore {
            family: Fam::V4,
            prog: "iptables-restore".into(),
            noflush,
            counters: false,
            test: false,
            table: None,
            payload: text.as_bytes().to_vec(),
        })
        .expect("call");
    (out.code, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn ok(path: &Path, args: &[&str]) -> String {
    let (code, out, err) = iptables(path, args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

#[test]
fn concurrent_writes_fold_into_fewer_commits() {
    let k = Kernel::new();
    let path = daemon(&k);
    ok(&path, &["-N", "X"]);
    let before = k.stats().commits;
    let threads: Vec<_> = (0..16)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                for i in 0..20 {
                    ok(
                        &path,
                        &["-A", "X", "-s", &format!("10.{w}.0.{i}"), "-j", "ACCEPT"],
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("writer");
    }
    let commits = k.stats().commits - before;
    let listed = ok(&path, &["-S", "X"]);
    assert_eq!(listed.lines().count(), 1 + 16 * 20);
    // Every write waited for a commit; while one was in flight the next
    // ones queued and went in one commit together (seen here: 36-129
    // commits for 320 writes).
    assert!((1..16 * 20).contains(&commits), "{commits} commits");
}

#[test]
fn a_write_the_kernel_refuses_fails_alone() {
    // Jumps 16 chains deep: the model accepts, the kernel refuses the
    // write that makes the chain too deep (EMLINK); writes around it in
    // the same group still commit.
    let k = Kernel::new();
    let path = daemon(&k);
    let mut text = String::from("*filter\n");
    for i in 0..17 {
        text.push_str(&format!(":C{i} - [0:0]\n"));
    }
    text.push_str("-A INPUT -j C0\n");
    for i in 0..14 {
        text.push_str(&format!("-A C{i} -j C{}\n", i + 1));
    }
    text.push_str("COMMIT\n");
    assert_eq!(restore(&path, &text, false), (0, String::new()));
    let cases: &[(&[&str], i32, &str)] = &[
        (&["-A", "C15", "-j", "C16"], 0, ""),
        // C14 -> C15 -> C16: 17 levels below INPUT.
        (
            &["-A", "C14", "-j", "C15"],
            4,
            "iptables v1.8.11 (nfkeeper):  RULE_APPEND failed (Too many links): rule in chain C14\n",
        ),
        (&["-A", "C16", "-j", "ACCEPT"], 0, ""),
    ];
    for (args, code, err) in cases {
        let (c, _, e) = iptables(&path, args);
        assert_eq!((c, e.as_str()), (*code, *err), "{args:?}");
    }
    let s = ok(&path, &["-S"]);
    assert!(
        s.contains("-A C15 -j C16") && s.contains("-A C16 -j ACCEPT"),
        "{s}"
    );
    assert!(!s.contains("-A C14 -j C15"), "{s}");
    // The same among concurrent writers, whose writes the daemon folds
    // into groups: each refused write fails, every other one commits.
    let threads: Vec<_> = (0..8)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                (0..10)
                    .map(|i| {
                        let a = format!("10.{w}.0.{i}");
                        let g = iptables(&path, &["-A", "C16", "-s", &a, "-j", "ACCEPT"]);
                        assert_eq!(g.0, 0, "{}", g.2);
                        let good = g.0;
                        let bad = iptables(&path, &["-A", "C14", "-j", "C15"]).0;
                        (good, bad)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for t in threads {
        for (good, bad) in t.join().expect("writer") {
            assert_eq!((good, bad), (0, 4));
        }
    }
    assert_eq!(ok(&path, &["-S", "C16"]).lines().count(), 2 + 80);
}

#[test]
fn foreign_changes_are_seen_and_kept() {
    let k = Kernel::new();
    let path = daemon(&k);
    ok(&path, &["-A", "FORWARD", "-s", "10.0.0.1", "-j", "ACCEPT"]);
    // Someone else (a direct-mode process) adds a rule behind the daemon.
    let mut other = keeper::Session::with_socket(
        k.socket(),
        ruleset::Family::Ipv4,
        keeper::Settings::default(),
    );
    let p = iptables::parse::parse(
        &["-A", "FORWARD", "-s", "10.0.0.2", "-j", "DROP"],
        iptables::parse::ParseOpts::command(ruleset::Family::Ipv4, "iptables"),
    )
    .expect("parse");
    other.iptables(p).expect("foreign append");
    // The daemon's next write and read know it (re-read, not overwritten).
    ok(&path, &["-A", "FORWARD", "-s", "10.0.0.3", "-j", "ACCEPT"]);
    let s = ok(&path, &["-S", "FORWARD"]);
    assert_eq!(
        s,
        "-P FORWARD ACCEPT\n-A FORWARD -s 10.0.0.1/32 -j ACCEPT\n-A FORWARD -s 10.0.0.2/32 -j DROP\n-A FORWARD -s 10.0.0.3/32 -j ACCEPT\n"
    );
    // Lost events: everything is re-read.
    k.lose_next_events();
    let p = iptables::parse::parse(
        &["-D", "FORWARD", "-s", "10.0.0.2", "-j", "DROP"],
        iptables::parse::ParseOpts::command(ruleset::Family::Ipv4, "iptables"),
    )
    .expect("parse");
    other.iptables(p).expect("foreign delete");
    ok(&path, &["-A", "FORWARD", "-s", "10.0.0.4", "-j", "ACCEPT"]);
    let s = ok(&path, &["-S", "FORWARD"]);
    assert!(!s.contains("10.0.0.2") && s.contains("10.0.0.4"), "{s}");
}

#[test]
fn flushes_drop_run_sets() {
    let k = Kernel::new();
    let path = daemon(&k);
    let mut text = String::from("*filter\n:R - [0:0]\n:S - [0:0]\n");
    for i in 0..20 {
        text.push_str(&format!(
            "-A R -s 10.1.0.{i} -j ACCEPT\n-A S -s 10.2.0.{i} -j ACCEPT\n"
        ));
    }
    text.push_str("COMMIT\n");
    assert_eq!(restore(&path, &text, false), (0, String::new()));
    let runs = || {
        k.sets(nft::Family::Ipv4, "nfkeeper_filter")
            .into_iter()
            .filter(|s| s.name.starts_with("__nfk_run"))
            .count()
    };
    assert_eq!(runs(), 2, "{}", k.text());
    // Through a command and through a --noflush restore's chain line.
    ok(&path, &["-F", "R"]);
    assert_eq!(runs(), 1);
    assert_eq!(
        restore(&path, "*filter\n:S - [0:0]\nCOMMIT\n", true),
        (0, String::new())
    );
    assert_eq!(runs(), 0, "{}", k.text());
    assert_eq!(ok(&path, &["-S", "S"]), "-N S\n");
}

/// A flush of every chain forgets the table's rule locations at once:
/// rules created in the same batch after it (learnt from echoes) and
/// before it (forgotten with the rest) keep the daemon's view exact, so
/// a later delete finds its rule's handle. Each step is checked against
/// the kernel: a lost handle would leave the rule there.
#[test]
fn a_flush_of_every_chain_keeps_later_handles() {
    let k = Kernel::new();
    let path = daemon(&k);
    let setup = "*filter\n:A - [0:0]\n:B - [0:0]\n-A A -s 10.1.0.1/32 -j ACCEPT\n\
                 -A B -s 10.2.0.1/32 -j DROP\nCOMMIT\n";
    assert_eq!(restore(&path, setup, false), (0, String::new()));
    // (a --noflush restore, the rule a later -D deletes)
    let cases: &[(&str, &[&str])] = &[
        (
            "*filter\n-F\n-A A -s 10.3.0.1/32 -j ACCEPT\nCOMMIT\n",
            &["-D", "A", "-s", "10.3.0.1/32", "-j", "ACCEPT"],
        ),
        (
            "*filter\n-A A -s 10.4.0.1/32 -j ACCEPT\n-F\n-A B -s 10.4.0.2/32 -j ACCEPT\nCOMMIT\n",
            &["-D", "B", "-s", "10.4.0.2/32", "-j", "ACCEPT"],
        ),
    ];
    let rules = || {
        k.rules(nft::Family::Ipv4, "nfkeeper_filter", "A").len()
            + k.rules(nft::Family::Ipv4, "nfkeeper_filter", "B").len()
    };
    for (text, delete) in cases {
        assert_eq!(restore(&path, text, true), (0, String::new()), "{text}");
        assert_eq!(rules(), 1, "{text}: {}", k.text());
        ok(&path, delete);
        assert_eq!(rules(), 0, "{text}, then {delete:?}: {}", k.text());
        assert_eq!(ok(&path, &["-S", "A"]), "-N A\n");
        assert_eq!(ok(&path, &["-S", "B"]), "-N B\n");
    }
}

#[test]
fn the_foreign_object_list_follows_the_kernel() {
    let k = Kernel::new();
    let path = daemon(&k);
    ok(&path, &["-A", "FORWARD", "-j", "ACCEPT"]);
    // A rule without our userdata, added by another tool.
    let mut s = k.socket();
    let mut b = s.batch(None);
    let r = nft::Rule::new(
        nft::Family::Ipv4,
        "nfkeeper_filter",
        "FORWARD",
        vec![nft::Expr::counter()],
    );
    b.add_rule(&r, nft::batch::Placement::Append, false, 0);
    assert!(s.commit(&mut b).expect("commit").outcome.is_ok());
    let (_, _, err) = iptables(&path, &["-S", "FORWARD"]);
    assert!(err.contains("was not written by nfkeeper"), "{err}");
    ok(&path, &["-F", "FORWARD"]);
    let (_, _, err) = iptables(&path, &["-S", "FORWARD"]);
    assert_eq!(err, "");
    let mut c = Client::connect(&path).expect("connect");
    assert!(!c.status().expect("status").contains("foreign object"));
}

#[test]
fn chain_rewrites_send_the_difference() {
    // kube-proxy's pattern through the daemon (whole model, runs compiled):
    // `:SVC` then its rules, again and again. Each rewrite leaves exactly
    // the input's rules (as the daemon and a fresh read of the kernel both
    // list them) and verify clean; an identical one deletes no rule.
    let k = Kernel::new();
    let path = daemon(&k);
    let svc = [
        "-A SVC -s 10.0.0.1/32 -j ACCEPT",
        "-A SVC -s 10.0.0.2/32 -j ACCEPT",
        "-A SVC -s 10.0.0.3/32 -j ACCEPT",
        "-A SVC -p tcp -m tcp --dport 80 -j DROP",
        "-A SVC -m comment --comment last -j RETURN",
    ];
    let text = |rules: &[&str]| format!("*filter\n:SVC - [0:0]\n{}\nCOMMIT\n", rules.join("\n"));
    let (code, err) = restore(
        &path,
        &format!(
            "*filter\n:SVC - [0:0]\n-A INPUT -j SVC\n{}\nCOMMIT\n",
            svc.join("\n")
        ),
        false,
    );
    assert_eq!(code, 0, "{err}");
    let handles = || -> Vec<u64> {
        k.rules(nft::Family::Ipv4, "nfkeeper_filter", "SVC")
            .iter()
            .filter_map(|r| r.handle)
            .collect()
    };
    let cases: [(&str, Vec<&str>); 5] = [
        ("identical", svc.to_vec()),
        (
            "one changed",
            vec![
                svc[0],
                svc[1],
                "-A SVC -s 10.0.0.9/32 -j ACCEPT",
                svc[3],
                svc[4],
            ],
        ),
        ("reordered", vec![svc[4], svc[3], svc[0], svc[1], svc[2]]),
        ("one removed", vec![svc[0], svc[2], svc[3], svc[4]]),
        ("emptied", vec![]),
    ];
    for (name, rules) in cases {
        let before = handles();
        let (code, err) = restore(&path, &text(&rules), true);
        assert_eq!(code, 0, "{name}: {err}");
        let want: String = std::iter::once("-N SVC")
            .chain(rules.iter().copied())
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(
            ok(&path, &["-S", "SVC"]),
            want,
            "{name}: the daemon's model"
        );
        let mut s = keeper::Session::with_socket(
            k.socket(),
            ruleset::Family::Ipv4,
            keeper::Settings::default(),
        );
        let saved = s
            .save_text(false, Some(ruleset::TableKind::Filter))
            .expect("save");
        let got: Vec<&str> = saved.lines().filter(|l| l.starts_with("-A SVC ")).collect();
        assert_eq!(got, rules, "{name}: the kernel");
        let rep = keeper::verify::verify_table(
            &mut k.socket(),
            ruleset::Family::Ipv4,
            ruleset::TableKind::Filter,
        )
        .expect("verify")
        .expect("table");
        assert!(
            rep.diffs.is_empty() && rep.notes.is_empty(),
            "{name}: {:#?} {:#?}",
            rep.diffs,
            rep.notes
        );
        if name == "identical" {
            assert_eq!(handles(), before, "{name}");
        }
    }
}

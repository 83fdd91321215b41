//! `nfkeeper verify` on the command line: its summary, its exit codes, and
//! a rule added behind nfkeeper's back (with `nft`, the oracle, where it is
//! installed). Runs in a fresh network namespace; skips without root.

mod common;

use common::{prerequisites, Ns};

const RULES: &str = "*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A INPUT -s 10.0.0.1/32 -j ACCEPT
-A INPUT -s 10.0.0.2/32 -j ACCEPT
-A INPUT -s 10.0.0.3/32 -j ACCEPT
-A INPUT -s 10.0.0.4/32 -j ACCEPT
-A INPUT -p tcp -m multiport --dports 22,80 -j ACCEPT
COMMIT
";

fn verify(ns: &Ns, args: &[&str]) -> (i32, String, String) {
    let mut argv = vec![env!("CARGO_BIN_EXE_nfkeeper"), "verify"];
    argv.extend_from_slice(args);
    let o = ns.exec(&argv);
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn verify_summarises_and_reports_foreign_rules() {
    if !prerequisites() {
        return;
    }
    let ns = Ns::new("verifycli");
    let (code, out, _) = verify(&ns, &[]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "nfkeeper verify: no nfkeeper tables in this network namespace\n"
        )
    );
    let path = std::env::temp_dir().join(format!("nfk-verify-{}.rules", std::process::id()));
    std::fs::write(&path, RULES).unwrap();
    let o = ns.exec(&[
        "sh",
        "-c",
        &format!(
            "{} --compile-runs=4 iptables-restore < {}",
            env!("CARGO_BIN_EXE_nfkeeper"),
            path.display()
        ),
    ]);
    let _ = std::fs::remove_file(&path);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // (arguments, exit code, stdout, stderr starts with)
    let cases: &[(&[&str], i32, &str, &str)] = &[
        (
            &[],
            0,
            "ip filter: 2 kernel rules, 1 runs (4 elements): no differences\n",
            "",
        ),
        (&["-q"], 0, "", ""),
        (
            &["-6"],
            0,
            "nfkeeper verify: no nfkeeper tables in this network namespace\n",
            "",
        ),
        (
            &["-t", "nat"],
            0,
            "nfkeeper verify: no nfkeeper tables in this network namespace\n",
            "",
        ),
        (
            &["-t", "bogus"],
            2,
            "",
            "nfkeeper verify: unknown table \"bogus\"",
        ),
        (
            &["--frob"],
            2,
            "",
            "nfkeeper verify: unknown option \"--frob\"",
        ),
    ];
    for (args, code, out, err) in cases {
        let got = verify(&ns, args);
        assert_eq!(
            (got.0, got.1.as_str()),
            (*code, *out),
            "{args:?}: {}",
            got.2
        );
        assert!(got.2.starts_with(err), "{args:?}: stderr {}", got.2);
    }

    // With the daemon serving the namespace (on a socket of this test's),
    // its model is compared too: same answer when they agree.
    let sock = std::env::temp_dir().join(format!("nfk-verify-{}.sock", std::process::id()));
    let env = format!("NFKEEPER_SOCKET={}", sock.display());
    let bin = env!("CARGO_BIN_EXE_nfkeeper");
    let mut daemon = std::process::Command::new("ip")
        .args([
            "netns", "exec", &ns.name, "env", &env, bin, "serve", "--quiet",
        ])
        .stdin(std::process::Stdio::null())
        .spawn()
        .expect("spawn nfkeeper serve");
    let up = (0..500).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        ns.exec(&["env", &env, bin, "status"]).status.success()
    });
    let o = ns.exec(&["env", &env, bin, "verify"]);
    let _ = daemon.kill();
    let _ = daemon.wait();
    let _ = std::fs::remove_file(&sock);
    assert!(up, "nfkeeper serve did not answer");
    assert_eq!(
        (o.status.code(), String::from_utf8_lossy(&o.stdout).as_ref()),
        (
            Some(0),
            "ip filter: 2 kernel rules, 1 runs (4 elements): no differences\n"
        ),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let added = ns.exec(&[
        "nft",
        "add",
        "rule",
        "ip",
        "nfkeeper_filter",
        "INPUT",
        "drop",
    ]);
    if !added.status.success() {
        eprintln!("SKIP: the foreign-rule case needs nft (apt-get install nftables)");
        return;
    }
    let (code, out, _) = verify(&ns, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("(no nfkeeper userdata): not written by nfkeeper\n")
            && out.ends_with("ip filter: 2 kernel rules, 1 runs (4 elements): 1 difference\n"),
        "{out}"
    );
}

//! The bash completion (contrib/completions/nfkeeper.bash), run by bash
//! against the built binary: what it offers comes from the binary's own
//! --help, so a subcommand or option the program gains shows without an
//! edit. Skips without bash.

use std::process::Command;

/// COMPREPLY for the words typed so far (the last one is being completed).
fn complete(words: &[&str]) -> Vec<String> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../contrib/completions/nfkeeper.bash"
    );
    let dir = std::path::Path::new(env!("CARGO_BIN_EXE_nfkeeper"))
        .parent()
        .expect("binary directory");
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let code = format!(
        "source '{script}'; COMP_WORDS=({}); COMP_CWORD={}; _nfkeeper; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        quoted.join(" "),
        words.len() - 1
    );
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("bash")
        .args(["--norc", "-c", &code])
        .env("PATH", path)
        .output()
        .expect("bash");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn completion_offers_what_the_binary_accepts() {
    if Command::new("bash").arg("--version").output().is_err() {
        eprintln!("SKIP: no bash");
        return;
    }
    // (words typed, must be offered, must not be offered)
    let cases: &[(&[&str], &[&str], &[&str])] = &[
        (
            &["nfkeeper", ""],
            &[
                "serve",
                "verify",
                "trace",
                "iptables",
                "ip6tables-save",
                "ipset",
                "bench",
            ],
            &["--help"],
        ),
        (&["nfkeeper", "ver"], &["verify"], &["serve"]),
        (&["nfkeeper", "mig"], &["migrate"], &["verify"]),
        (
            &["nfkeeper", "migrate", "--"],
            &["--from", "--dry-run", "--replace"],
            &["--direct"],
        ),
        (
            &["nfkeeper", "--direct", "ip6"],
            &["ip6tables", "ip6tables-restore"],
            &["iptables"],
        ),
        (
            &["nfkeeper", "-"],
            &["--direct", "--daemon", "--help"],
            &["serve"],
        ),
        (
            &["nfkeeper", "serve", "--"],
            &["--socket", "--metrics", "--idle-timeout", "--max-clients"],
            &["--direct"],
        ),
        (
            &["nfkeeper", "trace", "--"],
            &["--hook", "--dport"],
            &["--socket"],
        ),
    ];
    for (words, want, not) in cases {
        let got = complete(words);
        for w in *want {
            assert!(
                got.iter().any(|g| g == w),
                "{words:?}: {w} not offered in {got:?}"
            );
        }
        for w in *not {
            assert!(
                !got.iter().any(|g| g == w),
                "{words:?}: {w} offered in {got:?}"
            );
        }
    }
}

//! `nfkeeper trace` against iptables-save files (no kernel needed): each
//! `testdata/trace/NAME.args` is one command line (`RULES` stands for
//! `rules.v4`); its output (stdout, then `exit N` and stderr when it
//! fails) must equal `NAME.out`. Set NFKEEPER_BLESS=1 to rewrite the
//! golden files after checking the difference by eye.

use std::path::PathBuf;
use std::process::Command;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/trace")
}

#[test]
fn traces_match_their_golden_files() {
    let d = dir();
    let rules = d.join("rules.v4");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&d)
        .expect("testdata/trace")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "args"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 5, "golden cases missing: {cases:?}");
    let bless = std::env::var_os("NFKEEPER_BLESS").is_some();
    for case in cases {
        let line = std::fs::read_to_string(&case).expect("args");
        let args: Vec<String> = line
            .split_whitespace()
            .map(|w| {
                if w == "RULES" {
                    rules.display().to_string()
                } else {
                    w.to_string()
                }
            })
            .collect();
        let o = Command::new(env!("CARGO_BIN_EXE_nfkeeper"))
            .arg("trace")
            .args(&args)
            .env_remove("NFKEEPER_COMPILE")
            .output()
            .expect("run nfkeeper");
        let mut got = String::from_utf8_lossy(&o.stdout).into_owned();
        if !o.status.success() {
            got.push_str(&format!(
                "exit {}\n{}",
                o.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        let golden = case.with_extension("out");
        if bless {
            std::fs::write(&golden, &got).expect("bless");
            continue;
        }
        let want = std::fs::read_to_string(&golden)
            .unwrap_or_else(|_| panic!("{} missing; NFKEEPER_BLESS=1 writes it", golden.display()));
        assert_eq!(got, want, "{}", case.display());
    }
}

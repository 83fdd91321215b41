//! iptables 1.8.11's extension test vectors through nfkeeper's command
//! line (`nfkeeper iptables|ip6tables …`, checked with `nfkeeper
//! iptables-save`) into the kernel, as iptables-test.py runs them (the
//! runner of `nfkeeper bench conformance`, each file and family in a
//! network namespace of its own).
//!
//! The vectors nfkeeper fails today are the golden list
//! `testdata/conformance/iptables-1.8.11-nfkeeper-failures.txt` (one line
//! per vector: `FILE:LINE FAMILY CHAIN REASON`), compared exactly: a
//! vector that stops passing fails the test, and so does one that starts
//! passing (the list must stay true; `NFK_UPDATE_GOLDEN=1` rewrites it).
//! About 22 s here (two files at a time). Skips without root or without
//! the vectors (`../shared/conformance` beside the workspace).

use bench::suites::conformance::{failure_line, load, run::Tool, run_tool};
use std::path::PathBuf;

#[test]
fn nfkeeper_fails_exactly_the_listed_vectors() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join("../shared/conformance/iptables-1.8.11/extensions");
    if !dir.is_dir() {
        eprintln!(
            "SKIP: iptables 1.8.11 vectors not found ({})",
            dir.display()
        );
        return;
    }
    if !bench::netns::is_root() {
        eprintln!("SKIP: the vectors run in network namespaces, which needs root");
        return;
    }
    let files = load(&dir, &[]).expect("vector files");
    let tool = Tool::nfkeeper(env!("CARGO_BIN_EXE_nfkeeper"));
    // Two files at a time: half the wall time on an idle 2-CPU machine.
    let verdicts = run_tool(&tool, &files, 2, &|_| {}).expect("run");
    assert!(verdicts.len() > 4000, "only {} vectors", verdicts.len());
    let got: Vec<String> = verdicts.iter().filter_map(failure_line).collect();
    let golden = root.join("testdata/conformance/iptables-1.8.11-nfkeeper-failures.txt");
    if std::env::var_os("NFK_UPDATE_GOLDEN").is_some() {
        let text: String = got.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&golden, text).expect("write golden");
        return;
    }
    let want_text = std::fs::read_to_string(&golden).expect("golden list");
    let want: Vec<&str> = want_text.lines().collect();
    let newly_failing: Vec<&String> = got.iter().filter(|l| !want.contains(&l.as_str())).collect();
    let newly_passing: Vec<&&str> = want
        .iter()
        .filter(|l| !got.iter().any(|g| g == **l))
        .collect();
    assert!(
        newly_failing.is_empty() && newly_passing.is_empty(),
        "failing now, not listed ({}):\n{}\nlisted, not failing now ({}):\n{}\n\
         (regenerate with NFK_UPDATE_GOLDEN=1 when a change is intended)",
        newly_failing.len(),
        newly_failing
            .iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        newly_passing.len(),
        newly_passing
            .iter()
            .map(|l| **l)
            .collect::<Vec<_>>()
            .join("\n"),
    );
    assert_eq!(got.len(), want.len(), "duplicate lines in the golden list");
}

//! nfkeeper-bench(8) is made from the program's own help:
//! docs/man/nfkeeper-bench.8 must be docs/man/nfkeeper-bench.8.in with
//! every `.\" @help ARGS` line replaced by what `nfkeeper-bench ARGS`
//! prints (see `testkit::manpage`). `NFK_UPDATE_GOLDEN=1 cargo test -p
//! nfk-bench --test manpage` rewrites the page.

use std::path::PathBuf;
use std::process::Command;

/// What `nfkeeper-bench ARGS` prints on stdout; panics unless it exits 0.
fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_nfkeeper-bench"))
        .args(args)
        .output()
        .expect("run nfkeeper-bench");
    assert!(
        out.status.success(),
        "nfkeeper-bench {args:?}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

#[test]
fn man_page_is_the_help_of_the_program() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/man");
    testkit::manpage::check(
        &dir.join("nfkeeper-bench.8.in"),
        &dir.join("nfkeeper-bench.8"),
        env!("CARGO_PKG_VERSION"),
        help,
    );
}

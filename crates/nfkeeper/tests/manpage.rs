//! nfkeeper(8) is made from the binary's own help: docs/man/nfkeeper.8
//! must be docs/man/nfkeeper.8.in with every `.\" @help ARGS` line
//! replaced by what `nfkeeper ARGS` prints (see `testkit::manpage`), so
//! the page and `--help` cannot drift apart. `NFK_UPDATE_GOLDEN=1 cargo
//! test -p nfkeeper --test manpage` rewrites the page.

use std::path::PathBuf;
use std::process::Command;

/// What `nfkeeper ARGS` prints on stdout; panics unless it exits 0.
fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_nfkeeper"))
        .args(args)
        .output()
        .expect("run nfkeeper");
    assert!(
        out.status.success(),
        "nfkeeper {args:?}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

#[test]
fn man_page_is_the_help_of_the_binary() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/man");
    testkit::manpage::check(
        &dir.join("nfkeeper.8.in"),
        &dir.join("nfkeeper.8"),
        env!("CARGO_PKG_VERSION"),
        help,
    );
}

/// Every help text the page includes names its own command, so a marker
/// that asks for the wrong thing (say, a subcommand's help that fell back
/// to the general usage) is caught, not documented.
#[test]
fn each_included_help_is_the_subcommands_own() {
    let cases: [(&[&str], &str); 4] = [
        (&["--help"], "nfkeeper demo"),
        (&["serve", "--help"], "Usage: nfkeeper serve"),
        (&["trace", "--help"], "usage: nfkeeper trace"),
        (&["verify", "--help"], "usage: nfkeeper verify"),
    ];
    let template = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/man/nfkeeper.8.in"),
    )
    .expect("template");
    for (args, head) in cases {
        let marker = format!(".\\\" @help {}", args.join(" "));
        assert!(template.contains(&marker), "template lacks {marker:?}");
        assert!(
            help(args).contains(head),
            "nfkeeper {args:?} is not {head:?}"
        );
    }
}

/// Every subcommand `nfkeeper --help` lists (`  nfkeeper WORD ...`) has a
/// section of its own in the page (`.SS` naming it), so a new subcommand
/// cannot slip into the help and not into COMMANDS.
#[test]
fn every_subcommand_has_a_section() {
    let template = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/man/nfkeeper.8.in"),
    )
    .expect("template");
    let sections: Vec<String> = template
        .lines()
        .filter_map(|l| l.strip_prefix(".SS "))
        .map(|l| l.replace("\\-", "-"))
        .collect();
    let usage = help(&["--help"]);
    let subcommands: Vec<&str> = usage
        .lines()
        .filter_map(|l| l.strip_prefix("  nfkeeper "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| {
            w.starts_with(|c: char| c.is_ascii_lowercase())
                && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
        })
        .collect();
    assert!(
        subcommands.contains(&"serve"),
        "no subcommands found in {usage}"
    );
    for sub in subcommands {
        assert!(
            sections
                .iter()
                .any(|s| s.split([' ', ',']).any(|w| w == sub)),
            "nfkeeper {sub} has no .SS section in docs/man/nfkeeper.8.in"
        );
    }
}

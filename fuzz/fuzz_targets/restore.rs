//! iptables-restore input applied to the model.
//!
//! Input: bytes, lossily decoded as UTF-8. Each input is restored for both
//! families, with and without `--noflush` and `--counters` (`--noflush` runs
//! start from a small non-empty ruleset, so there is something to keep).
//!
//! Properties:
//! - restore never panics;
//! - all or nothing: a failed restore leaves the ruleset as it was;
//! - `--test` gives the same verdict as a real run and changes nothing;
//! - round trip (unless a rule line has a word the save form cannot carry,
//!   see `common::carried`): after a successful restore, the saved tables restore into a
//!   fresh ruleset and save identically.
#![no_main]

use iptables::exec::{restore, save_table, RestoreOpts};
use iptables::Rule;
use libfuzzer_sys::fuzz_target;
use ruleset::{Family, Ruleset, TableKind};
use std::sync::OnceLock;

mod common;
use common::restore_carried;

const BASE: &str = "\
*filter
:INPUT DROP [1:2]
:FORWARD ACCEPT [0:0]
:base - [0:0]
[3:4] -A INPUT -i lo -j base
-A base -p tcp --dport 22 -m comment --comment \"ssh in\" -j ACCEPT
-A FORWARD -j base
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
-A PREROUTING -p tcp --dport 80 -j REDIRECT --to-ports 8080
COMMIT
";

fn opts(family: Family, noflush: bool, counters: bool, test: bool) -> RestoreOpts<'static> {
    RestoreOpts {
        family,
        noflush,
        counters,
        test,
        table: None,
        prog: "iptables-restore",
    }
}

/// The ruleset `--noflush` runs start from.
fn base() -> &'static Ruleset<Rule> {
    static BASE_RS: OnceLock<Ruleset<Rule>> = OnceLock::new();
    BASE_RS.get_or_init(|| {
        let mut rs = Ruleset::new();
        for f in Family::ALL {
            restore(&mut rs, BASE, &opts(f, false, true, false)).expect("base ruleset restores");
        }
        rs
    })
}

fn save_all(rs: &Ruleset<Rule>, family: Family, counters: bool) -> String {
    let mut out = String::new();
    for kind in TableKind::ALL {
        save_table(rs.table(family, kind), counters, &mut out);
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let input = String::from_utf8_lossy(data);
    for family in Family::ALL {
        for noflush in [false, true] {
            for counters in [false, true] {
                check(&input, family, noflush, counters);
            }
        }
    }
});

fn check(input: &str, family: Family, noflush: bool, counters: bool) {
    let start = if noflush { base().clone() } else { Ruleset::new() };
    // Compare with counters always: a failed restore must not touch them either.
    let before = save_all(&start, family, true);

    let mut tested = start.clone();
    let verdict = restore(&mut tested, input, &opts(family, noflush, counters, true));
    assert_eq!(
        save_all(&tested, family, true),
        before,
        "--test changed the ruleset ({verdict:?})"
    );

    let mut rs = start;
    let res = restore(&mut rs, input, &opts(family, noflush, counters, false));
    assert_eq!(
        res.is_ok(),
        verdict.is_ok(),
        "--test and a real run disagree: test {verdict:?}, real {res:?}"
    );
    if let Err(e) = &res {
        assert_eq!(
            save_all(&rs, family, true),
            before,
            "failed restore ({e:?}) changed the ruleset"
        );
        return;
    }

    if !restore_carried(input) {
        // Names with quotes or blanks are saved unquoted, as iptables does;
        // such a ruleset does not restore back.
        return;
    }
    let saved = save_all(&rs, family, counters);
    let mut fresh = Ruleset::new();
    // Chain counters are saved even without `counters`; restore with `-c` so
    // they are read back (rule counters are then simply absent).
    if let Err(e) = restore(&mut fresh, &saved, &opts(family, false, true, false)) {
        panic!("saved output does not restore: {e:?}\nsaved:\n{saved}");
    }
    let again = save_all(&fresh, family, counters);
    assert_eq!(saved, again, "restore → save → restore → save differs");
}

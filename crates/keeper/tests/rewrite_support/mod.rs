//! Helpers shared by the `--noflush` rewrite tests (`rewrite.rs`,
//! `rewrite_lazy.rs`, `rewrite_in_place.rs`, `rename_in_batch.rs`, …): a
//! restore through a session, the kernel's filter table checked against
//! what its rules compile to, and the comparable lines of a save. Each
//! test crate includes this module and uses part of it.

use compile::runs::RunOpts;
use iptables::exec::RestoreOpts;
use keeper::verify::verify_table;
use keeper::Session;
use nft::Socket;
use ruleset::{Family, TableKind};

/// `input` restored through `s` as iptables-restore with these options;
/// the error as iptables-restore words it.
pub fn restore(s: &mut Session, input: &str, noflush: bool, counters: bool) -> Result<(), String> {
    let mut o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
    o.noflush = noflush;
    o.counters = counters;
    s.restore(input, &o)
        .map(|_| ())
        .map_err(|e| e.render("iptables-restore"))
}

/// `verify` finds nothing to say about the filter table.
pub fn assert_clean(sock: &mut Socket, what: &str) {
    let rep = verify_table(sock, Family::Ipv4, TableKind::Filter)
        .expect("verify")
        .expect("table");
    assert!(
        rep.diffs.is_empty() && rep.notes.is_empty(),
        "{what}: {:#?} {:#?}",
        rep.diffs,
        rep.notes
    );
}

/// The chain declarations (names only) and rule lines of a save: what two
/// tables must agree on, counters and policies aside.
#[allow(dead_code)]
pub fn lines(save: &str) -> Vec<String> {
    save.lines()
        .filter(|l| l.starts_with(':') || l.starts_with("-A "))
        .map(|l| match l.strip_prefix(':') {
            Some(c) => format!(":{}", c.split(' ').next().unwrap_or("")),
            None => l.to_string(),
        })
        .collect()
}

/// Each case with runs off, and with runs of two or more rules compiled.
#[allow(dead_code)]
pub fn compiles() -> [Option<RunOpts>; 2] {
    [
        None,
        Some(RunOpts {
            min_len: 2,
            numgen: false,
        }),
    ]
}

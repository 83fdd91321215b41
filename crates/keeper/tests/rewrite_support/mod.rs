//! Helpers shared by the `--noflush` rewrite tests (`rewrite.rs`,
//! `rewrite_lazy.rs`): a restore through a session, and the kernel's
//! filter table checked against what its rules compile to.

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

//! Helpers shared by the keeper kernel tests that compare the kernel with a
//! model: both sides' filter table as iptables-save prints it.

use iptables::exec::save_table;
use keeper::Session;
use ruleset::{Family, Ruleset, TableKind};

/// Text without comment lines.
fn no_comments(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The kernel's filter table as iptables-save prints it (with `counters`),
/// without comments.
pub fn kernel_save(s: &mut Session, counters: bool) -> String {
    no_comments(
        &s.save_text(counters, Some(TableKind::Filter))
            .expect("save"),
    )
}

/// The model's filter table, the same way.
pub fn model_save(rs: &Ruleset<iptables::Rule>, counters: bool) -> String {
    let mut out = String::new();
    save_table(
        rs.table(Family::Ipv4, TableKind::Filter),
        counters,
        &mut out,
    );
    no_comments(&out)
}

//! Legacy xtables blobs: what iptables-legacy keeps in the kernel's
//! ip_tables/ip6_tables, read back into nfkeeper's iptables model.
//!
//! [`entry`]: the entry codec (`struct ipt_entry`/`ip6t_entry`, matches,
//! targets); [`table`]: entries into chains (hooks, policies, user chains,
//! jumps and gotos) and the empty table; [`decode`]: the address part and
//! each extension's info into `iptables::Rule` (the inverse of
//! `compile::compat`, which `--from nft` can reuse: iptables-nft's compat
//! expressions carry the same infos); [`kernel`]: the getsockopt
//! interface of the current network namespace (the only I/O).
//!
//! Depends on `iptables` (the model and its printers) and `ruleset`; used
//! by the `nfkeeper migrate` subcommand.

pub mod decode;
pub mod entry;
pub mod from_nft;
pub mod kernel;
pub mod table;

use ruleset::Family;

/// A table as read from the kernel: its layout, its entries and what they
/// decode to.
pub struct Read {
    pub info: table::Info,
    pub entries: Vec<entry::Entry>,
    pub table: decode::Table,
}

/// Read table `name` (listed by [`kernel::table_names`]) and decode it.
pub fn read_table(sock: &kernel::Socket, family: Family, name: &str) -> Result<Read, String> {
    let (info, blob) = sock
        .read(name)
        .map_err(|e| format!("cannot read table {name}: {e}"))?;
    let entries = entry::parse(family, &blob).map_err(|e| format!("table {name}: {e}"))?;
    let raw = table::chains(family, &info, &entries).map_err(|e| format!("table {name}: {e}"))?;
    let table = decode::table(family, name, &raw).map_err(|e| e.to_string())?;
    Ok(Read {
        info,
        entries,
        table,
    })
}

/// Whether table `name` still holds the rules of `before` (counters aside:
/// packets keep moving them). Read again just before the table is emptied,
/// so that a change made after the first read is not lost; the kernel's
/// own check (the entry count) misses a change that keeps the count.
pub fn unchanged(
    sock: &kernel::Socket,
    family: Family,
    name: &str,
    before: &[entry::Entry],
) -> Result<bool, String> {
    let (_, blob) = sock
        .read(name)
        .map_err(|e| format!("cannot read table {name}: {e}"))?;
    let now = entry::parse(family, &blob).map_err(|e| format!("table {name}: {e}"))?;
    let strip = |e: &entry::Entry| entry::Entry {
        counters: (0, 0),
        ..e.clone()
    };
    Ok(now.len() == before.len() && now.iter().zip(before).all(|(a, b)| strip(a) == strip(b)))
}

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
pub mod kernel;
pub mod table;

use ruleset::Family;

/// A table read from the kernel and decoded.
pub fn read_table(
    sock: &kernel::Socket,
    family: Family,
    name: &str,
) -> Result<(table::Info, decode::Table), String> {
    let (info, blob) = sock
        .read(name)
        .map_err(|e| format!("cannot read table {name}: {e}"))?;
    let entries = entry::parse(family, &blob).map_err(|e| format!("table {name}: {e}"))?;
    let raw = table::chains(family, &info, &entries).map_err(|e| format!("table {name}: {e}"))?;
    let t = decode::table(family, name, &raw).map_err(|e| e.to_string())?;
    Ok((info, t))
}

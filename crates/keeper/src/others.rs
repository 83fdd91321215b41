//! Other iptables backends in the namespace: their rules act on packets
//! too, but nfkeeper's listings and saves show only nfkeeper's tables, so
//! the iptables programs warn about them (iptables-nft warns about legacy
//! tables the same way).
//!
//! Cost: one small file read and one table dump of the family (a handful
//! of tables), after a listing or a save only.

use iptables::tool::Others;
use nft::Socket;
use ruleset::Family;

/// The tables iptables-nft creates (one per iptables table it was used
/// with), in the `ip`/`ip6` family.
const IPTABLES_NFT_TABLES: &[&str] = &["filter", "nat", "mangle", "raw", "security"];

/// What other backends hold tables of `family` in the namespace `sock`
/// talks to. Errors read as "none": a warning is not worth failing a
/// listing for. Legacy tables are looked for (in /proc/net, which is this
/// process's namespace) only when `sock` is a kernel socket, which has a
/// namespace cookie: a fake kernel has no legacy tables.
pub fn others(sock: &mut Socket, family: Family) -> Others {
    let names = match family {
        Family::Ipv4 => "/proc/net/ip_tables_names",
        Family::Ipv6 => "/proc/net/ip6_tables_names",
    };
    // iptables-nft's test: the file has a first line.
    let legacy = sock.netns_cookie().is_some() && std::fs::read(names).is_ok_and(|b| !b.is_empty());
    let nft = sock
        .tables(compile::layout::nft_family(family))
        .is_ok_and(|ts| {
            ts.iter()
                .any(|t| IPTABLES_NFT_TABLES.contains(&t.name.as_str()))
        });
    Others { legacy, nft }
}

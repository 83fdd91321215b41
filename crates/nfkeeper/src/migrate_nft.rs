//! The `--from nft` steps of `nfkeeper migrate` (see [`crate::migrate`]):
//! read iptables-nft's tables of this namespace with nfkeeper's own
//! nf_tables codec (`xtables::from_nft`), and, after nfkeeper committed,
//! delete those still holding what was read.

use crate::migrate::{fam_name, Found, FoundAll, Src};
use ruleset::Family;
use xtables::from_nft;

fn socket() -> Result<nft::Socket, String> {
    nft::Socket::open().map_err(|e| format!("cannot open an nf_tables socket: {e}"))
}

/// Step 1: iptables-nft's tables of `families` that hold something,
/// decoded; `Err(exit code)` after saying why not (nothing changed).
pub fn read(families: &[Family]) -> Result<FoundAll, i32> {
    let mut sock = socket().map_err(|e| {
        eprintln!("nfkeeper migrate: {e}");
        4
    })?;
    let mut found = Vec::new();
    for &family in families {
        let names = from_nft::table_names(&mut sock, family).map_err(|e| {
            eprintln!("nfkeeper migrate: {}: {e}", fam_name(family));
            4
        })?;
        let mut tables = Vec::new();
        for name in names {
            let r = from_nft::read(&mut sock, family, &name).map_err(|e| {
                eprintln!(
                    "nfkeeper migrate: cannot migrate iptables-nft {} {e}; nothing was changed",
                    fam_name(family)
                );
                1
            })?;
            if !r.table.is_empty() {
                tables.push(Found {
                    name,
                    table: r.table,
                    src: Src::Nft(r.print),
                });
            }
        }
        if !tables.is_empty() {
            found.push((family, tables));
        }
    }
    Ok(found)
}

/// Last step: delete each family's migrated tables that are unchanged
/// since read, one transaction per family. Returns the tables deleted
/// (`ip filter`) and whether any was left.
pub fn delete(found: &FoundAll) -> (Vec<String>, bool) {
    let mut deleted = Vec::new();
    let mut failed = false;
    let mut sock = match socket() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("nfkeeper migrate: loaded into nfkeeper, but {e}");
            return (deleted, true);
        }
    };
    for (family, tables) in found {
        let fam = fam_name(*family);
        let read: Vec<(&str, &from_nft::Fingerprint)> = tables
            .iter()
            .filter_map(|f| match &f.src {
                Src::Nft(p) => Some((f.name.as_str(), p)),
                Src::Legacy { .. } => None,
            })
            .collect();
        match from_nft::delete_unchanged(&mut sock, *family, &read) {
            Ok((gone, left)) => {
                deleted.extend(gone.iter().map(|n| format!("{fam} {n}")));
                for (n, why) in left {
                    failed = true;
                    eprintln!(
                        "nfkeeper migrate: loaded into nfkeeper, but iptables-nft's \
                         {fam} {n} was not deleted: {why}"
                    );
                }
            }
            Err(e) => {
                failed = true;
                eprintln!(
                    "nfkeeper migrate: loaded into nfkeeper, but iptables-nft's {fam} \
                     tables were not deleted: {e}"
                );
            }
        }
    }
    (deleted, failed)
}

//! `nfkeeper verify`: reads nfkeeper's tables in the kernel of this network
//! namespace and reports every difference from what the logical rules they
//! record compile to (see `keeper::verify`). Exit status 0 when there is
//! none, 1 when there are differences, 4 when the kernel cannot be read,
//! 2 for a bad option.

use ruleset::{Family, TableKind};

pub const USAGE: &str = "\
usage: nfkeeper verify [-4|-6] [-t TABLE] [-q]

Reads nfkeeper's tables from the kernel of this network namespace (both
families and every table unless -4, -6 or -t narrow it) and checks that each
kernel rule, set and element is what the logical rule it records compiles to:
plain rules' expressions and anonymous sets, compiled runs' rules and every
element's key and verdict, base chains' hooks, and nothing foreign. Prints
one line per difference and a summary per table (-q: differences only).
Exit status: 0 no difference, 1 differences, 4 the kernel could not be read.";

pub fn verify(args: &[String]) -> i32 {
    let mut families = Family::ALL.to_vec();
    let mut tables = TableKind::ALL.to_vec();
    let mut quiet = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-4" => families = vec![Family::Ipv4],
            "-6" => families = vec![Family::Ipv6],
            "-q" | "--quiet" => quiet = true,
            "-t" | "--table" => match it.next().map(|t| (t, TableKind::from_name(t))) {
                Some((_, Some(k))) => tables = vec![k],
                Some((t, None)) => {
                    eprintln!("nfkeeper verify: unknown table \"{t}\"");
                    return 2;
                }
                None => {
                    eprintln!("nfkeeper verify: -t needs a table name");
                    return 2;
                }
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return 0;
            }
            other => {
                eprintln!("nfkeeper verify: unknown option \"{other}\"\n{USAGE}");
                return 2;
            }
        }
    }
    let mut sock = match keeper::verify::socket() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("nfkeeper verify: cannot open the nftables socket: {e}");
            return 4;
        }
    };
    let (mut seen, mut diffs) = (0, 0);
    for &family in &families {
        for &kind in &tables {
            let rep = match keeper::verify::verify_table(&mut sock, family, kind) {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(e) => {
                    eprintln!("nfkeeper verify: {} {}: {e}", fam_name(family), kind.name());
                    return 4;
                }
            };
            seen += 1;
            let name = format!("{} {}", fam_name(family), kind.name());
            for d in &rep.diffs {
                println!("{name}: {d}");
            }
            diffs += rep.diffs.len();
            if !quiet {
                println!(
                    "{name}: {} kernel rules, {} runs ({} elements): {}",
                    rep.rules,
                    rep.runs,
                    rep.elems,
                    match rep.diffs.len() {
                        0 => "no differences".to_string(),
                        1 => "1 difference".to_string(),
                        n => format!("{n} differences"),
                    }
                );
            }
        }
    }
    if seen == 0 && !quiet {
        println!("nfkeeper verify: no nfkeeper tables in this network namespace");
    }
    i32::from(diffs > 0)
}

/// The nftables family name of our table.
fn fam_name(f: Family) -> &'static str {
    match f {
        Family::Ipv4 => "ip",
        Family::Ipv6 => "ip6",
    }
}

//! `nfkeeper verify`: reads nfkeeper's tables in the kernel of this network
//! namespace and reports every difference from what the logical rules they
//! record compile to (see `keeper::verify`), and, when `nfkeeper serve`
//! answers in the namespace, whether the daemon's model saves the same
//! ruleset as the kernel. Exit status 0 when there is no difference, 1
//! when there are, 4 when the kernel cannot be read, 2 for a bad option.

use ruleset::{Family, TableKind};

pub const USAGE: &str = "\
usage: nfkeeper verify [-4|-6] [-t TABLE] [-q]

Reads nfkeeper's tables from the kernel of this network namespace (both
families and every table unless -4, -6 or -t narrow it) and checks that each
kernel rule, set and element is what the logical rule it records compiles to:
plain rules' expressions and anonymous sets, compiled runs' rules and every
element's key and verdict, base chains' hooks, and nothing foreign. When
`nfkeeper serve` runs in the namespace, its model's iptables-save (without
counters) must also equal the kernel's (check while nothing changes the
ruleset). Prints one line per difference and a summary per table (-q:
differences only).
Exit status: 0 no difference, 1 differences, 4 the kernel could not be read.";

pub fn verify(args: &[String], settings: &crate::settings::Settings) -> i32 {
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
            for n in &rep.notes {
                println!("{name}: note: {n}");
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
    for &family in &families {
        match daemon_diff(family, &tables, settings) {
            Ok(None) => {}
            Ok(Some(d)) => {
                println!("{} daemon: {d}", fam_name(family));
                diffs += 1;
            }
            Err(e) => {
                eprintln!("nfkeeper verify: {e}");
                return 4;
            }
        }
    }
    i32::from(diffs > 0)
}

/// With a daemon serving this namespace: the first line where its model's
/// iptables-save of `family` (no counters, `tables` only) differs from the
/// kernel's, if any. `Ok(None)` also when no daemon answers.
fn daemon_diff(
    family: Family,
    tables: &[TableKind],
    settings: &crate::settings::Settings,
) -> Result<Option<String>, String> {
    let only = match tables {
        [t] => Some(*t),
        _ => None,
    };
    let req = proto::Request::Save {
        family: match family {
            Family::Ipv4 => proto::Fam::V4,
            Family::Ipv6 => proto::Fam::V6,
        },
        prog: "iptables-save".into(),
        counters: false,
        table: only.map(|t| t.name().to_string()),
    };
    let model = match crate::via_daemon::capture(&req, settings) {
        None => return Ok(None),
        Some(Ok(text)) => text,
        Some(Err(e)) => return Ok(Some(format!("its iptables-save failed: {e}"))),
    };
    let mut s = keeper::Session::open(family, settings.engine).map_err(|e| e.to_string())?;
    let kernel = s.save_text(false, only).map_err(|e| e.to_string())?;
    let lines = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    let (m, k) = (lines(&model), lines(&kernel));
    if m == k {
        return Ok(None);
    }
    let at = m.iter().zip(&k).take_while(|(a, b)| a == b).count();
    Ok(Some(format!(
        "its model differs from the kernel at save line {}: model \"{}\", kernel \"{}\"",
        at + 1,
        m.get(at).map_or("(end)", String::as_str),
        k.get(at).map_or("(end)", String::as_str)
    )))
}

/// The nftables family name of our table.
fn fam_name(f: Family) -> &'static str {
    match f {
        Family::Ipv4 => "ip",
        Family::Ipv6 => "ip6",
    }
}

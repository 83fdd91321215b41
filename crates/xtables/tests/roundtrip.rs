//! decode(encode(x)) == x over the conformance vectors
//! (`../shared/conformance/iptables-1.8.11/extensions/*.t`): every OK
//! vector of an extension this crate decodes is parsed by nfkeeper, its
//! matches and target are encoded by `compile::compat` (the infos
//! iptables writes), decoded back by `xtables::decode`, and must be the
//! parsed values again. Extensions nfkeeper lowers natively have no
//! encoder there; their infos are covered by hand-built vectors (unit
//! tests) and by the kernel test (`crates/nfkeeper/tests/migrate.rs`).
//! Skips with a message when the vectors are absent.

use iptables::parse::{parse, restore::tokenize, ParseOpts};
use iptables::Target;
use ruleset::{Family, TableKind};
use std::collections::BTreeMap;
use std::path::PathBuf;
use xtables::decode::{matches, targets};

struct Vector {
    module: String,
    at: String,
    family: Family,
    table: TableKind,
    chain: String,
    saved: String,
}

fn vectors(dir: &PathBuf) -> Vec<Vector> {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".t"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let stem = file.trim_end_matches(".t");
        let (module, fams): (&str, &[Family]) = if let Some(m) = stem.strip_prefix("libxt_") {
            (m, &[Family::Ipv4, Family::Ipv6])
        } else if let Some(m) = stem.strip_prefix("libipt_") {
            (m, &[Family::Ipv4])
        } else if let Some(m) = stem.strip_prefix("libip6t_") {
            (m, &[Family::Ipv6])
        } else {
            continue;
        };
        if !matches::names().contains(&module) && !targets::names().contains(&module) {
            continue;
        }
        let text = std::fs::read_to_string(dir.join(&file)).unwrap();
        for &family in fams {
            let mut chains = vec!["INPUT".to_string()];
            let mut table = TableKind::Filter;
            for (n, line) in text.lines().enumerate() {
                let line = line.trim_end();
                if let Some(c) = line.strip_prefix(':') {
                    chains = c.split(',').map(str::to_string).collect();
                    continue;
                }
                if let Some(t) = line.strip_prefix('*') {
                    table = TableKind::from_name(t).expect("table");
                    continue;
                }
                let item: Vec<&str> = line.split(';').collect();
                if item.len() < 3 || item[2] != "OK" {
                    continue;
                }
                let saved = if item[1] == "=" { item[0] } else { item[1] };
                out.push(Vector {
                    module: module.to_string(),
                    at: format!("{file}:{}", n + 1),
                    family,
                    table,
                    chain: chains[0].clone(),
                    saved: saved.to_string(),
                });
            }
        }
    }
    out
}

/// (module, family, rule in save form) for the decoded extensions
/// iptables ships no vector file for.
const EXTRA: &[(&str, Family, &str)] = &[
    (
        "devgroup",
        Family::Ipv4,
        "-m devgroup --src-group 0x1 ! --dst-group 0x2/0xf",
    ),
    ("devgroup", Family::Ipv6, "-m devgroup ! --src-group 0x3"),
    // libxt_nfacct.t needs the nfacct tool to set up.
    ("nfacct", Family::Ipv4, "-m nfacct --nfacct-name acct1"),
];

#[test]
fn decode_inverts_the_compat_encoders() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/iptables-1.8.11/extensions");
    if !dir.is_dir() {
        eprintln!("SKIP: conformance vectors not found at {}", dir.display());
        return;
    }
    // module -> (vectors, infos compared)
    let mut tally: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    let mut all = vectors(&dir);
    // Extensions without a vector file of their own.
    for (module, family, saved) in EXTRA {
        all.push(Vector {
            module: module.to_string(),
            at: "EXTRA".into(),
            family: *family,
            table: TableKind::Mangle,
            chain: "PREROUTING".into(),
            saved: saved.to_string(),
        });
    }
    for v in all {
        let words = tokenize(&v.saved).expect("tokenize");
        let mut argv = vec!["-A", v.chain.as_str()];
        argv.extend(words.iter().map(String::as_str));
        let o = ParseOpts {
            family: v.family,
            restore: true,
            table: Some(v.table),
            prog: "iptables",
        };
        let Ok(p) = parse(&argv, o) else {
            // nfkeeper's own conformance test owns what it refuses.
            continue;
        };
        let rule = &p.rules[0];
        let t = tally.entry(v.module.clone()).or_default();
        t.0 += 1;
        for m in &rule.matches {
            let Some(c) = compile::compat::matches::info(m, v.family) else {
                continue;
            };
            if !matches::names().contains(&c.name) {
                continue;
            }
            t.1 += 1;
            match matches::decode(v.family, c.name, c.rev as u8, &c.info) {
                Ok(d) if d == *m => {}
                Ok(d) => misses.push(format!("{} `{}`: decoded {d:?}, want {m:?}", v.at, v.saved)),
                Err(e) => misses.push(format!("{} `{}`: {}", v.at, v.saved, e.0)),
            }
        }
        if let Target::Ext(x) = &rule.target {
            if let Some(c) = compile::compat::targets::layout(x, v.family) {
                if targets::names().contains(&c.name) {
                    t.1 += 1;
                    match targets::decode(v.family, c.name, c.rev as u8, &c.info) {
                        Ok(d) if d == **x => {}
                        Ok(d) => misses
                            .push(format!("{} `{}`: decoded {d:?}, want {x:?}", v.at, v.saved)),
                        Err(e) => misses.push(format!("{} `{}`: {}", v.at, v.saved, e.0)),
                    }
                }
            }
        }
    }
    for (m, (n, infos)) in &tally {
        eprintln!("{m}: {n} vectors, {infos} infos round-tripped");
    }
    assert!(
        misses.is_empty(),
        "{} misses:\n{}",
        misses.len(),
        misses.join("\n")
    );
    // Every decoded extension that compile encodes was exercised.
    const NATIVE: &[&str] = &[
        "tcp", "udp", "icmp", "icmp6", "comment", "state", "mark", "connmark", "iprange", "mac",
        "pkttype", "length", "ttl", "hl", "tos", "dscp", "esp", "frag", "LOG", "NFLOG", "MARK",
        "NOTRACK", "TRACE",
    ];
    for m in matches::names().into_iter().chain(targets::names()) {
        if NATIVE.contains(&m) {
            continue;
        }
        let got = tally.get(m).map_or(0, |t| t.1);
        assert!(got > 0, "{m}: no info round-tripped");
    }
}

//! The same direct-mode sessions on the real kernel (fresh namespace;
//! skipped without root) and on the fake: the same answers and the same
//! state after each step. Covers what keeper writes for generated
//! rulesets of both families (runs compiled or not), kube-proxy's nat
//! table, a Cloud Foundry table, every conformance vector keeper lowers,
//! and random command streams.

use super::*;
use std::collections::HashMap;

/// A kernel to run a story on: sessions and a reader over it.
trait Side {
    fn session(&self, fam: Family, runs: bool) -> Session;
    fn reader(&self) -> Socket;
}

struct Real;

impl Side for Real {
    fn session(&self, fam: Family, runs: bool) -> Session {
        Session::open(fam, settings(runs)).expect("netlink")
    }
    fn reader(&self) -> Socket {
        Socket::open().expect("netlink")
    }
}

impl Side for Kernel {
    fn session(&self, fam: Family, runs: bool) -> Session {
        Session::with_socket(self.socket(), fam, settings(runs))
    }
    fn reader(&self) -> Socket {
        self.socket()
    }
}

/// Runs `story` on the real kernel and on a fake one; both transcripts
/// must be equal.
fn compare(story: fn(&dyn Side) -> Vec<String>) {
    let Some(real) = testkit::in_netns(move || story(&Real)) else {
        return;
    };
    let fake = story(&Kernel::new());
    let (real, fake) = (renumber_anonymous_sets(real), renumber_anonymous_sets(fake));
    for (a, b) in real.iter().zip(&fake) {
        assert_eq!(a, b, "kernel (left) and fake (right) differ");
    }
    assert_eq!(real.len(), fake.len(), "transcript lengths");
}

/// Everything the kernel holds, read through dumps, in a comparable form
/// (table handles are kernel-wide counters: left out; elements sorted;
/// without userdata when `!userdata`: rule ids from partial reads start
/// at a random base).
fn kernel_state(sock: &mut Socket, userdata: bool) -> Vec<String> {
    let mut out = Vec::new();
    for mut t in sock.tables(nft::Family::Unspec).expect("tables") {
        t.handle = None;
        let (fam, name) = (t.family, t.name.clone());
        out.push(format!("{t:?}"));
        for c in sock.chains(fam, Some(&name)).expect("chains") {
            if c.table == name {
                out.push(format!("{c:?}"));
            }
        }
        sock.rules(fam, Some(&name), None, |r| {
            let mut r = r.to_rule()?;
            if !userdata {
                r.userdata = None;
            }
            out.push(format!("{r:?}"));
            Ok(())
        })
        .expect("rules");
        for set in sock.sets(fam, Some(&name)).expect("sets") {
            let mut elems: Vec<String> = sock
                .set_elems(fam, &name, &set.name)
                .expect("elements")
                .into_iter()
                .map(|mut e| {
                    if !userdata {
                        e.userdata = None;
                    }
                    format!("{e:?}")
                })
                .collect();
            elems.sort();
            out.push(format!("{set:?}"));
            out.extend(elems);
        }
    }
    out
}

/// keeper numbers its anonymous sets (`__nfk_set<N>`) from a random base:
/// number them by first appearance instead.
fn renumber_anonymous_sets(lines: Vec<String>) -> Vec<String> {
    const P: &str = "__nfk_set";
    let mut seen: HashMap<String, usize> = HashMap::new();
    lines
        .into_iter()
        .map(|l| {
            let mut out = String::new();
            let mut rest = l.as_str();
            while let Some(at) = rest.find(P) {
                out.push_str(&rest[..at + P.len()]);
                rest = &rest[at + P.len()..];
                let digits = rest.chars().take_while(char::is_ascii_digit).count();
                let n = seen.len();
                let k = *seen.entry(rest[..digits].to_string()).or_insert(n);
                out.push_str(&format!("#{k}"));
                rest = &rest[digits..];
            }
            out.push_str(rest);
            out
        })
        .collect()
}

/// A restore's answer.
fn restore_answer(s: &mut Session, text: &str) -> String {
    match s.restore(text, &ropts(s.family)) {
        Ok(_) => "ok".into(),
        Err(e) => format!("line {}: {}", e.line, e.err.msg),
    }
}

/// Generated rulesets (both families, runs compiled or not), kube-proxy's
/// nat table, a Cloud Foundry filter table: each restored, then the state.
fn generated(side: &dyn Side) -> Vec<String> {
    let mut out = Vec::new();
    let mut reader = side.reader();
    for seed in 1..=6u64 {
        let fam = if seed % 2 == 0 {
            Family::Ipv6
        } else {
            Family::Ipv4
        };
        let mut r = classify::gen::Rng::new(seed);
        let text = classify::gen::ruleset_of(&mut r, 300, fam);
        let mut s = side.session(fam, seed % 3 != 0);
        out.push(format!("seed {seed}: {}", restore_answer(&mut s, &text)));
        out.extend(kernel_state(&mut reader, true));
    }
    let mut s = side.session(FAM, false);
    out.push(format!(
        "kube-proxy: {}",
        restore_answer(&mut s, &workload::kube_proxy(400))
    ));
    let mut s = side.session(FAM, true);
    out.push(format!(
        "cloud foundry: {}",
        restore_answer(&mut s, &workload::cloud_foundry(700))
    ));
    out.extend(kernel_state(&mut reader, true));
    out
}

#[test]
fn generated_rulesets_leave_the_same_state() {
    compare(generated);
}

/// Random commands (append, insert, replace, delete by number and by
/// spec, flush) on generated rulesets with compiled runs.
fn command_streams(side: &dyn Side) -> Vec<String> {
    let mut out = Vec::new();
    let mut reader = side.reader();
    let mut s = side.session(FAM, true);
    for seed in 1..=3u64 {
        let mut r = classify::gen::Rng::new(seed);
        let text = classify::gen::ruleset(&mut r, 200);
        out.push(format!("seed {seed}: {}", restore_answer(&mut s, &text)));
        let bodies: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("-A ").and_then(|l| l.split_once(' ')))
            .map(|(_, b)| b)
            .collect();
        for step in 0..40 {
            let chain = ["INPUT", "FORWARD", "U0", "U1"][r.below(4) as usize];
            let body = bodies[r.below(bodies.len() as u64) as usize];
            let words = match r.below(6) {
                0 => format!("-A {chain} {body}"),
                1 => format!("-I {chain} 1 {body}"),
                2 => format!("-R {chain} 1 {body}"),
                3 => format!("-D {chain} 1"),
                4 => format!("-D {chain} {body}"),
                _ => format!("-F {chain}"),
            };
            let argv = tokenize(&words).unwrap();
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            out.push(format!("{step}: {words}: {:?}", command(&mut s, &argv)));
            if step % 10 == 9 {
                out.extend(kernel_state(&mut reader, false));
            }
        }
    }
    out
}

#[test]
fn command_streams_leave_the_same_state() {
    compare(command_streams);
}

/// The iptables conformance vectors (`../shared/conformance`) keeper
/// lowers, one restore per file, family and table.
fn vectors(side: &dyn Side) -> Vec<String> {
    let mut out = Vec::new();
    let mut reader = side.reader();
    for (i, (fam, text)) in vector_restores().into_iter().enumerate() {
        let mut s = side.session(fam, false);
        out.push(format!("restore {i}: {}", restore_answer(&mut s, &text)));
        out.extend(kernel_state(&mut reader, true));
    }
    out
}

#[test]
fn conformance_vectors_leave_the_same_state() {
    if vector_restores().is_empty() {
        eprintln!("SKIP: conformance vectors not found");
        return;
    }
    compare(vectors);
}

/// Per vector file, family and table section: a restore of every OK
/// vector that the model takes and keeper lowers, appended to the
/// section's first chain.
fn vector_restores() -> Vec<(Family, String)> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/iptables-1.8.11/extensions");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<std::path::PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "t"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(f).unwrap();
        let fams: &[Family] = if name.starts_with("libxt_") {
            &[Family::Ipv4, Family::Ipv6]
        } else if name.starts_with("libip6t_") {
            &[Family::Ipv6]
        } else {
            &[Family::Ipv4]
        };
        for &fam in fams {
            out.extend(file_restores(fam, &text));
        }
    }
    out
}

fn file_restores(fam: Family, text: &str) -> Vec<(Family, String)> {
    let mut out = Vec::new();
    let (mut kind, mut chain) = (FILTER, "INPUT".to_string());
    let mut lines: Vec<String> = Vec::new();
    let mut flush = |kind: TableKind, lines: &mut Vec<String>| {
        if !lines.is_empty() {
            let body: String = lines.drain(..).map(|l| l + "\n").collect();
            out.push((fam, format!("*{}\n{body}COMMIT\n", kind.name())));
        }
    };
    for line in text.lines() {
        if let Some(t) = line.strip_prefix('*') {
            flush(kind, &mut lines);
            kind = TableKind::from_name(t.trim()).unwrap_or(FILTER);
            continue;
        }
        if let Some(c) = line.strip_prefix(':') {
            chain = c.split(',').next().unwrap_or("INPUT").to_string();
            continue;
        }
        let item: Vec<&str> = line.split(';').collect();
        if line.starts_with('#') || item.len() != 3 || item[2] != "OK" {
            continue;
        }
        let candidate = format!("*{}\n-A {chain} {}\nCOMMIT\n", kind.name(), item[0]);
        // Keep what the model takes and keeper lowers (an offline restore
        // with the kernel's planner).
        if lowers(fam, &candidate) {
            lines.push(format!("-A {chain} {}", item[0]));
        }
    }
    flush(kind, &mut lines);
    out
}

/// Whether keeper plans `restore` on an empty kernel (a throwaway fake).
fn lowers(fam: Family, restore: &str) -> bool {
    let k = Kernel::new();
    let mut s = k.session(fam, false);
    s.restore(restore, &ropts(fam)).is_ok() || {
        // Refused by the fake, not by the planner: still a candidate.
        k.stats().batches > 0
    }
}

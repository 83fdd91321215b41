//! `bench conformance`: iptables 1.8.11's extension test vectors
//! (`extensions/*.t`) through each tool's command line into the kernel of
//! a fresh network namespace, checked with the tool's own save, as
//! iptables' `iptables-test.py` runs them ([`vectors`] reads the files,
//! [`run`] runs them). Not a timing suite: it counts passes.
//!
//! Output: a per-file table (vectors, passes per tool), totals and pass
//! rates over all vectors and over the vectors iptables-nft passes, and
//! per tool the failures (`failures-TOOL.txt`, one [`failure_line`] each)
//! in the output directory.

pub mod cli;
pub mod run;
pub mod vectors;

use crate::netns::Netns;
use run::{Exec, Outcome, Tool, Verdict};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use vectors::{families, parse, Step};

/// Limit of one command; a tool stuck longer fails that vector.
const LIMIT: Duration = Duration::from_secs(20);

/// Commands in one network namespace, created for one file and family.
struct NsExec(Netns);

impl Exec for NsExec {
    fn exec(&self, argv: &[String]) -> Outcome {
        match self.0.run(argv, None, LIMIT) {
            Ok(r) => Outcome {
                ok: r.status.success(),
                stdout: r.stdout,
                stderr: r.stderr,
            },
            Err(e) => Outcome {
                ok: false,
                stdout: String::new(),
                stderr: format!("{}: {e}", argv[0]),
            },
        }
    }
}

/// A test file: its name and its steps in each of its families.
pub type File = (String, Vec<Vec<Step>>);

/// The test files of `dir` whose name starts with one of `only` (all when
/// empty), sorted, each with its steps per family.
pub fn load(dir: &Path, only: &[String]) -> Result<Vec<File>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".t"))
        .filter(|n| only.is_empty() || only.iter().any(|o| n.starts_with(o.as_str())))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(dir.join(&n)).map_err(|e| format!("{n}: {e}"))?;
            let per: Result<Vec<Vec<Step>>, String> =
                families(&n).iter().map(|f| parse(&n, &text, *f)).collect();
            Ok((n, per?))
        })
        .collect()
}

/// Runs every file's steps through `tool`, each file and family in a
/// namespace of its own, `jobs` files at a time (the verdicts in file
/// order whatever `jobs` is). `progress` is called after each file.
pub fn run_tool(
    tool: &Tool,
    files: &[File],
    jobs: usize,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Vec<Verdict>, String> {
    let next = AtomicUsize::new(0);
    // Per file: its verdicts once run (`None`: not run).
    type Slot = Option<Result<Vec<Verdict>, String>>;
    let done: Mutex<Vec<Slot>> = Mutex::new(files.iter().map(|_| None).collect());
    let worker = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some((name, per)) = files.get(i) else {
            return;
        };
        let r = run_file(tool, per);
        let failed = r.is_err();
        if let Ok(mut d) = done.lock() {
            d[i] = Some(r);
        }
        progress(name);
        if failed {
            // Makes the other workers stop at their next file.
            next.store(files.len(), Ordering::Relaxed);
        }
    };
    std::thread::scope(|sc| {
        for _ in 1..jobs.max(1) {
            sc.spawn(worker);
        }
        worker();
    });
    let done = done
        .into_inner()
        .map_err(|_| "a worker panicked".to_string())?;
    let mut out = Vec::new();
    for r in done {
        match r {
            Some(r) => out.extend(r?),
            None => return Err("stopped after an error".into()),
        }
    }
    Ok(out)
}

/// One file's families, each in a fresh namespace.
fn run_file(tool: &Tool, per: &[Vec<Step>]) -> Result<Vec<Verdict>, String> {
    let mut out = Vec::new();
    for steps in per {
        let ns = Netns::new().map_err(|e| format!("network namespace: {e}"))?;
        out.extend(run::run_steps(tool, &NsExec(ns), steps));
    }
    Ok(out)
}

/// A failure as the failure files and the golden list write it:
/// `FILE:LINE FAMILY CHAIN REASON`.
pub fn failure_line(v: &Verdict) -> Option<String> {
    let r = v.failure.as_ref()?;
    let x = &v.vector;
    Some(format!(
        "{}:{} {} {} {r}",
        x.file,
        x.line,
        x.family.as_str(),
        x.chain
    ))
}

/// The key of a vector across tools.
fn key(v: &Verdict) -> (String, usize, vectors::Family, String) {
    let x = &v.vector;
    (x.file.clone(), x.line, x.family, x.chain.clone())
}

/// The per-file table and the totals, as Markdown. `results` are the
/// tools' verdicts in the same order (same vectors).
pub fn summary(tools: &[(String, Vec<Verdict>)]) -> String {
    let mut s = String::new();
    let mut head = "| file | vectors |".to_string();
    let mut rule = "|---|--:|".to_string();
    for (n, _) in tools {
        head.push_str(&format!(" {n} |"));
        rule.push_str("--:|");
    }
    s.push_str(&format!("{head}\n{rule}\n"));
    let Some((_, first)) = tools.first() else {
        return s;
    };
    // file → (vectors, passes per tool)
    let mut rows: BTreeMap<&str, (usize, Vec<usize>)> = BTreeMap::new();
    for (i, v) in first.iter().enumerate() {
        let row = rows
            .entry(v.vector.file.as_str())
            .or_insert((0, vec![0; tools.len()]));
        row.0 += 1;
        for (t, (_, vs)) in tools.iter().enumerate() {
            if vs.get(i).is_some_and(|v| v.failure.is_none()) {
                row.1[t] += 1;
            }
        }
    }
    let total = first.len();
    let mut passed = vec![0; tools.len()];
    for (file, (n, p)) in &rows {
        s.push_str(&format!("| {file} | {n} |"));
        for (t, x) in p.iter().enumerate() {
            passed[t] += x;
            s.push_str(&format!(" {x} |"));
        }
        s.push('\n');
    }
    s.push_str(&format!("| **total** | **{total}** |"));
    for p in &passed {
        s.push_str(&format!(" **{p}** |"));
    }
    s.push('\n');
    s.push_str("| pass rate | |");
    for p in &passed {
        s.push_str(&format!(" {} |", pct(*p, total)));
    }
    s.push('\n');
    s.push('\n');
    s.push_str(&totals(tools));
    s
}

fn pct(p: usize, n: usize) -> String {
    if n == 0 {
        return "-".into();
    }
    format!("{:.1}%", 100.0 * p as f64 / n as f64)
}

/// The headline lines: per tool, passes over all vectors; with
/// iptables-nft among the tools, passes over the vectors it passes, and
/// the vectors every tool fails (modules this kernel lacks, mostly).
fn totals(tools: &[(String, Vec<Verdict>)]) -> String {
    let mut s = String::new();
    let n = tools.first().map_or(0, |t| t.1.len());
    for (name, vs) in tools {
        let p = vs.iter().filter(|v| v.failure.is_none()).count();
        s.push_str(&format!(
            "{name}: {p} of {n} vectors pass ({})\n",
            pct(p, n)
        ));
    }
    let all_fail = (0..n)
        .filter(|i| {
            tools
                .iter()
                .all(|(_, vs)| vs.get(*i).is_some_and(|v| v.failure.is_some()))
        })
        .count();
    if tools.len() > 1 {
        s.push_str(&format!(
            "failed by every tool: {all_fail} (a module this kernel lacks, mostly)\n"
        ));
        for (name, vs) in tools {
            let p = vs.iter().filter(|v| v.failure.is_none()).count();
            s.push_str(&format!(
                "{name}: {p} of the {} vectors some tool passes ({})\n",
                n - all_fail,
                pct(p, n - all_fail)
            ));
        }
    }
    for (name, vs) in tools {
        let (p, t) = unit_tests(vs);
        s.push_str(&format!(
            "{name}: {p} of {t} unit tests pass (iptables-test.py's count: a line \
             per family, passed when it passes in every chain)\n"
        ));
    }
    if let Some((_, base)) = tools.iter().find(|(n, _)| n == "iptables-nft") {
        let good: Vec<usize> = (0..n).filter(|i| base[*i].failure.is_none()).collect();
        for (name, vs) in tools.iter().filter(|(n, _)| n != "iptables-nft") {
            let p = good
                .iter()
                .filter(|i| vs.get(**i).is_some_and(|v| v.failure.is_none()))
                .count();
            s.push_str(&format!(
                "{name}: {p} of the {} vectors iptables-nft passes ({})\n",
                good.len(),
                pct(p, good.len())
            ));
        }
    }
    s
}

/// (lines passed in every chain, lines) per family: the "unit tests" of
/// iptables-test.py's own summary.
fn unit_tests(vs: &[Verdict]) -> (usize, usize) {
    let mut lines: BTreeMap<(&str, usize, vectors::Family), bool> = BTreeMap::new();
    for v in vs {
        let x = &v.vector;
        *lines
            .entry((x.file.as_str(), x.line, x.family))
            .or_insert(true) &= v.failure.is_none();
    }
    (lines.values().filter(|p| **p).count(), lines.len())
}

/// The vectors `tool` fails and iptables-nft passes, per file, with the
/// failure lines (for the report's list).
pub fn regressions<'a>(tool: &'a [Verdict], base: &'a [Verdict]) -> BTreeMap<&'a str, Vec<String>> {
    let ok: std::collections::HashSet<_> = base
        .iter()
        .filter(|v| v.failure.is_none())
        .map(key)
        .collect();
    let mut out: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for v in tool {
        if v.failure.is_some() && ok.contains(&key(v)) {
            if let Some(l) = failure_line(v) {
                out.entry(v.vector.file.as_str()).or_default().push(l);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::vectors::{Expect, Family, Vector};
    use super::*;

    /// Verdicts of one tool: (file, line, family, chain, failure).
    fn verdicts(rows: &[(&str, usize, Family, &str, Option<&str>)]) -> Vec<Verdict> {
        rows.iter()
            .map(|(f, l, fam, c, fail)| Verdict {
                vector: Vector {
                    file: f.to_string(),
                    line: *l,
                    family: *fam,
                    chain: c.to_string(),
                    table: None,
                    rule: "-p tcp".into(),
                    save: format!("{c} -p tcp"),
                    expect: Expect::Ok,
                },
                failure: fail.map(String::from),
            })
            .collect()
    }

    #[test]
    fn summary_counts_files_totals_and_regressions() {
        use Family::{V4, V6};
        let nfk = verdicts(&[
            ("a.t", 2, V4, "INPUT", None),
            ("a.t", 2, V4, "OUTPUT", Some("cannot load: x")),
            ("a.t", 3, V6, "INPUT", Some("no module")),
            ("b.t", 5, V4, "INPUT", None),
        ]);
        let ipt = verdicts(&[
            ("a.t", 2, V4, "INPUT", Some("cannot find: y")),
            ("a.t", 2, V4, "OUTPUT", None),
            ("a.t", 3, V6, "INPUT", Some("no module")),
            ("b.t", 5, V4, "INPUT", None),
        ]);
        let tools = vec![
            ("nfkeeper".to_string(), nfk),
            ("iptables-nft".to_string(), ipt),
        ];
        let s = summary(&tools);
        let want = [
            "| a.t | 3 | 1 | 1 |",
            "| b.t | 1 | 1 | 1 |",
            "| **total** | **4** | **2** | **2** |",
            "| pass rate | | 50.0% | 50.0% |",
            "failed by every tool: 1 (a module this kernel lacks, mostly)",
            "nfkeeper: 2 of the 3 vectors some tool passes (66.7%)",
            "nfkeeper: 1 of 3 unit tests pass",
            "nfkeeper: 1 of the 2 vectors iptables-nft passes (50.0%)",
        ];
        for w in want {
            assert!(s.contains(w), "missing {w:?} in\n{s}");
        }
        let r = regressions(&tools[0].1, &tools[1].1);
        assert_eq!(
            r.into_iter().collect::<Vec<_>>(),
            [("a.t", vec!["a.t:2 ipv4 OUTPUT cannot load: x".to_string()])]
        );
    }
}

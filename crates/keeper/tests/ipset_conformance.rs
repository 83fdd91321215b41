//! ipset 7.21's own test vectors against the kernel backend: the runner of
//! `crates/ipset/tests` (its shell and skips), each `ipset` step through
//! `keeper::Session::ipset` — the kernel's nftables sets in a fresh
//! network namespace per vector file, real time for `sleep`. Steps the
//! backend refuses because nftables cannot hold what they ask for
//! (list:set, nomatch, overlapping intervals, …; docs/ipset.md) are
//! skipped with that reason, and so is the rest of their file when they
//! were meant to succeed; everything else must pass. Needs root (skips
//! otherwise); files run four at a time, as their steps mostly sleep.
//!
//! Time: the vectors leave a second between a timeout and the step that
//! tests it, so a loaded machine that stalls a step for that long sees an
//! element expire that the vector expects present (`check readded
//! element`: `add … timeout 1`, `add … timeout 3 -exist`, `sleep 2s`,
//! `test`). The runner measures how far each run fell behind the
//! vector's timing; a file whose every miss came while it was behind runs
//! again in a fresh namespace (see [`ATTEMPTS`]).
//!
//! `CONFORMANCE_FILE="hash:ip.t"` runs only some files;
//! `CONFORMANCE_VERBOSE=1` prints every failing step with its output.

// The model backend of the shared shell is for the model's own test.
#[allow(dead_code)]
#[path = "../../ipset/tests/shell/mod.rs"]
mod shell;

use keeper::ipset::Job;
use shell::runner::{self, Report, Tally};
use shell::Backend;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// `ipset` on the kernel of the current (test) namespace.
struct Kernel {
    session: keeper::Session,
}

impl Backend for Kernel {
    fn ipset(&mut self, args: &[String], input: Option<String>) -> ipset::exec::Output {
        self.session.ipset(Job {
            args: args.to_vec(),
            input,
        })
    }

    fn sleep(&mut self, ms: u64) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }

    fn reset(&mut self) {
        self.ipset(&["destroy".to_string()], None);
    }
}

/// What the backend refuses because nftables cannot hold it.
fn unsupported(o: &ipset::exec::Output) -> Option<String> {
    let e = &o.stderr;
    let why = [
        ("list:set is not supported", "nftables: list:set"),
        ("nomatch is not supported", "nftables: nomatch members"),
        ("forceadd is not supported", "nftables: forceadd"),
        ("skbinfo is not supported", "nftables: skbinfo"),
        ("markmask is not supported", "nftables: markmask"),
        ("bitmask is not supported", "nftables: non-prefix bitmask"),
        ("physdev is not supported", "nftables: physdev interfaces"),
        (
            "without MAC address cannot be stored",
            "nftables: bitmap:ip,mac member without MAC",
        ),
        (
            "overlaps a member",
            "nftables: overlapping interval members",
        ),
    ];
    why.iter()
        .find(|(needle, _)| e.contains(needle))
        .map(|(_, w)| format!("refused: {w} (docs/ipset.md)"))
}

/// One file's results: its set type, tally and skips by reason.
type FileResult = (String, Tally, BTreeMap<String, usize>);

/// Runs of a file whose every miss came while the run was behind the
/// vector's timing (`runner::LATE_MS`): a loaded machine, not the backend;
/// the last run counts, so a file that never keeps to its timing still
/// fails.
const ATTEMPTS: usize = 3;

fn rerun(t: &Tally) -> bool {
    !t.misses.is_empty() && t.late == t.misses.len()
}

/// Vector file `f` in a fresh network namespace (`None` without one).
fn run_in_netns(
    dir: &std::path::Path,
    f: &str,
    verbose: bool,
) -> Option<(Tally, BTreeMap<String, usize>)> {
    let (dir, f) = (dir.to_path_buf(), f.to_string());
    testkit::in_netns(move || {
        let session = keeper::Session::open(ruleset::Family::Ipv4, Default::default())
            .expect("netlink socket");
        let mut t = Tally::default();
        let mut skips = BTreeMap::new();
        runner::run_file(
            &dir,
            &f,
            Box::new(Kernel { session }),
            &unsupported,
            &mut t,
            &mut skips,
            verbose,
        );
        (t, skips)
    })
}

#[test]
fn ipset_vectors_on_the_kernel() {
    let Some(dir) = runner::vector_dir() else {
        eprintln!("SKIP: ipset vectors not found (../shared/conformance/ipset-7.21/tests)");
        return;
    };
    if !testkit::is_root() {
        eprintln!("SKIP: kernel test needs root");
        return;
    }
    let verbose = std::env::var_os("CONFORMANCE_VERBOSE").is_some();
    let files = Arc::new(Mutex::new(runner::files(&dir)));
    let results: Arc<Mutex<Vec<FileResult>>> = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (files, results, dir) = (files.clone(), results.clone(), dir.clone());
            std::thread::spawn(move || loop {
                let Some((f, ty)) = files.lock().unwrap().pop() else {
                    return;
                };
                let start = std::time::Instant::now();
                let mut attempt = 1;
                let r = loop {
                    let r = run_in_netns(&dir, &f, verbose);
                    match &r {
                        Some((t, _)) if rerun(t) && attempt < ATTEMPTS => {
                            eprintln!(
                                "{f}: every miss of attempt {attempt} came while the run was behind the vector's timing; running it again"
                            );
                            attempt += 1;
                        }
                        _ => break r,
                    }
                };
                if let Some((t, skips)) = r {
                    eprintln!(
                        "{f}: {} steps, {} passed, {} skipped, {:.1} s",
                        t.run,
                        t.passed,
                        t.skipped,
                        start.elapsed().as_secs_f64()
                    );
                    results.lock().unwrap().push((ty, t, skips));
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let mut rep = Report::default();
    for (ty, t, skips) in results.lock().unwrap().drain(..) {
        let e = rep.table.entry(ty).or_default();
        e.run += t.run;
        e.passed += t.passed;
        e.skipped += t.skipped;
        e.misses.extend(t.misses);
        for (why, n) in skips {
            *rep.skips.entry(why).or_default() += n;
        }
    }
    let failed = rep.print();
    assert!(failed.is_empty(), "{} step(s) failed", failed.len());
}

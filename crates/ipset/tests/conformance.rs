//! ipset 7.21's own test vectors (`../shared/conformance/ipset-7.21/tests`)
//! run against the in-memory model, the way ipset's `runtest.sh` runs them:
//! each `EXPECTED COMMAND` step through a small shell (`shell/`), with the
//! suite's helper scripts re-created (`./sort.sh`, `./diff.sh`, ...), and
//! `sleep` advancing a virtual clock. Steps that need a kernel or packets
//! are skipped with the reason printed; the rest must all pass for every
//! supported set type. Prints a pass table per set type.
//!
//! `CONFORMANCE_FILE="hash:ip.t comment.t"` runs only some files;
//! `CONFORMANCE_VERBOSE=1` prints every failing step with its output.

#[path = "shell/mod.rs"]
mod shell;

use std::collections::BTreeMap;

/// Steps whose expected listing predates ipset 7 (see `shell::cmds`).
pub static ADAPTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
use std::path::{Path, PathBuf};

fn vector_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("NFKEEPER_CONFORMANCE_DIR") {
        Some(d) => PathBuf::from(d).join("ipset-7.21/tests"),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/conformance/ipset-7.21/tests"),
    };
    dir.is_dir().then_some(dir)
}

/// Files ipset's runtest.sh does not run in a plain setup, and why.
const FILE_SKIPS: &[(&str, &str)] = &[
    (
        "match_target.t",
        "iptables set match/SET target with packets (kernel, sendip)",
    ),
    (
        "match_target6.t",
        "ip6tables set match/SET target with packets (kernel, sendip)",
    ),
    (
        "match_flags.t",
        "iptables set match flags with packets (kernel, sendip)",
    ),
    (
        "iptree.t",
        "iptree type removed from ipset (runtest.sh does not run it)",
    ),
    (
        "iptreemap.t",
        "iptreemap type removed from ipset (runtest.sh does not run it)",
    ),
];

/// Helper commands that need a kernel, packets, or concurrency, and the
/// state they leave behind (all of them end with destroying their sets).
const STEP_SKIPS: &[(&str, &str, bool)] = &[
    (
        "./resizet.sh",
        "kernel hash resizing with timeouts (not modelled)",
        true,
    ),
    (
        "./resizen.sh",
        "kernel hash resizing with nomatch (not modelled)",
        true,
    ),
    (
        "./resizec.sh",
        "kernel hash resizing with comments (not modelled)",
        true,
    ),
    (
        "./resize-and-list.sh",
        "listing concurrently with a resize (kernel)",
        true,
    ),
    (
        "./setlist_resize.sh",
        "kernel set index growth and module unloading",
        true,
    ),
    (
        "./cidr.sh",
        "helper script not among the vectors (every prefix length)",
        true,
    ),
    (
        "./check_cidrs.sh",
        "helper script not among the vectors (prefix bookkeeping)",
        true,
    ),
    (
        "./iptables.sh",
        "iptables rules with set matches (kernel)",
        false,
    ),
    ("./sendip.sh", "sends packets (kernel)", false),
    ("./check_klog.sh", "reads the kernel log", false),
    ("./check_sendip_packets", "sends packets (kernel)", false),
    ("modprobe", "kernel modules", false),
    ("rmmod", "kernel modules", false),
];

/// Steps whose outcome differs by design, with the reason.
const DEVIATIONS: &[(&str, usize, &str)] = &[(
    "ipmap.t",
    48,
    "by design: a failed restore changes nothing (ipset keeps the lines before the error)",
)];

/// Steps that read counters (they depend on packets sent before).
const PACKET_CHECKS: &[&str] = &["./check_counters", "./check_extensions", "packets 2'"];

/// The set type a vector file exercises (old names map to new ones).
fn type_of(file: &str) -> String {
    let stem = file.trim_end_matches(".t");
    let name = match stem {
        "ipmap" => "bitmap:ip",
        "macipmap" => "bitmap:ip,mac",
        "portmap" => "bitmap:port",
        "iphash" => "hash:ip",
        "ipporthash" => "hash:ip,port",
        "ipportiphash" => "hash:ip,port,ip",
        "ipportnethash" => "hash:ip,port,net",
        "ipmarkhash" => "hash:ip,mark",
        "nethash" => "hash:net",
        "setlist" => "list:set",
        "comment" | "restore" | "init" => "(general)",
        s => s,
    };
    name.replace("ip6", "ip").replace("net6", "net")
}

#[derive(Default)]
struct Tally {
    run: usize,
    passed: usize,
    skipped: usize,
    misses: Vec<String>,
}

/// The runner's view of a step line: `read ret cmd` (backslashes removed),
/// `echo $cmd` (blanks collapsed), and the first `ipset` with its stderr
/// sent to `.foo.err`.
fn runner_text(rest: &str) -> String {
    let mut unescaped = String::new();
    let mut it = rest.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            if let Some(n) = it.next() {
                unescaped.push(n);
            }
        } else {
            unescaped.push(c);
        }
    }
    let collapsed = unescaped.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.replacen("ipset", "ipset 2>.foo.err", 1)
}

fn run_file(
    dir: &Path,
    file: &str,
    t: &mut Tally,
    skips: &mut BTreeMap<String, usize>,
    verbose: bool,
) {
    let text = std::fs::read_to_string(dir.join(file)).expect("read vector file");
    let mut sh = shell::Shell::new(dir.to_path_buf());
    let mut what = String::new();
    let mut skip_rest: Option<&str> = None;
    let mut packets_pending = false;
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if let Some(c) = line.strip_prefix('#') {
            let c = c.trim();
            if c == "eof" {
                break;
            }
            what = c.to_string();
            continue;
        }
        let Some((ret, rest)) = line.split_once(' ') else {
            continue;
        };
        if ret == "skip" {
            // `skip which sendip`: the runner stops the file without sendip.
            // We run on as if it were there, skipping only what needs
            // packets (below), so the steps after it still count.
            continue;
        }
        if let Some(r) = skip_rest {
            t.skipped += 1;
            *skips.entry(r.to_string()).or_default() += 1;
            continue;
        }
        if let Some(&(_, why, destroys)) = STEP_SKIPS.iter().find(|s| rest.contains(s.0)) {
            t.skipped += 1;
            *skips.entry(why.to_string()).or_default() += 1;
            if destroys {
                sh.store = ipset::model::Store::new();
            }
            if rest.contains("./iptables.sh") {
                skip_rest = Some("depends on iptables rules (kernel)");
            }
            if rest.contains("./check_sendip_packets") {
                packets_pending = true;
            }
            continue;
        }
        if packets_pending {
            if PACKET_CHECKS.iter().any(|c| rest.contains(c)) {
                t.skipped += 1;
                *skips
                    .entry("checks counters of packets a skipped step sent".into())
                    .or_default() += 1;
                continue;
            }
            if rest.contains("ipset x") || rest.contains("ipset f") {
                packets_pending = false;
            }
        }
        if let Some((_, _, why)) = DEVIATIONS.iter().find(|d| d.0 == file && d.1 == lineno + 1) {
            t.skipped += 1;
            *skips.entry(why.to_string()).or_default() += 1;
            continue;
        }
        let want: i32 = ret.parse().expect("expected exit code");
        let cmd = runner_text(rest);
        sh.stderr.clear();
        let got = match sh.run(&cmd) {
            Ok(c) => c,
            Err(e) => panic!("{file}:{}: cannot parse {cmd:?}: {e}", lineno + 1),
        };
        t.run += 1;
        if got == want {
            t.passed += 1;
        } else {
            let mut m = format!(
                "{file}:{}: {what}: `{}` exit {got}, want {want}",
                lineno + 1,
                rest
            );
            if verbose {
                m.push_str(&format!(
                    "\n    stderr: {}",
                    sh.stderr.trim_end().replace('\n', "\n            ")
                ));
                if let Some(o) = sh.fs.read(".foo.err") {
                    m.push_str(&format!("\n    .foo.err: {}", o.trim_end()));
                }
            }
            t.misses.push(m);
        }
    }
}

#[test]
fn ipset_vectors() {
    let Some(dir) = vector_dir() else {
        eprintln!(
            "SKIP: ipset vectors not found (../shared/conformance/ipset-7.21/tests); set NFKEEPER_CONFORMANCE_DIR"
        );
        return;
    };
    let only: Option<Vec<String>> = std::env::var("CONFORMANCE_FILE")
        .ok()
        .map(|s| s.split_whitespace().map(str::to_string).collect());
    let verbose = std::env::var_os("CONFORMANCE_VERBOSE").is_some();
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("read vector dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".t"))
        .collect();
    files.sort();
    let mut table: BTreeMap<String, Tally> = BTreeMap::new();
    let mut skips: BTreeMap<String, usize> = BTreeMap::new();
    for f in &files {
        if only.as_ref().is_some_and(|o| !o.contains(f)) {
            continue;
        }
        if let Some((_, why)) = FILE_SKIPS.iter().find(|s| s.0 == f) {
            eprintln!("skip file {f}: {why}");
            continue;
        }
        let t = table.entry(type_of(f)).or_default();
        run_file(&dir, f, t, &mut skips, verbose);
    }
    eprintln!(
        "\n{:<20} {:>6} {:>6} {:>8} {:>7}",
        "set type", "steps", "passed", "skipped", "pass %"
    );
    let mut failed = Vec::new();
    for (ty, t) in &table {
        let pct = if t.run == 0 {
            100.0
        } else {
            100.0 * t.passed as f64 / t.run as f64
        };
        eprintln!(
            "{ty:<20} {:>6} {:>6} {:>8} {pct:>6.1}%",
            t.run, t.passed, t.skipped
        );
        failed.extend(t.misses.iter().cloned());
    }
    eprintln!("\nskipped steps by reason:");
    for (why, n) in &skips {
        eprintln!("  {n:>4}  {why}");
    }
    eprintln!(
        "listings compared against ipset 6.x vectors (7.x header fields set aside): {}",
        ADAPTED.load(std::sync::atomic::Ordering::Relaxed)
    );
    for m in &failed {
        eprintln!("MISS {m}");
    }
    assert!(failed.is_empty(), "{} step(s) failed", failed.len());
}

/// ipset's big_sort.sh (65536 members restored, then `-t list` and `-s save`)
/// against `big_sort.terse` / `big_sort.saved`. Those files come from an
/// older ipset (hash:ip revision 4, a hash resized to 32768 buckets, and a
/// plain string sort): compared with the header's hash tuning set aside and
/// the members as a set, and our sorted order checked to be ipset 7's
/// numeric one.
#[test]
fn big_sort_vectors() {
    let Some(dir) = vector_dir() else {
        eprintln!("SKIP: ipset vectors not found");
        return;
    };
    let (Ok(terse), Ok(saved)) = (
        std::fs::read_to_string(dir.join("big_sort.terse")),
        std::fs::read_to_string(dir.join("big_sort.saved")),
    ) else {
        eprintln!("SKIP: big_sort vectors not found");
        return;
    };
    let mut sh = shell::Shell::new(dir.clone());
    let mut input = String::new();
    for x in 0..=255 {
        for y in 0..=255 {
            input.push_str(&format!("a test 10.10.{x}.{y}\n"));
        }
    }
    sh.fs.write("big.in", input);
    for cmd in [
        "ipset n test hash:ip",
        "ipset r < big.in",
        "ipset -t list > .foo",
        "ipset -s save > .foo2",
    ] {
        assert_eq!(sh.run(cmd), Ok(0), "{cmd}");
    }
    let strip_tuning = |l: &str| -> String {
        let mut w: Vec<&str> = l.split(' ').collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < w.len() {
            if matches!(w[i], "hashsize" | "bucketsize" | "initval") {
                i += 2;
                continue;
            }
            out.push(w[i]);
            i += 1;
        }
        w.clear();
        out.join(" ")
    };
    let norm = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with("Revision:") && !l.starts_with("Size in memory"))
            .map(strip_tuning)
            .collect()
    };
    assert_eq!(norm(&sh.fs.read(".foo").unwrap()), norm(&terse));
    let ours = sh.fs.read(".foo2").unwrap();
    let (ours_head, ours_adds) = ours.split_once('\n').unwrap();
    let (want_head, want_adds) = saved.split_once('\n').unwrap();
    assert_eq!(strip_tuning(ours_head), strip_tuning(want_head));
    let mut a: Vec<&str> = ours_adds.lines().collect();
    let addr = |l: &str| -> u32 {
        l.rsplit(' ')
            .next()
            .unwrap()
            .parse::<std::net::Ipv4Addr>()
            .unwrap()
            .into()
    };
    assert!(
        a.windows(2).all(|w| addr(w[0]) < addr(w[1])),
        "-sorted orders numerically"
    );
    let mut b: Vec<&str> = want_adds.lines().collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
}

//! The conformance runner: every `EXPECTED COMMAND` step of ipset 7.21's
//! vector files through the shell, on a given [`Backend`], with the
//! suite's skips (steps that need packets, the kernel log, module
//! loading, hash resizing) and a pass table per set type. Used by the
//! model's test (`tests/conformance.rs`) and by the kernel backend's.

use super::{Backend, Shell};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

/// Steps whose expected listing predates ipset 7 (see `cmds`).
pub static ADAPTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The vector directory: `$NFKEEPER_CONFORMANCE_DIR/ipset-7.21/tests`, or
/// `../shared/conformance/...` beside the workspace.
pub fn vector_dir() -> Option<PathBuf> {
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

/// One set type's results.
#[derive(Default)]
pub struct Tally {
    pub run: usize,
    pub passed: usize,
    pub skipped: usize,
    pub misses: Vec<String>,
    /// How many of `misses` came while the run was behind the vector's
    /// timing (see [`LATE_MS`]): their verdict says nothing about the
    /// backend, and the file is worth running again.
    pub late: usize,
}

/// How far (milliseconds) a run may fall behind the vector's own timing
/// before a step that depends on time says nothing. The vectors leave at
/// least a second between a timeout and the sleep that tests it (`timeout
/// 3`, `sleep 2`; `timeout 4`, `sleep 5`), so a run that spent half of
/// that on top of the sleeps (a loaded machine: a step that takes 500 ms
/// instead of a few) can see an element expire that the vector expects
/// present — ipset's own runner would miss it the same way.
pub const LATE_MS: u64 = 500;

/// A backend that counts the time its `sleep`s asked for, so the runner
/// can tell how far real time ran ahead of the vector's.
struct Paced {
    inner: Box<dyn Backend>,
    slept: Rc<Cell<u64>>,
}

impl Backend for Paced {
    fn ipset(&mut self, args: &[String], input: Option<String>) -> ipset::exec::Output {
        self.inner.ipset(args, input)
    }

    fn sleep(&mut self, ms: u64) {
        self.slept.set(self.slept.get() + ms);
        self.inner.sleep(ms);
    }

    fn reset(&mut self) {
        self.inner.reset();
    }
}

/// Real time spent beyond the vector's sleeps since a file started; a
/// step's timing window is what it accrued since the end of the sleep
/// before the last one (the vectors set their timeouts after a sleep and
/// test them after the next).
struct Lateness {
    start: Instant,
    slept: Rc<Cell<u64>>,
    /// Lateness at the end of the last two sleeps (older first).
    marks: [u64; 2],
}

impl Lateness {
    fn now(&self) -> u64 {
        (self.start.elapsed().as_millis() as u64).saturating_sub(self.slept.get())
    }

    /// A step ended; `slept`: whether it was (or ran) a sleep.
    fn step_done(&mut self, slept: bool) {
        if slept {
            self.marks = [self.marks[1], self.now()];
        }
    }

    /// Lateness accrued over the current timing window.
    fn window(&self) -> u64 {
        self.now().saturating_sub(self.marks[0])
    }
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

/// Why a backend cannot run a step it refused (it cannot hold what the
/// step asks for), given its output; `None`: an ordinary result.
pub type Unsupported = dyn Fn(&ipset::exec::Output) -> Option<String>;

/// Run every step of vector file `file` on `backend`.
pub fn run_file(
    dir: &Path,
    file: &str,
    backend: Box<dyn Backend>,
    unsupported: &Unsupported,
    t: &mut Tally,
    skips: &mut BTreeMap<String, usize>,
    verbose: bool,
) {
    let text = std::fs::read_to_string(dir.join(file)).expect("read vector file");
    let slept = Rc::new(Cell::new(0));
    let backend = Box::new(Paced {
        inner: backend,
        slept: slept.clone(),
    });
    let mut late = Lateness {
        start: Instant::now(),
        slept: slept.clone(),
        marks: [0, 0],
    };
    let mut sh = Shell::new(dir.to_path_buf(), backend);
    let mut what = String::new();
    let mut skip_rest: Option<String> = None;
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
        if let Some(r) = &skip_rest {
            t.skipped += 1;
            *skips.entry(r.clone()).or_default() += 1;
            continue;
        }
        if let Some(&(_, why, destroys)) = STEP_SKIPS.iter().find(|s| rest.contains(s.0)) {
            t.skipped += 1;
            *skips.entry(why.to_string()).or_default() += 1;
            if destroys {
                sh.backend.reset();
            }
            if rest.contains("./iptables.sh") {
                skip_rest = Some("depends on iptables rules (kernel)".to_string());
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
        sh.last_ipset = None;
        let slept_before = slept.get();
        let got = match sh.run(&cmd) {
            Ok(c) => c,
            Err(e) => panic!("{file}:{}: cannot parse {cmd:?}: {e}", lineno + 1),
        };
        late.step_done(slept.get() != slept_before);
        if let Some(why) = sh.last_ipset.as_ref().and_then(unsupported) {
            // What the backend cannot hold: this step, and (if it was to
            // succeed) the rest of the file, whose state depends on it.
            t.skipped += 1;
            *skips.entry(why.clone()).or_default() += 1;
            if want == 0 {
                skip_rest = Some(format!("follows a step the backend cannot hold ({why})"));
            }
            continue;
        }
        t.run += 1;
        if got == want {
            t.passed += 1;
        } else {
            let behind = late.window();
            let mut m = format!(
                "{file}:{}: {what}: `{}` exit {got}, want {want}",
                lineno + 1,
                rest
            );
            // What the step's last `ipset` answered, always: a miss in CI
            // must explain itself without a rerun.
            if let Some(o) = &sh.last_ipset {
                m.push_str(&format!("\n    {}", digest(o)));
            }
            if behind >= LATE_MS {
                t.late += 1;
                m.push_str(&format!(
                    " (the run was {behind} ms behind the vector's timing)"
                ));
            }
            if verbose {
                m.push_str(&format!("\n    behind the vector's timing: {behind} ms"));
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

/// A short account of an `ipset` answer: exit code, stderr, and its
/// stdout's line count with the lines that name members (`add …`) counted
/// and the first few shown.
fn digest(o: &ipset::exec::Output) -> String {
    let lines: Vec<&str> = o.stdout.lines().collect();
    let adds = lines.iter().filter(|l| l.contains("add")).count();
    let mut d = format!(
        "last ipset: exit {}, {} stdout line(s), {adds} with `add`",
        o.code,
        lines.len()
    );
    if !o.stderr.trim().is_empty() {
        d.push_str(&format!(", stderr {:?}", o.stderr.trim_end()));
    }
    for l in lines.iter().take(4) {
        d.push_str(&format!("\n      | {l}"));
    }
    d
}

/// Results of a whole run: per set type, and skips by reason.
#[derive(Default)]
pub struct Report {
    pub table: BTreeMap<String, Tally>,
    pub skips: BTreeMap<String, usize>,
}

impl Report {
    /// Print the pass table and the skips; return the failures.
    pub fn print(&self) -> Vec<String> {
        eprintln!(
            "\n{:<20} {:>6} {:>6} {:>8} {:>7}",
            "set type", "steps", "passed", "skipped", "pass %"
        );
        let mut failed = Vec::new();
        for (ty, t) in &self.table {
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
        for (why, n) in &self.skips {
            eprintln!("  {n:>4}  {why}");
        }
        eprintln!(
            "listings compared against ipset 6.x vectors (7.x header fields set aside): {}",
            ADAPTED.load(std::sync::atomic::Ordering::Relaxed)
        );
        for m in &failed {
            eprintln!("MISS {m}");
        }
        failed
    }
}

/// The vector files to run (`CONFORMANCE_FILE` narrows them), each with
/// its set type; files the suite does not run are reported and left out.
pub fn files(dir: &Path) -> Vec<(String, String)> {
    let only: Option<Vec<String>> = std::env::var("CONFORMANCE_FILE")
        .ok()
        .map(|s| s.split_whitespace().map(str::to_string).collect());
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .expect("read vector dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".t"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        if only.as_ref().is_some_and(|o| !o.contains(&f)) {
            continue;
        }
        if let Some((_, why)) = FILE_SKIPS.iter().find(|s| s.0 == f) {
            eprintln!("skip file {f}: {why}");
            continue;
        }
        let ty = type_of(&f);
        out.push((f, ty));
    }
    out
}

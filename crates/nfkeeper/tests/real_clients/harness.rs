//! Runs one client's sequence twice, each time as the first process of
//! fresh pid, network and mount namespaces (`unshare --fork --kill-child`,
//! see ns.sh): once with the client's `iptables` resolved to iptables-nft,
//! once to nfkeeper. Then compares what the client did: its steps' exit
//! codes, the errors it logged, and every snapshot of iptables-save,
//! ip6tables-save and ipset save (`#` lines dropped, counters zeroed).
//!
//! Cleanup contract: [`Run`] kills the namespace's first process on drop
//! (its death ends every process of the pid namespace, and with the last
//! of them the mounts and the network namespace), removes the cgroup
//! directories a run may leave in the host's hierarchies (dockerd's
//! `--cgroup-parent`) and the scratch directory — also when a test panics.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One client sequence: a script under tests/real_clients/ and a case.
pub struct Client {
    /// Test name, also in the scratch directory's name.
    pub name: &'static str,
    /// The script ns.sh sources (defines `client_run`).
    pub script: &'static str,
    /// Passed to the script as `$CASE`.
    pub case: &'static str,
    /// Programs that must exist (else the test skips), with the Debian
    /// package that brings each.
    pub needs: &'static [(&'static str, &'static str)],
    /// Save lines iptables-nft has and nfkeeper is known not to write.
    pub known: &'static [Known],
    /// A known failure of the whole case: if the sides differ and
    /// nfkeeper's run logged `signature`, the test skips with `why`.
    pub known_failure: Option<Known>,
}

/// A known difference: `signature` is a substring of the line concerned.
pub struct Known {
    pub signature: &'static str,
    pub why: &'static str,
}

/// Longest a whole side may take (each step has its own 120 s bound).
const SIDE_TIMEOUT: Duration = Duration::from_secs(240);

#[derive(Clone, Copy, PartialEq, Debug)]
enum Side {
    Nft,
    Nfkeeper,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Nft => "nft",
            Side::Nfkeeper => "nfkeeper",
        }
    }
}

fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_clients")
}

/// Why this client cannot run here, if it cannot.
fn skip_reason(c: &Client) -> Option<String> {
    if !testkit::is_root() {
        return Some("needs root (network, mount and pid namespaces)".into());
    }
    let mut missing: Vec<String> = Vec::new();
    for (prog, package) in c.needs.iter().chain(&[("unshare", "util-linux")]) {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {prog}")])
            .env("PATH", PATH)
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            missing.push(format!("{prog} (Debian package {package})"));
        }
    }
    (!missing.is_empty()).then(|| format!("not installed: {}", missing.join(", ")))
}

const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// One side's run: the namespace's first process and its scratch directory.
struct Run {
    child: Child,
    dir: PathBuf,
}

impl Run {
    fn start(c: &Client, side: Side) -> Run {
        let dir = std::env::temp_dir().join(format!(
            "nfk-real-{}-{}-{}",
            c.name,
            side.name(),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch directory");
        let child = Command::new("unshare")
            .args([
                "--net",
                "--mount",
                "--pid",
                "--fork",
                "--kill-child",
                "--mount-proc",
                "--",
                "/bin/sh",
            ])
            .arg(here().join("ns.sh"))
            .arg(side.name())
            .arg(here().join(c.script))
            .arg(&dir)
            .arg(env!("CARGO_BIN_EXE_nfkeeper"))
            .arg(c.case)
            .env("PATH", PATH)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("unshare");
        Run { child, dir }
    }

    /// Waits for the run to end (panics after [`SIDE_TIMEOUT`]; the drop
    /// still cleans up) and reads what it wrote.
    fn finish(mut self) -> Outcome {
        let start = Instant::now();
        loop {
            if self.child.try_wait().expect("wait").is_some() {
                break;
            }
            assert!(
                start.elapsed() < SIDE_TIMEOUT,
                "{}: still running after {SIDE_TIMEOUT:?}",
                self.dir.display()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Outcome::read(&self.dir)
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(base) = self.dir.file_name().and_then(|b| b.to_str()) {
            remove_cgroups(&format!("nfkeeper-real-clients-{base}"));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Removes (empty) cgroup directories named `name` at the top of every
/// hierarchy under /sys/fs/cgroup (v1 per controller, or v2), children
/// first.
fn remove_cgroups(name: &str) {
    fn rmdir_tree(p: &Path) {
        if let Ok(entries) = std::fs::read_dir(p) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    rmdir_tree(&e.path());
                }
            }
        }
        let _ = std::fs::remove_dir(p);
    }
    let cgroup = Path::new("/sys/fs/cgroup");
    let roots = std::fs::read_dir(cgroup).into_iter().flatten().flatten();
    for root in roots.map(|r| r.path()).chain([cgroup.to_path_buf()]) {
        let p = root.join(name);
        if p.is_dir() {
            rmdir_tree(&p);
        }
    }
}

/// What one side's run wrote (see ns.sh).
struct Outcome {
    steps: String,
    wiring: String,
    errors: String,
    /// Snapshot file name (`NAME.4`, `NAME.6`, `NAME.ipset`) to its text.
    saves: BTreeMap<String, String>,
    /// Snapshots compared without order.
    unordered: Vec<String>,
    /// The transcript of the steps, for failure messages.
    log: String,
}

impl Outcome {
    fn read(dir: &Path) -> Outcome {
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap_or_default();
        let out = dir.join("out");
        let mut saves = BTreeMap::new();
        if let Ok(entries) = std::fs::read_dir(out.join("save")) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                saves.insert(name, read(e.path()));
            }
        }
        Outcome {
            steps: read(out.join("steps")),
            wiring: read(out.join("wiring")),
            errors: read(out.join("errors")),
            saves,
            unordered: read(out.join("unordered"))
                .lines()
                .map(str::to_string)
                .collect(),
            log: read(dir.join("log/steps.log")) + &read(dir.join("log/save.err")),
        }
    }
}

/// A save as compared: `#` lines dropped, counters zeroed, ipset's random
/// `initval` dropped.
pub fn normalize_save(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let l = zero_counters(l);
            match l.find(" initval 0x") {
                Some(i) => {
                    let rest = &l[i + " initval 0x".len()..];
                    let end = rest.find(' ').unwrap_or(rest.len());
                    format!("{}{}", &l[..i], &rest[end..])
                }
                None => l,
            }
        })
        .collect()
}

/// `[packets:bytes]` → `[0:0]` (chain policies and `-c` counters).
fn zero_counters(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else {
            break;
        };
        let inner = &rest[open + 1..close];
        out.push_str(&rest[..open]);
        match inner.split_once(':') {
            Some((p, b))
                if !p.is_empty()
                    && !b.is_empty()
                    && (p.bytes().chain(b.bytes())).all(|c| c.is_ascii_digit()) =>
            {
                out.push_str("[0:0]")
            }
            _ => out.push_str(&rest[open..=close]),
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Logged errors as compared: runs of 12 or more hex digits (object
/// addresses, container and network ids) become `<id>`.
pub fn normalize_errors(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let mut out = String::new();
            let mut run = String::new();
            for ch in l.chars().chain(std::iter::once('\n')) {
                if ch.is_ascii_hexdigit() {
                    run.push(ch);
                    continue;
                }
                if run.len() >= 12 {
                    out.push_str("<id>");
                } else {
                    out.push_str(&run);
                }
                run.clear();
                if ch != '\n' {
                    out.push(ch);
                }
            }
            out
        })
        .collect()
}

/// The differences between the sides, one message each.
fn differences(c: &Client, nft: &Outcome, nfk: &Outcome, notes: &mut Vec<String>) -> Vec<String> {
    let mut diffs = Vec::new();
    if nft.steps != nfk.steps {
        diffs.push(format!(
            "steps (name exit-code) differ:\n--- iptables-nft\n{}--- nfkeeper\n{}",
            nft.steps, nfk.steps
        ));
    }
    let (e_nft, e_nfk) = (normalize_errors(&nft.errors), normalize_errors(&nfk.errors));
    if e_nft != e_nfk {
        diffs.push(format!(
            "logged errors differ:\n{}",
            line_diff(&e_nft, &e_nfk)
        ));
    }
    let names: Vec<&String> = nft.saves.keys().chain(nfk.saves.keys()).collect();
    let mut seen = std::collections::BTreeSet::new();
    for name in names {
        if name.ends_with(".bypass") || name.ends_with(".verify") || !seen.insert(name) {
            continue;
        }
        let snap = name.rsplit_once('.').map_or(name.as_str(), |(s, _)| s);
        let unordered = nft.unordered.iter().any(|u| u == snap);
        let get = |o: &Outcome| {
            let mut v = normalize_save(o.saves.get(name).map_or("", String::as_str));
            if unordered {
                v.sort();
            }
            v
        };
        let (mut a, b) = (get(nft), get(nfk));
        a.retain(|l| {
            let known = c.known.iter().find(|k| l.contains(k.signature));
            match known {
                Some(k) if !b.contains(l) => {
                    let note = format!("nfkeeper lacks `{l}`: {}", k.why);
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                    false
                }
                _ => true,
            }
        });
        if a != b {
            diffs.push(format!("{name} differs:\n{}", line_diff(&a, &b)));
        }
    }
    for (name, text) in nfk.saves.iter().filter(|(n, _)| n.ends_with(".bypass")) {
        if text.lines().any(|l| !l.starts_with('#') && !l.is_empty()) {
            diffs.push(format!(
                "{name}: iptables-nft tables appeared under nfkeeper:\n{text}"
            ));
        }
    }
    for (name, text) in nfk.saves.iter().filter(|(n, _)| n.ends_with(".verify")) {
        if text != "verify exit 0\n" {
            diffs.push(format!(
                "{name}: nfkeeper verify found differences:\n{text}"
            ));
        }
    }
    diffs
}

/// A line for the test's log that the test harness does not capture (it
/// captures only the print macros): skips and known differences must show
/// in CI's output also when the test passes.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Lines only on one side (`-` iptables-nft, `+` nfkeeper), in order, after
/// the longest common prefix and suffix.
fn line_diff(a: &[String], b: &[String]) -> String {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut s = format!("(from line {})\n", pre + 1);
    for l in &a[pre..a.len() - suf] {
        s += &format!("- {l}\n");
    }
    for l in &b[pre..b.len() - suf] {
        s += &format!("+ {l}\n");
    }
    s
}

/// Runs `c` under both sides and asserts they did the same.
pub fn check(c: &Client) {
    if let Some(why) = skip_reason(c) {
        say(&format!("SKIP real_clients::{}: {why}", c.name));
        return;
    }
    let nft = Run::start(c, Side::Nft).finish();
    let nfk = Run::start(c, Side::Nfkeeper).finish();

    // The wiring: each side's tools are what it claims.
    let nfk_bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_nfkeeper")).expect("nfkeeper");
    assert!(
        nft.wiring
            .contains("iptables -> /usr/sbin/xtables-nft-multi"),
        "{}: iptables-nft side not wired to iptables-nft:\n{}",
        c.name,
        nft.wiring
    );
    assert!(
        nfk.wiring
            .contains(&format!("iptables -> {}", nfk_bin.display()))
            && !nfk.wiring.contains("ipset -> ipset"),
        "{}: nfkeeper side not wired to nfkeeper:\n{}",
        c.name,
        nfk.wiring
    );
    // The oracle side must have run the whole sequence cleanly, or an
    // environment problem would pass as agreement.
    let failed: Vec<&str> = nft.steps.lines().filter(|l| !l.ends_with(" 0")).collect();
    assert!(
        !nft.steps.is_empty() && failed.is_empty(),
        "{}: the iptables-nft side's steps failed: {failed:?}\n{}",
        c.name,
        nft.log
    );
    assert!(
        nft.saves
            .values()
            .any(|s| s.lines().any(|l| l.starts_with("-A "))),
        "{}: the iptables-nft side wrote no rule at all",
        c.name
    );

    let mut notes = Vec::new();
    let diffs = differences(c, &nft, &nfk, &mut notes);
    for n in &notes {
        say(&format!("KNOWN DIFFERENCE real_clients::{}: {n}", c.name));
    }
    if diffs.is_empty() {
        eprintln!(
            "real_clients::{}: iptables-nft and nfkeeper agree ({} snapshots, {} steps)",
            c.name,
            nft.saves.len(),
            nft.steps.lines().count()
        );
        if let Some(k) = &c.known_failure {
            say(&format!(
                "real_clients::{}: the known failure is gone ({}): update the test",
                c.name, k.why
            ));
        }
        return;
    }
    if let Some(k) = &c.known_failure {
        if nfk.errors.contains(k.signature) || nfk.log.contains(k.signature) {
            let first: String = diffs[0].lines().take(8).collect::<Vec<_>>().join("\n");
            say(&format!(
                "SKIP real_clients::{} (known failure): {}\nfirst difference: {first}",
                c.name, k.why
            ));
            return;
        }
    }
    panic!(
        "{}: iptables-nft and nfkeeper differ:\n{}\n--- nfkeeper's steps:\n{}",
        c.name,
        diffs.join("\n"),
        nfk.log
    );
}

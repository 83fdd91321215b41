//! One side's run of a client: `unshare` starting ns.sh as the first
//! process of fresh pid, network and mount namespaces, and what it wrote.
//! Requires util-linux's `setpriv` and `unshare`.
//!
//! Cleanup contract: [`Run`] kills the namespace's first process on drop
//! (its death ends every process of the pid namespace, and with the last
//! of them the mounts and the network namespace), removes the cgroup
//! directories a run may leave in the host's hierarchies (dockerd's
//! `--cgroup-parent`) and the scratch directory — also when a test panics.

use crate::harness::Client;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a whole side may take (each step has its own 120 s bound).
const SIDE_TIMEOUT: Duration = Duration::from_secs(240);

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Side {
    Nft,
    Nfkeeper,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Nft => "nft",
            Side::Nfkeeper => "nfkeeper",
        }
    }
}

fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_clients")
}

pub const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// One side's run: the namespace's first process and its scratch directory.
pub struct Run {
    child: Child,
    dir: PathBuf,
}

/// This process's namespace of a kind (`net`, `mnt`), as its link reads.
fn ns_id(kind: &str) -> String {
    std::fs::read_link(format!("/proc/self/ns/{kind}"))
        .expect("own namespace")
        .to_string_lossy()
        .into_owned()
}

/// Scratch directories are `nfk-real-CLIENT-SIDE-PID` in the temp dir.
const SCRATCH_PREFIX: &str = "nfk-real-";

impl Run {
    pub fn start(c: &Client, side: Side) -> Run {
        sweep_stale();
        let dir = std::env::temp_dir().join(format!(
            "{SCRATCH_PREFIX}{}-{}-{}",
            c.name,
            side.name(),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch directory");
        // setpriv --pdeathsig: should this test process die without
        // unwinding (no drop), unshare dies with it, and with unshare
        // (--kill-child) the namespace's first process and so all of it.
        let child = Command::new("setpriv")
            .args([
                "--pdeathsig",
                "KILL",
                "unshare",
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
            // ns.sh refuses to run in these (see there).
            .env("NFK_HOST_NET", ns_id("net"))
            .env("NFK_HOST_MNT", ns_id("mnt"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("ns.stderr")).expect("ns.stderr"))
            .spawn()
            .expect("setpriv unshare");
        Run { child, dir }
    }

    /// Waits for the run to end (panics after [`SIDE_TIMEOUT`]; the drop
    /// still cleans up) and reads what it wrote.
    pub fn finish(mut self) -> Outcome {
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
        remove_scratch(&self.dir);
    }
}

/// Removes a run's scratch directory and the cgroups named after it.
fn remove_scratch(dir: &Path) {
    if let Some(base) = dir.file_name().and_then(|b| b.to_str()) {
        remove_cgroups(&format!("nfkeeper-real-clients-{base}"));
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// What a test process killed outright (no drop) left: the scratch
/// directories of runs whose test process is gone, and their cgroups. Its
/// namespaces died with it (see [`Run::start`]).
fn sweep_stale() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(SCRATCH_PREFIX)
            .and_then(|rest| rest.rsplit_once('-'))
            .and_then(|(_, pid)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            remove_scratch(&e.path());
        }
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
pub struct Outcome {
    pub steps: String,
    pub wiring: String,
    pub errors: String,
    /// Snapshot file name (`NAME.4`, `NAME.6`, `NAME.ipset`) to its text.
    pub saves: BTreeMap<String, String>,
    /// Snapshots compared without order.
    pub unordered: Vec<String>,
    /// The transcript of the steps, for failure messages.
    pub log: String,
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
            log: read(dir.join("ns.stderr"))
                + &read(dir.join("log/steps.log"))
                + &read(dir.join("log/save.err")),
        }
    }
}

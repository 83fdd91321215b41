//! One side's run of a client: `unshare` starting ns.sh as the first
//! process of fresh pid, network and mount namespaces, and what it wrote.
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

impl Run {
    pub fn start(c: &Client, side: Side) -> Run {
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
            log: read(dir.join("log/steps.log")) + &read(dir.join("log/save.err")),
        }
    }
}

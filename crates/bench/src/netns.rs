//! Private network namespaces for the firewall benchmarks: every iptables or
//! nft command the harness runs goes through [`Netns::run`], which starts the
//! program inside a namespace created for it and never in the caller's own.
//!
//! - [`Netns::new`] runs `ip netns add nfkbench-<pid>-<n>`, opens the
//!   namespace file and refuses to go on if its inode is the one of the
//!   caller's network namespace or (when readable) of PID 1's (the host
//!   firewall is never touched). It then proves the mechanism by running `readlink
//!   /proc/self/ns/net` inside and comparing the inode.
//! - [`Netns::run`] starts a program from a helper thread that entered the
//!   namespace (`setns(CLONE_NEWNET)`; no `ip netns exec` wrapper, so a
//!   measured call costs what the tool costs), stdin from a file, stdout
//!   and stderr to files, a time limit enforced by a watchdog thread that
//!   kills the child.
//! - Dropping the guard deletes the namespace (`ip netns del`). A panic hook
//!   deletes every live one too (the release profile aborts on panic, so
//!   `Drop` alone would not run), and [`cleanup_stale`] removes namespaces
//!   left by a killed harness whose PID is gone.
//!
//! What it is not: a container runtime. Only the network namespace changes;
//! the mount namespace (and so `/run/xtables.lock`) is the host's.

use rustix::process::{kill_process, Pid, Signal};
use rustix::thread::{move_into_link_name_space, LinkNameSpaceType};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

/// Every namespace the harness creates starts with this.
pub const PREFIX: &str = "nfkbench-";

/// Names of the namespaces alive in this process, for the panic hook.
static LIVE: Mutex<Vec<String>> = Mutex::new(Vec::new());
static COUNTER: AtomicUsize = AtomicUsize::new(0);
static HOOK: Once = Once::new();

/// One finished command.
#[derive(Debug)]
pub struct Run {
    pub status: ExitStatus,
    /// From just before `spawn` to the return of `wait`.
    pub elapsed: Duration,
    pub stdout: String,
    pub stderr: String,
}

/// Why a command has no [`Run`].
#[derive(Debug)]
pub enum RunError {
    /// Killed after the limit.
    TimedOut(Duration),
    Io(io::Error),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::TimedOut(d) => write!(f, "killed after {:.1} s", d.as_secs_f64()),
            RunError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// A network namespace that exists while the guard lives.
pub struct Netns {
    name: String,
    /// `/run/netns/NAME`, open for `setns` in children.
    fd: Option<File>,
    /// Scratch files: staged stdin, captured stdout/stderr.
    dir: PathBuf,
    /// Long-running helpers inside the namespace (a daemon a tool under
    /// test needs), killed and reaped before the namespace goes.
    services: Mutex<Vec<Child>>,
    /// Files the services leave behind (their sockets), removed after them.
    leftovers: Mutex<Vec<PathBuf>>,
}

/// PIDs of the services (daemons of tools under test) alive now, in any
/// namespace: [`settle_services`] waits for them.
static SERVICES: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Nanoseconds a process has run on a CPU, all its threads
/// (`/proc/PID/task/*/schedstat`, first field); `None` once it is gone.
pub fn cpu_ns(pid: u32) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut sum = 0u64;
    for t in tasks.flatten() {
        if let Ok(s) = std::fs::read_to_string(t.path().join("schedstat")) {
            sum += s
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Some(sum)
}

/// Waits (at most `max`) until every service is idle: less than 10% of a
/// CPU over a 5 ms window. A daemon keeps working after it answered —
/// the kernel's events of its own transactions, freeing what a flush
/// dropped — and on a 2-CPU machine that work landed inside the next
/// tool's timed step: with `nfkeeper serve` in the run, `iptables -F` of
/// 50k chains measured 0.23 s for every other tool instead of 0.08 s.
pub fn settle_services(max: Duration) {
    let t0 = Instant::now();
    let pids: Vec<u32> = SERVICES.lock().map(|s| s.clone()).unwrap_or_default();
    if pids.is_empty() {
        return;
    }
    const WINDOW: Duration = Duration::from_millis(5);
    let busy = || -> u64 { pids.iter().filter_map(|p| cpu_ns(*p)).sum() };
    let mut before = busy();
    while t0.elapsed() < max {
        std::thread::sleep(WINDOW);
        let now = busy();
        if now.saturating_sub(before) < WINDOW.as_nanos() as u64 / 10 {
            break;
        }
        before = now;
    }
}

/// Whether the process runs with effective UID 0.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// Deletes `nfkbench-<pid>-*` namespaces whose process is gone (left by a
/// harness that was killed), and their scratch folders. Returns how many
/// namespaces it deleted.
pub fn cleanup_stale() -> usize {
    let stale = |name: &str| {
        name.strip_prefix(PREFIX)
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
            .is_some_and(|pid| {
                pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
            })
    };
    let names = |d: &Path| -> Vec<String> {
        std::fs::read_dir(d)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| stale(n))
                    .collect()
            })
            .unwrap_or_default()
    };
    let gone = names(Path::new("/run/netns"));
    for name in &gone {
        delete(name);
    }
    // Folders whose namespace is already gone (a harness killed between
    // the two removals).
    for name in names(&std::env::temp_dir()) {
        let _ = std::fs::remove_dir_all(std::env::temp_dir().join(name));
    }
    gone.len()
}

/// Removes namespace `name` and its scratch folder.
fn delete(name: &str) {
    let _ = Command::new("ip")
        .args(["netns", "del", name])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = std::fs::remove_dir_all(std::env::temp_dir().join(name));
}

/// Children running now (killed when the harness is interrupted).
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());
/// Files services leave behind (their sockets), removed when the harness
/// is interrupted (else by the guard that started them).
static LEFTOVERS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static SIGNALS: Once = Once::new();

/// Make SIGINT, SIGTERM and SIGHUP remove every live namespace at once
/// (and kill the tools running in them) before the harness exits with
/// 128 + the signal number. Call from the main thread before any other
/// thread starts: the signals are blocked there (threads inherit the mask;
/// spawned programs get an empty one) and one thread waits for them with
/// `sigwait`, so no work happens in a signal handler.
pub fn watch_signals() {
    SIGNALS.call_once(|| {
        // SAFETY: sigset_t is plain data initialised by sigemptyset; the
        // mask change affects this thread and threads it starts later.
        let set = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::sigaddset(&mut set, sig);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            set
        };
        std::thread::spawn(move || {
            let mut sig: libc::c_int = 0;
            // SAFETY: waits on the set blocked above.
            if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
                return;
            }
            // Held until exit: a service spawns under this lock, so none
            // can start after this point and outlive the harness.
            let children = CHILDREN.lock().unwrap_or_else(|e| e.into_inner());
            for pid in children.iter() {
                kill(*pid);
            }
            for f in LEFTOVERS.lock().map(|l| l.clone()).unwrap_or_default() {
                let _ = std::fs::remove_file(f);
            }
            crate::rcu::restore();
            // Kept locked until exit: nothing new gets created meanwhile.
            let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
            for name in live.iter() {
                delete(name);
            }
            eprintln!(
                "interrupted by signal {sig}: removed {} network namespace(s)",
                live.len()
            );
            std::process::exit(128 + sig);
        });
    });
}

/// SIGKILL to a child not reaped yet (so its PID is still its own).
fn kill(pid: u32) {
    if let Some(pid) = Pid::from_raw(pid as i32) {
        let _ = kill_process(pid, Signal::KILL);
    }
}

/// Moves the calling thread (only it) into the network namespace named by
/// the file `ns` (`/run/netns/NAME`); threads it starts later inherit it.
pub fn enter(ns: &Path) -> io::Result<()> {
    let f = File::open(ns)?;
    move_into_link_name_space(f.as_fd(), Some(LinkNameSpaceType::Network))?;
    Ok(())
}

fn install_hook() {
    HOOK.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            crate::rcu::restore();
            if let Ok(live) = LIVE.lock() {
                for name in live.iter() {
                    delete(name);
                }
            }
            prev(info);
        }));
    });
}

/// (device, inode) of a namespace file.
fn ns_id(path: &Path) -> io::Result<(u64, u64)> {
    let m = std::fs::metadata(path)?;
    Ok((m.dev(), m.ino()))
}

fn other(msg: String) -> io::Error {
    io::Error::other(msg)
}

impl Netns {
    /// Creates `nfkbench-<pid>-<n>` and checks that commands run through
    /// the guard land in it and not in the host's namespace.
    pub fn new() -> io::Result<Netns> {
        install_hook();
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("{PREFIX}{}-{n}", std::process::id());
        // Held from creation to registration: an interrupt waits for it,
        // so no namespace exists unregistered when the cleanup runs.
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        let st = Command::new("ip")
            .args(["netns", "add", &name])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()?;
        if !st.status.success() {
            return Err(other(format!(
                "ip netns add {name}: {}",
                String::from_utf8_lossy(&st.stderr).trim()
            )));
        }
        live.push(name.clone());
        drop(live);
        // `delete` removes it by this name.
        let dir = std::env::temp_dir().join(&name);
        let mut ns = Netns {
            name,
            fd: None,
            dir,
            services: Mutex::new(Vec::new()),
            leftovers: Mutex::new(Vec::new()),
        };
        std::fs::create_dir_all(&ns.dir)?;
        let path = PathBuf::from("/run/netns").join(&ns.name);
        let fd = File::open(&path)?;
        let id = ns_id(&path)?;
        // PID 1's namespace may be unreadable (no ptrace access to it);
        // the caller's own must be readable.
        let init = ns_id(Path::new("/proc/1/ns/net")).ok();
        let own = ns_id(Path::new("/proc/self/ns/net"))?;
        if Some(id) == init || id == own {
            return Err(other(format!("{} is the host's namespace", ns.name)));
        }
        ns.fd = Some(fd);
        let probe = ns
            .run(
                &["readlink", "/proc/self/ns/net"],
                None,
                Duration::from_secs(10),
            )
            .map_err(|e| other(format!("probe in {}: {e}", ns.name)))?;
        let want = format!("net:[{}]", id.1);
        if probe.stdout.trim() != want {
            return Err(other(format!(
                "probe in {} saw {:?}, expected {want} ({}; stderr {:?})",
                ns.name,
                probe.stdout.trim(),
                probe.status,
                probe.stderr.trim()
            )));
        }
        Ok(ns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Starts `argv` inside the namespace and leaves it running (stdin,
    /// stdout and stderr closed): a daemon the tool under test talks to.
    /// It is killed and reaped when the guard drops, and on SIGINT/SIGTERM
    /// like every child; `leaves` (its socket, say) is removed after it.
    /// Not timed.
    pub fn spawn_service<S: AsRef<str>>(&self, argv: &[S], leaves: &[PathBuf]) -> io::Result<()> {
        let fd = self
            .fd
            .as_ref()
            .ok_or_else(|| other("namespace not open".into()))?
            .as_fd();
        let mut cmd = Command::new(argv[0].as_ref());
        cmd.args(argv[1..].iter().map(|a| a.as_ref()))
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        self.leftovers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(leaves.iter().cloned());
        LEFTOVERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(leaves.iter().cloned());
        // Registered under the lock it is spawned under: the signal
        // thread (which kills every registered child before exiting) can't
        // run between the spawn and the registration and leave a daemon
        // behind.
        let mut registry = CHILDREN.lock().unwrap_or_else(|e| e.into_inner());
        let (child, _) = spawn_in_netns(fd, &mut cmd)?;
        registry.push(child.id());
        drop(registry);
        if let Ok(mut s) = SERVICES.lock() {
            s.push(child.id());
        }
        self.services
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(child);
        Ok(())
    }

    /// `None` before any [`Netns::spawn_service`]; else whether all the
    /// services still run.
    pub fn service_state(&self) -> Option<bool> {
        let mut s = self.services.lock().unwrap_or_else(|e| e.into_inner());
        if s.is_empty() {
            return None;
        }
        Some(s.iter_mut().all(|c| matches!(c.try_wait(), Ok(None))))
    }

    /// Kills and reaps the services started with [`Netns::spawn_service`]
    /// and removes what they leave behind; [`Netns::service_state`] is
    /// `None` again, so the tool may start them anew. Not timed.
    pub fn stop_services(&self) {
        let services =
            std::mem::take(&mut *self.services.lock().unwrap_or_else(|e| e.into_inner()));
        for mut c in services {
            let pid = c.id();
            let _ = c.kill();
            let _ = c.wait();
            if let Ok(mut ch) = CHILDREN.lock() {
                ch.retain(|p| *p != pid);
            }
            if let Ok(mut s) = SERVICES.lock() {
                s.retain(|p| *p != pid);
            }
        }
        let leftovers =
            std::mem::take(&mut *self.leftovers.lock().unwrap_or_else(|e| e.into_inner()));
        for f in leftovers {
            let _ = std::fs::remove_file(&f);
            if let Ok(mut l) = LEFTOVERS.lock() {
                l.retain(|x| *x != f);
            }
        }
    }

    /// The namespace's inode (what `/proc/PID/ns/net` names it by).
    pub fn inode(&self) -> io::Result<u64> {
        Ok(self
            .fd
            .as_ref()
            .ok_or_else(|| other("namespace not open".into()))?
            .metadata()?
            .ino())
    }

    /// Writes `bytes` to a scratch file (for stdin) and returns its path.
    pub fn stage(&self, tag: &str, bytes: &[u8]) -> io::Result<PathBuf> {
        let p = self.dir.join(format!("in-{tag}"));
        std::fs::write(&p, bytes)?;
        Ok(p)
    }

    /// Runs `argv` inside the namespace: stdin from `stdin` (or empty),
    /// killed after `limit`. Output capture is outside the timed region.
    pub fn run<S: AsRef<str>>(
        &self,
        argv: &[S],
        stdin: Option<&Path>,
        limit: Duration,
    ) -> Result<Run, RunError> {
        let fd = self
            .fd
            .as_ref()
            .ok_or_else(|| RunError::Io(other("namespace not open".into())))?
            .as_fd();
        let (out_p, err_p) = (self.dir.join("stdout"), self.dir.join("stderr"));
        let out = File::create(&out_p).map_err(RunError::Io)?;
        let err = File::create(&err_p).map_err(RunError::Io)?;
        let input = match stdin {
            Some(p) => Stdio::from(File::open(p).map_err(RunError::Io)?),
            None => Stdio::null(),
        };
        let mut cmd = Command::new(argv[0].as_ref());
        cmd.args(argv[1..].iter().map(|a| a.as_ref()))
            .env("LC_ALL", "C")
            .stdin(input)
            .stdout(out)
            .stderr(err);
        // The watchdog exists before the clock starts; it gets the PID,
        // then either the end of the channel (done) or the limit (kill).
        let (tx, rx) = mpsc::channel::<u32>();
        let dog = std::thread::spawn(move || {
            let Ok(pid) = rx.recv() else { return false };
            match rx.recv_timeout(limit) {
                Err(RecvTimeoutError::Timeout) => {
                    // Not reaped before this thread is joined.
                    kill(pid);
                    true
                }
                _ => false,
            }
        });
        let spawned = spawn_in_netns(fd, &mut cmd);
        let (mut child, t0) = match spawned {
            Ok(c) => c,
            Err(e) => {
                drop(tx);
                let _ = dog.join();
                return Err(RunError::Io(e));
            }
        };
        let _ = tx.send(child.id());
        let pid = child.id();
        if let Ok(mut c) = CHILDREN.lock() {
            c.push(pid);
        }
        let status = child.wait();
        if let Ok(mut c) = CHILDREN.lock() {
            c.retain(|p| *p != pid);
        }
        let elapsed = t0.elapsed();
        drop(tx);
        let killed = dog.join().unwrap_or(false);
        let status = status.map_err(RunError::Io)?;
        if killed {
            return Err(RunError::TimedOut(elapsed));
        }
        let read = |p: &Path| {
            std::fs::read(p)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default()
        };
        Ok(Run {
            status,
            elapsed,
            stdout: read(&out_p),
            stderr: read(&err_p),
        })
    }
}

/// Spawns `cmd` inside the network namespace open as `fd`, and the
/// instant just before the spawn (the clock of a timed run starts there).
///
/// No fork of this process: a helper thread enters the namespace (setns
/// changes only the calling thread's) and spawns from there, so the child
/// inherits it and std spawns with `posix_spawn` (vfork-like; there is no
/// `pre_exec`). A fork copies the parent's page tables, so its cost grows
/// with the harness's memory: with the 100k-rule cases' text in memory it
/// added about a millisecond to every measured process.
pub fn spawn_in_netns(fd: BorrowedFd<'_>, cmd: &mut Command) -> io::Result<(Child, Instant)> {
    std::thread::scope(|sc| {
        sc.spawn(|| {
            // Changes only this helper thread's namespace; the thread ends
            // right after the spawn.
            move_into_link_name_space(fd, Some(LinkNameSpaceType::Network))?;
            let t0 = Instant::now();
            cmd.spawn().map(|c| (c, t0))
        })
        .join()
        .unwrap_or_else(|_| Err(other("spawn thread panicked".into())))
    })
}

impl Drop for Netns {
    fn drop(&mut self) {
        self.stop_services();
        self.fd = None;
        // Also removes `self.dir` (the scratch folder is named after it).
        delete(&self.name);
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|n| n != &self.name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_run_inside_and_delete() {
        if !is_root() {
            eprintln!("skipped: creating network namespaces needs root");
            return;
        }
        let ns = Netns::new().expect("create namespace");
        let name = ns.name().to_string();
        assert!(Path::new("/run/netns").join(&name).exists());
        let r = ns
            .run(&["ip", "-o", "link"], None, Duration::from_secs(10))
            .expect("ip link");
        assert!(r.status.success(), "{}", r.stderr);
        // A fresh namespace has only the loopback device.
        assert_eq!(r.stdout.lines().count(), 1, "{}", r.stdout);
        assert!(r.stdout.contains("lo:"), "{}", r.stdout);
        // stdin is fed from a staged file.
        let p = ns.stage("t", b"hello\n").unwrap();
        let r = ns.run(&["cat"], Some(&p), Duration::from_secs(10)).unwrap();
        assert_eq!(r.stdout, "hello\n");
        // The limit kills.
        let t = ns.run(&["sleep", "5"], None, Duration::from_millis(200));
        assert!(matches!(t, Err(RunError::TimedOut(_))), "{t:?}");
        drop(ns);
        assert!(!Path::new("/run/netns").join(&name).exists());
        assert!(!LIVE.lock().unwrap().contains(&name));
    }
}

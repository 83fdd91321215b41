//! The socket: binding it, accepting clients, checking who they are, and
//! the optional metrics endpoint.
//!
//! Who may talk to the daemon: root, or members of `--group`, checked on
//! the peer's credentials (SO_PEERCRED) — the socket file itself is
//! world-connectable so that refused peers get a clear message. Which
//! namespace a client means is decided by the socket it picks: the default
//! path carries the namespace's inode (see `proto::client::default_path`),
//! and `nfkeeper status` names the namespace served. (The peer's process
//! namespace is not checked: a thread may have entered another one.)

use crate::Shared;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Bind `path`, replacing a stale socket file (one nobody answers on).
pub fn bind(path: &Path) -> Result<UnixListener, String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(format!(
                "{}: another daemon is already serving this socket",
                path.display()
            ));
        }
        std::fs::remove_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let l = UnixListener::bind(path).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(l)
}

/// The peer's process id, user id and group id.
pub struct Peer {
    pub pid: i32,
    pub uid: u32,
    pub gid: u32,
}

impl Peer {
    pub fn describe(&self) -> String {
        format!("pid={} uid={}", self.pid, self.uid)
    }
}

pub fn peer(s: &UnixStream) -> std::io::Result<Peer> {
    let c = rustix::net::sockopt::socket_peercred(s)?;
    Ok(Peer {
        pid: c.pid.as_raw_nonzero().get(),
        uid: c.uid.as_raw(),
        gid: c.gid.as_raw(),
    })
}

/// Supplementary groups of a process (from /proc; empty if it is gone).
fn groups_of(pid: i32) -> Vec<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Groups:"))
        .map(|g| {
            g.split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Why `p` may not use this daemon, if it may not.
pub fn refuse(sh: &Shared, p: &Peer) -> Option<String> {
    let allowed = p.uid == 0
        || sh
            .cfg
            .group
            .is_some_and(|g| p.gid == g || groups_of(p.pid).contains(&g));
    if !allowed {
        return Some(match sh.cfg.group {
            Some(g) => format!(
                "permission denied: uid {} is neither root nor in group {g}",
                p.uid
            ),
            None => format!(
                "permission denied: uid {} is not root (start the daemon with --group to admit a group)",
                p.uid
            ),
        });
    }
    None
}

/// Idle client threads kept waiting in accept(2) beyond the one that
/// always is.
const IDLE_KEEP: usize = 4;

/// Accept clients forever, each served by a thread of its own (bounded by
/// --max-clients). The threads are kept: one whose client left goes back
/// to accepting, so the common caller — one short-lived process per
/// command — finds a thread already waiting in accept(2), with no thread
/// start and no hand-off between threads per connection (each cost tens of
/// µs of a ~1 ms call here). A thread that accepts while it was the last
/// one waiting starts another first, so a client that stays connected
/// never delays the next; threads beyond [`IDLE_KEEP`] idle ones end. The
/// calling thread is one of them and never ends.
pub fn accept_loop(sh: Arc<Shared>, l: UnixListener) {
    let pool = Arc::new(Pool {
        sh,
        l,
        idle: AtomicUsize::new(0),
    });
    pool.work(true);
}

struct Pool {
    sh: Arc<Shared>,
    l: UnixListener,
    /// Threads waiting in accept(2) now.
    idle: AtomicUsize,
}

impl Pool {
    fn spawn(self: &Arc<Self>) {
        let p = self.clone();
        // A failed start only means no spare thread: the caller accepts
        // again once its client is done.
        let _ = std::thread::Builder::new()
            .name("client".into())
            .stack_size(256 << 10)
            .spawn(move || p.work(false));
    }

    fn work(self: &Arc<Self>, permanent: bool) {
        loop {
            self.idle.fetch_add(1, Ordering::SeqCst);
            let accepted = self.l.accept();
            let last = self.idle.fetch_sub(1, Ordering::SeqCst) == 1;
            // A failed accept (say, out of descriptors) serves nobody:
            // retry in this thread rather than start another, after a
            // pause when the cause will not go away by itself (without it
            // the loop spins while the connection waits in the backlog).
            match accepted {
                Ok((s, _)) => {
                    let known = self.sh.register(&s);
                    if last {
                        self.spawn();
                    }
                    self.serve(s);
                    drop(known);
                }
                Err(e) => {
                    if let Some(pause) = accept_backoff(&e) {
                        self.sh.metrics.accept_errors.inc();
                        std::thread::sleep(pause);
                    }
                }
            }
            if !permanent && self.idle.load(Ordering::SeqCst) >= IDLE_KEEP {
                return;
            }
        }
    }

    fn serve(&self, s: UnixStream) {
        let sh = &self.sh;
        sh.metrics.connections.inc();
        if sh.clients.fetch_add(1, Ordering::SeqCst) >= sh.cfg.max_clients {
            sh.clients.fetch_sub(1, Ordering::SeqCst);
            crate::conn::refuse_and_close(
                s,
                4,
                &format!(
                    "server busy: {} clients connected (--max-clients)",
                    sh.cfg.max_clients
                ),
                sh.cfg.idle_timeout.min(std::time::Duration::from_secs(2)),
            );
            return;
        }
        crate::conn::serve_client(sh, s);
        sh.clients.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How long to wait before accepting again after `e`: out of descriptors
/// (per process or system-wide) or memory lasts until a client leaves;
/// an interrupted or aborted accept is retried at once.
pub fn accept_backoff(e: &std::io::Error) -> Option<std::time::Duration> {
    match e.raw_os_error() {
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => {
            Some(std::time::Duration::from_millis(50))
        }
        Some(libc::EINTR | libc::ECONNABORTED) => None,
        _ => Some(std::time::Duration::from_millis(1)),
    }
}

/// Serve `GET /metrics` (any path, really) over plain HTTP/1.0.
pub fn metrics_endpoint(sh: Arc<Shared>, l: std::net::TcpListener) -> Result<(), String> {
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || {
            for s in l.incoming() {
                let Ok(mut s) = s else { continue };
                let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                let mut req = [0u8; 1024];
                let _ = s.read(&mut req);
                let body = sh.metrics.render(&sh.sizes());
                let _ = write!(
                    s,
                    "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
            }
        })
        .map_err(|e| e.to_string())?;
    Ok(())
}

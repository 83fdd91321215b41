//! Stopping on SIGTERM or SIGINT (systemd's stop, Ctrl-C): no client is
//! left without the answer to a write the kernel committed, and the socket
//! file goes away with the daemon.
//!
//! Order, and why it is enough:
//! 1. `stopping` is set and the socket file removed (if it is still the
//!    one this daemon bound): new clients fail to connect and run in
//!    direct mode.
//! 2. Connections still in the listen queue are taken and answered Error
//!    code [`proto::STOPPING`] ("nothing was applied"; the CLI then runs
//!    the command in direct mode).
//! 3. The daemon waits until no request is being handled. A connection
//!    thread marks a request as begun ([`Shared::begin_request`]) before
//!    looking at `stopping`; one that begins after the flag is set answers
//!    [`proto::STOPPING`] without doing anything. Both sides use
//!    sequentially consistent atomics, so a request either is waited for
//!    or sees the flag: none is cut off between its commit and its answer.
//! 4. Every open connection (idle between requests, or accepted and not yet
//!    read) is sent [`proto::STOPPING`] and shut for writing: a request a
//!    client sends from now on finds that answer instead of a closed
//!    connection, so no client is left not knowing whether its change was
//!    applied. (The protocol lets an Error frame precede the request.)
//! 5. The snapshot writer's lock is taken, so no snapshot file is left
//!    half-written.
//! 6. One line is logged (`event=stop`) and the process exits with 0.
//!
//! The wait in 3 has no limit of its own: a restore of a million rules
//! takes seconds, and the service manager's stop timeout (systemd: 90 s)
//! ends a daemon that hangs.

use crate::Shared;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a request refused by a stopping daemon is told.
pub(crate) const STOPPING_MESSAGE: &str = "the daemon is stopping; nothing was applied";

/// The signals that stop the daemon.
fn stop_signals() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill the set we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        set
    }
}

/// Block the stop signals in the calling thread, and so in every thread it
/// starts afterwards: call before any thread is started, so that only
/// [`watch`]'s thread ever takes them.
pub fn block_signals() {
    let set = stop_signals();
    // SAFETY: changes only this thread's signal mask.
    unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// The identity of the socket file this daemon bound, so that stopping
/// removes it only if nobody replaced it meanwhile.
pub struct BoundSocket {
    path: std::path::PathBuf,
    dev: u64,
    ino: u64,
}

impl BoundSocket {
    pub fn new(path: &Path) -> std::io::Result<BoundSocket> {
        let m = std::fs::symlink_metadata(path)?;
        Ok(BoundSocket {
            path: path.to_path_buf(),
            dev: m.dev(),
            ino: m.ino(),
        })
    }

    fn remove(&self) {
        if let Ok(m) = std::fs::symlink_metadata(&self.path) {
            if m.dev() == self.dev && m.ino() == self.ino {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

/// Start the thread that waits for a stop signal and then stops the
/// daemon as the module describes; `listener` is a clone of the accept
/// loop's. The signals must be blocked already ([`block_signals`]).
pub fn watch(sh: Arc<Shared>, bound: BoundSocket, listener: UnixListener) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("stop".into())
        .spawn(move || {
            let set = stop_signals();
            let mut sig: libc::c_int = 0;
            // SAFETY: waits for one of the blocked signals of `set`.
            while unsafe { libc::sigwait(&set, &mut sig) } != 0 {}
            let t0 = Instant::now();
            stop(&sh, &bound, &listener);
            crate::log::line(&format!(
                "event=stop signal={} waited_ms={}",
                if sig == libc::SIGINT { "INT" } else { "TERM" },
                t0.elapsed().as_millis()
            ));
            std::process::exit(0);
        })?;
    Ok(())
}

/// Steps 1–5 of the module's order; returns when the daemon may exit.
pub fn stop(sh: &Shared, bound: &BoundSocket, listener: &UnixListener) {
    sh.stopping.store(true, Ordering::SeqCst);
    bound.remove();
    let mut frame = Vec::new();
    proto::encode_reply(
        &proto::Reply::Error {
            code: proto::STOPPING,
            message: STOPPING_MESSAGE.into(),
        },
        &mut frame,
    );
    // The accept threads may take some of the queue too: they serve them,
    // and such a request then sees `stopping`.
    let drain_queue = || {
        if listener.set_nonblocking(true).is_ok() {
            while let Ok((s, _)) = listener.accept() {
                refuse(&s, &frame);
            }
        }
    };
    drain_queue();
    while sh.busy.load(Ordering::SeqCst) > 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    drain_queue();
    for s in sh.conns.lock().unwrap_or_else(|e| e.into_inner()).values() {
        refuse(s, &frame);
    }
    // Held until the process exits: no snapshot write starts after this.
    std::mem::forget(crate::conn::snapshot_writing());
}

/// Send `frame` without waiting (a client that reads nothing does not hold
/// the stop) and end the connection's sending side.
fn refuse(s: &UnixStream, frame: &[u8]) {
    let flags = rustix::net::SendFlags::DONTWAIT | rustix::net::SendFlags::NOSIGNAL;
    let _ = rustix::net::send(s, frame, flags);
    let _ = s.shutdown(std::net::Shutdown::Write);
}

/// An open connection, known to the stop ([`Shared::register`]) until
/// this is dropped.
pub struct Registered<'a> {
    sh: &'a Shared,
    id: u64,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.sh
            .conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}

impl Shared {
    /// Make connection `s` known to the stop, through a descriptor of its
    /// own (so a connection's closing never leaves the stop a reused
    /// number). `None` when no descriptor is left: the connection is then
    /// only cut by the exit, as by a kill.
    pub fn register(&self, s: &UnixStream) -> Option<Registered<'_>> {
        let c = s.try_clone().ok()?;
        let id = self.next_conn.fetch_add(1, Ordering::Relaxed);
        self.conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, c);
        Some(Registered { sh: self, id })
    }

    /// Mark a request as being handled; `false` when the daemon is
    /// stopping (then nothing may be done for it: answer
    /// [`proto::STOPPING`]). Pair a `true` with [`Shared::end_request`].
    pub fn begin_request(&self) -> bool {
        self.busy.fetch_add(1, Ordering::SeqCst);
        if self.stopping.load(Ordering::SeqCst) {
            self.busy.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// The request begun with [`Shared::begin_request`] has been answered.
    pub fn end_request(&self) {
        self.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

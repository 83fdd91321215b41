//! The client side: find the daemon of this network namespace, send
//! requests, stream the answers.
//!
//! Contract on failures: [`ClientError::Connect`] means nothing was sent
//! (callers fall back to direct mode); [`ClientError::Proto`] means the
//! exchange broke after the request was (perhaps) sent, so a write may or
//! may not have been applied; [`ClientError::Refused`] is the daemon's
//! protocol-level refusal (an `Error` frame), after which it has closed the
//! connection.

use crate::{
    decode_reply, encode_request, read_frame, Fam, Op, OpResult, ProtoError, Reply, Request,
    DEFAULT_MAX_REPLY,
};
use std::fmt;
use std::io::{self, ErrorKind};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the daemon of the caller's network namespace listens:
/// `$NFKEEPER_SOCKET` if set, else `/run/nfkeeper/net-<inode>.sock` with
/// the inode number of `/proc/self/ns/net` (one stat). Without /proc the
/// path names no daemon (`net-unknown.sock`), so connecting fails and
/// callers fall back.
pub fn default_path() -> PathBuf {
    if let Some(p) = std::env::var_os("NFKEEPER_SOCKET") {
        return PathBuf::from(p);
    }
    namespace_path()
}

/// `/run/nfkeeper/net-<inode>.sock` for the caller's network namespace
/// (see [`default_path`]), whatever the environment says.
pub fn namespace_path() -> PathBuf {
    match std::fs::metadata("/proc/self/ns/net") {
        Ok(m) => PathBuf::from(format!("/run/nfkeeper/net-{}.sock", m.ino())),
        Err(_) => PathBuf::from("/run/nfkeeper/net-unknown.sock"),
    }
}

/// A connection to the daemon; requests go one at a time.
pub struct Client {
    s: UnixStream,
    /// Reused for every reply frame.
    buf: Vec<u8>,
    /// How long to poll for the first reply frame before blocking (see
    /// [`Client::spin_for_reply`]).
    spin: Duration,
}

/// Everything a request produced, collected.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub code: i32,
}

#[derive(Debug)]
pub enum ClientError {
    /// No daemon could be reached; nothing was sent.
    Connect(io::Error),
    /// The exchange broke (daemon died mid-request, timeout, garbage): the
    /// request may or may not have been applied.
    Proto(ProtoError),
    /// The daemon refused with an `Error` frame (or, for the typed calls,
    /// the operation failed): its code and message.
    Refused { code: i32, message: String },
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MAYBE: &str = "the change may or may not have been applied";
        match self {
            ClientError::Connect(e) => write!(f, "nfkeeper: cannot reach the daemon: {e}"),
            ClientError::Proto(ProtoError::Eof) => {
                write!(
                    f,
                    "nfkeeper: the daemon closed the connection before answering; {MAYBE}"
                )
            }
            ClientError::Proto(ProtoError::Io(e)) if closed(e.kind()) => {
                write!(
                    f,
                    "nfkeeper: the daemon closed the connection before answering; {MAYBE}"
                )
            }
            ClientError::Proto(ProtoError::Io(e))
                if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) =>
            {
                write!(f, "nfkeeper: the daemon did not answer in time; {MAYBE}")
            }
            ClientError::Proto(e) => write!(
                f,
                "nfkeeper: broken exchange with the daemon ({e}); {MAYBE}"
            ),
            ClientError::Refused { message, .. } => write!(f, "nfkeeper: {message}"),
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Connect(e) => Some(e),
            ClientError::Proto(e) => Some(e),
            ClientError::Refused { .. } => None,
        }
    }
}

/// Errors that mean the peer went away.
fn closed(k: ErrorKind) -> bool {
    matches!(
        k,
        ErrorKind::UnexpectedEof
            | ErrorKind::BrokenPipe
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
    )
}

/// `write_all` through send(2) with MSG_NOSIGNAL: a daemon that went away
/// yields EPIPE instead of killing a client that left SIGPIPE at its
/// default action.
fn send_all(s: &UnixStream, mut b: &[u8]) -> io::Result<()> {
    while !b.is_empty() {
        match rustix::net::send(s, b, rustix::net::SendFlags::NOSIGNAL) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => b = &b[n..],
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

impl Client {
    pub fn connect(path: &Path) -> Result<Client, ClientError> {
        let s = UnixStream::connect(path).map_err(ClientError::Connect)?;
        Ok(Client::from_stream(s))
    }

    /// Connects to [`default_path`].
    pub fn connect_default() -> Result<Client, ClientError> {
        Client::connect(&default_path())
    }

    /// Wraps a connected stream (a socketpair in tests, a socket opened by
    /// the caller).
    pub fn from_stream(s: UnixStream) -> Client {
        Client {
            s,
            buf: Vec::new(),
            spin: Duration::ZERO,
        }
    }

    /// After sending a request, poll for the reply for up to `t` before
    /// blocking on it (default: not at all). For a one-shot caller that
    /// waits for nothing else, such as the CLI: a blocked process whose
    /// reply arrives must be woken, which on an idle virtual CPU costs tens
    /// of µs; polling costs up to `t` of CPU instead. Not for many
    /// concurrent clients sharing few CPUs, which would spin against the
    /// daemon.
    pub fn spin_for_reply(&mut self, t: Duration) {
        self.spin = t;
    }

    /// Poll until the socket is readable or `self.spin` has passed.
    fn poll_for_reply(&self) {
        if self.spin.is_zero() {
            return;
        }
        let t0 = std::time::Instant::now();
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        let zero = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        while t0.elapsed() < self.spin {
            let mut p = [PollFd::new(&self.s, PollFlags::IN)];
            if poll(&mut p, Some(&zero)) != Ok(0) {
                return;
            }
            std::hint::spin_loop();
        }
    }

    /// Bounds each read and write on the socket (`None`: wait forever, the
    /// default). A timeout ends the call with `Proto`.
    pub fn set_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        self.s.set_read_timeout(t)?;
        self.s.set_write_timeout(t)
    }

    fn next(&mut self) -> Result<Reply, ClientError> {
        read_frame(&mut self.s, DEFAULT_MAX_REPLY, &mut self.buf).map_err(ClientError::Proto)?;
        decode_reply(&self.buf).map_err(ClientError::Proto)
    }

    /// Sends `req` (one write), then hands each Stdout/Stderr chunk to
    /// `sink` as it arrives and returns the Exit code with the OpResults
    /// (empty unless the daemon sent some). An `Error` frame is `Refused`.
    pub fn call(
        &mut self,
        req: &Request,
        sink: &mut dyn FnMut(&Reply),
    ) -> Result<(i32, Vec<OpResult>), ClientError> {
        let mut out = Vec::new();
        encode_request(req, &mut out);
        if let Err(e) = send_all(&self.s, &out) {
            // A daemon that refused us wrote an Error frame before it
            // closed: that explains the failed write better than EPIPE.
            return match self.next() {
                Ok(Reply::Error { code, message }) => Err(ClientError::Refused { code, message }),
                _ => Err(ClientError::Proto(ProtoError::Io(e))),
            };
        }
        self.poll_for_reply();
        let mut results = None;
        loop {
            match self.next()? {
                Reply::Exit(code) => return Ok((code, results.unwrap_or_default())),
                Reply::Error { code, message } => {
                    return Err(ClientError::Refused { code, message })
                }
                Reply::OpResults(r) => {
                    if results.is_some() {
                        return Err(ClientError::Proto(ProtoError::Malformed(
                            "two OpResults frames in one reply".into(),
                        )));
                    }
                    results = Some(r);
                }
                r => sink(&r),
            }
        }
    }

    /// Sends `req` and collects all its output.
    pub fn run(&mut self, req: &Request) -> Result<Output, ClientError> {
        let mut o = Output::default();
        let (code, _) = self.call(req, &mut |r| match r {
            Reply::Stdout(b) => o.stdout.extend_from_slice(b),
            Reply::Stderr(b) => o.stderr.extend_from_slice(b),
            _ => {}
        })?;
        o.code = code;
        Ok(o)
    }

    /// Applies `ops` as one transaction and returns one result per op (the
    /// failing one carries the iptables error; a failed transaction applied
    /// nothing). A failure the daemon reports without results (the whole
    /// request refused) is `Refused` with its error output.
    pub fn apply(&mut self, family: Fam, ops: &[Op]) -> Result<Vec<OpResult>, ClientError> {
        let req = Request::Ops {
            family,
            ops: ops.to_vec(),
        };
        let mut stderr = Vec::new();
        let (code, results) = self.call(&req, &mut |r| {
            if let Reply::Stderr(b) = r {
                stderr.extend_from_slice(b);
            }
        })?;
        if results.len() == ops.len() {
            return Ok(results);
        }
        if results.is_empty() && code != 0 {
            let message = String::from_utf8_lossy(&stderr).trim_end().to_string();
            return Err(ClientError::Refused { code, message });
        }
        Err(ClientError::Proto(ProtoError::Malformed(format!(
            "{} results for {} operations",
            results.len(),
            ops.len()
        ))))
    }

    /// Appends one rule; a failure is `Refused` with iptables' error text.
    pub fn append(
        &mut self,
        family: Fam,
        table: &str,
        chain: &str,
        rule: &[&str],
    ) -> Result<(), ClientError> {
        let r = self.apply(family, &[Op::append(table, chain, rule)])?;
        match r.into_iter().next() {
            Some(OpResult { code: 0, .. }) => Ok(()),
            Some(OpResult { code, message }) => Err(ClientError::Refused { code, message }),
            None => Err(ClientError::Proto(ProtoError::Malformed(
                "no result for the operation".into(),
            ))),
        }
    }

    /// The daemon's status text.
    pub fn status(&mut self) -> Result<String, ClientError> {
        let o = self.run(&Request::Status)?;
        if o.code != 0 {
            let message = String::from_utf8_lossy(&o.stderr).trim_end().to_string();
            return Err(ClientError::Refused {
                code: o.code,
                message,
            });
        }
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    }
}

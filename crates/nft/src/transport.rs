//! The seam between the netlink logic ([`crate::Socket`],
//! [`crate::EventSocket`]) and what carries the datagrams: a [`Transport`]
//! is one netlink connection. [`Netlink`] is the real one, a
//! `NETLINK_NETFILTER` socket; tests plug in an in-memory kernel that
//! speaks the same bytes (crate `nfk-fakekernel`), so everything above the
//! transport — batch building, reply matching, dump loops, event parsing —
//! runs unchanged against it.
//!
//! Contract of every transport (what the kernel socket does, and so what
//! the callers rely on):
//! - `send` hands over one whole datagram, which the peer processes
//!   completely before `send` returns: when it returns, every reply to it is
//!   already queued (kernel-side netlink processing is synchronous).
//! - `recv` hands out one datagram per call, in order. A datagram longer
//!   than the buffer is truncated and its full length returned. When
//!   datagrams were dropped for lack of receive buffer, the next `recv`
//!   fails once with `ENOBUFS` and later ones go on with what is queued.
//! - Errors are `io::Error`s with the errno the kernel would give
//!   (`EMSGSIZE` for a datagram over the send buffer, `ENOBUFS` for an
//!   overrun, `EAGAIN` for an empty queue of a non-blocking connection).
//!
//! A `Box<dyn Transport>` costs one indirect call per datagram, against a
//! system call per datagram for the real socket: nothing measurable.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use crate::netlink;

/// One netlink connection. `Send` so that a socket can move to the thread
/// that uses it.
pub trait Transport: Send {
    /// The port id of this connection: the kernel stamps it in
    /// `nlmsg_pid` of every notification about a change this connection
    /// committed.
    fn portid(&self) -> u32;

    /// Sends one datagram (see the module contract).
    fn send(&mut self, datagram: &[u8]) -> io::Result<()>;

    /// Receives one datagram into `buf`: `Ok(Some(n))` with its full length
    /// (`n > buf.len()`: truncated), `Ok(None)` when `nonblock` (or the
    /// connection is non-blocking) and nothing is queued. Without
    /// `nonblock`, waits for a datagram.
    fn recv(&mut self, buf: &mut [u8], nonblock: bool) -> io::Result<Option<usize>>;

    /// Waits until a datagram (or a pending error) is queued: `Ok(false)`
    /// when `timeout` passed first (`None`: wait forever).
    fn wait(&mut self, timeout: Option<Duration>) -> io::Result<bool>;

    /// Makes the send buffer at least `bytes` large (a datagram must fit
    /// it whole).
    fn set_sndbuf(&mut self, bytes: usize) -> io::Result<()>;

    /// Makes the receive buffer at least `bytes` large.
    fn set_rcvbuf(&mut self, bytes: usize) -> io::Result<()>;

    /// Joins netlink multicast group `group` (a group number, not a mask).
    fn join_group(&mut self, group: u32) -> io::Result<()>;

    /// Leaves multicast group `group`. A transport that cannot says so
    /// (`Unsupported`), and stays subscribed.
    fn leave_group(&mut self, _group: u32) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }

    /// Makes every receive non-blocking, whatever `recv` is asked. Takes
    /// `&self`, as `fcntl` on a shared descriptor does.
    fn set_nonblocking(&self) -> io::Result<()>;

    /// The file descriptor, for a transport that has one (to poll it with
    /// others).
    fn raw_fd(&self) -> Option<RawFd> {
        None
    }
    /// A number naming the network namespace this connection talks to,
    /// unique for the boot (never reused, unlike the namespace's inode):
    /// `SO_NETNS_COOKIE`. `None` when it has none (a fake kernel, an old
    /// kernel).
    fn netns_cookie(&self) -> Option<u64> {
        None
    }

    /// Another connection to the same kernel (the same network namespace),
    /// for requests on another thread. `None` when this transport cannot
    /// open one it knows to reach the same namespace; the caller then does
    /// the work on this one.
    fn sibling(&self) -> Option<Box<dyn Transport>> {
        None
    }
}

const SOL_NETLINK: i32 = 270;
const NETLINK_ADD_MEMBERSHIP: i32 = 1;
const NETLINK_DROP_MEMBERSHIP: i32 = 2;
const NETLINK_CAP_ACK: i32 = 10;
const NETLINK_EXT_ACK: i32 = 11;
/// Largest socket buffer value handed to the kernel (it doubles it and
/// caps at `INT_MAX`).
const MAX_SOCKBUF: usize = (i32::MAX / 2) as usize;

/// A `NETLINK_NETFILTER` socket bound in the calling thread's network
/// namespace, with a port id chosen by the kernel. Uses `libc` because std
/// has no netlink sockets.
pub struct Netlink {
    fd: OwnedFd,
    portid: u32,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

impl Netlink {
    /// Opens and binds a socket.
    pub fn open() -> io::Result<Netlink> {
        // SAFETY: plain syscalls on a fresh fd we own; the sockaddr is a
        // zeroed `sockaddr_nl` with only the family set.
        let fd = unsafe {
            let fd = cvt(libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                netlink::NETLINK_NETFILTER,
            ))?;
            let fd = OwnedFd::from_raw_fd(fd);
            let mut sa: libc::sockaddr_nl = std::mem::zeroed();
            sa.nl_family = libc::AF_NETLINK as u16;
            cvt(libc::bind(
                fd.as_raw_fd(),
                &sa as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_nl>() as u32,
            ))?;
            fd
        };
        let portid = portid_of(&fd)?;
        Ok(Netlink { fd, portid })
    }

    /// As [`Netlink::open`], for requests: errors echo only the failing
    /// message's header (`NETLINK_CAP_ACK`) and carry extended-ACK text
    /// (`NETLINK_EXT_ACK`).
    pub fn open_requests() -> io::Result<Netlink> {
        let n = Netlink::open()?;
        n.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)?;
        n.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)?;
        Ok(n)
    }

    fn setsockopt(&self, level: i32, name: i32, v: i32) -> io::Result<()> {
        // SAFETY: `v` outlives the call and its size is passed.
        cvt(unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                level,
                name,
                &v as *const i32 as *const libc::c_void,
                4,
            )
        })
        .map(drop)
    }

    /// `SO_*BUFFORCE` (needs CAP_NET_ADMIN, ignores the sysctl caps), else
    /// the capped option.
    fn set_buf(&self, force: i32, plain: i32, bytes: usize) -> io::Result<()> {
        let v = bytes.min(MAX_SOCKBUF) as i32;
        self.setsockopt(libc::SOL_SOCKET, force, v)
            .or_else(|_| self.setsockopt(libc::SOL_SOCKET, plain, v))
    }
}

/// The port id of a bound netlink socket (`getsockname`'s `nl_pid`).
fn portid_of(fd: &OwnedFd) -> io::Result<u32> {
    // SAFETY: `sa` and `len` outlive the call; `len` is `sa`'s size.
    unsafe {
        let mut sa: libc::sockaddr_nl = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
        cvt(libc::getsockname(
            fd.as_raw_fd(),
            &mut sa as *mut _ as *mut libc::sockaddr,
            &mut len,
        ))?;
        Ok(sa.nl_pid)
    }
}

impl Transport for Netlink {
    fn portid(&self) -> u32 {
        self.portid
    }

    fn send(&mut self, datagram: &[u8]) -> io::Result<()> {
        loop {
            // SAFETY: the pointer/length pair comes from a live slice.
            let r = unsafe {
                libc::send(
                    self.fd.as_raw_fd(),
                    datagram.as_ptr() as *const libc::c_void,
                    datagram.len(),
                    0,
                )
            };
            if r >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    fn recv(&mut self, buf: &mut [u8], nonblock: bool) -> io::Result<Option<usize>> {
        let flags = libc::MSG_TRUNC | if nonblock { libc::MSG_DONTWAIT } else { 0 };
        loop {
            // SAFETY: the buffer is live and its length passed.
            let r = unsafe {
                libc::recv(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                    flags,
                )
            };
            if r >= 0 {
                return Ok(Some(r as usize));
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) if nonblock => return Ok(None),
                _ => return Err(e),
            }
        }
    }

    fn wait(&mut self, timeout: Option<Duration>) -> io::Result<bool> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let ms = match deadline {
                None => -1,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    // Round up so a sub-millisecond wait does not become a spin.
                    left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
                }
            };
            let mut p = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, count 1.
            let r = unsafe { libc::poll(&mut p, 1, ms) };
            if r > 0 {
                return Ok(true);
            }
            if r == 0 {
                return Ok(false);
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
    }

    fn set_sndbuf(&mut self, bytes: usize) -> io::Result<()> {
        self.set_buf(libc::SO_SNDBUFFORCE, libc::SO_SNDBUF, bytes)
    }

    fn set_rcvbuf(&mut self, bytes: usize) -> io::Result<()> {
        self.set_buf(libc::SO_RCVBUFFORCE, libc::SO_RCVBUF, bytes)
    }

    fn join_group(&mut self, group: u32) -> io::Result<()> {
        self.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, group as i32)
    }

    fn leave_group(&mut self, group: u32) -> io::Result<()> {
        self.setsockopt(SOL_NETLINK, NETLINK_DROP_MEMBERSHIP, group as i32)
    }

    fn set_nonblocking(&self) -> io::Result<()> {
        let fd = self.fd.as_raw_fd();
        // SAFETY: fcntl on a descriptor we own; only the file status flags
        // change.
        unsafe {
            let fl = libc::fcntl(fd, libc::F_GETFL);
            if fl < 0 || libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    fn raw_fd(&self) -> Option<RawFd> {
        Some(self.fd.as_raw_fd())
    }

    fn netns_cookie(&self) -> Option<u64> {
        const SO_NETNS_COOKIE: libc::c_int = 71;
        let mut cookie: u64 = 0;
        let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most `len` bytes into `cookie`.
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                SO_NETNS_COOKIE,
                (&mut cookie as *mut u64).cast(),
                &mut len,
            )
        };
        (r == 0 && len as usize == std::mem::size_of::<u64>()).then_some(cookie)
    }

    /// A new socket opened in the calling thread's namespace, kept only
    /// when its namespace cookie is this one's (a thread that moved to
    /// another namespace after this socket was opened gets `None`, as does
    /// a kernel without cookies).
    fn sibling(&self) -> Option<Box<dyn Transport>> {
        let mine = self.netns_cookie()?;
        let other = Netlink::open_requests().ok()?;
        (other.netns_cookie() == Some(mine)).then(|| Box::new(other) as Box<dyn Transport>)
    }
}

/// The receive queue overflowed: the kernel dropped messages.
pub fn is_overrun(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENOBUFS)
}

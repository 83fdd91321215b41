//! The last close of short-lived programs' netlink sockets, taken off
//! their exit path: a per-namespace *closer* process collects the sockets
//! and closes them together once commands stop coming.
//!
//! Why: nf_tables frees what a transaction deleted (rules, chains, sets,
//! elements, replaced rules, updated chains) after an RCU grace period, in
//! a work item. When a bound `NETLINK_NETFILTER` socket is released, the
//! kernel's release notifier takes the namespace's commit lock and, if any
//! destruction is pending (anyone's, in any namespace), waits for it: one
//! grace period, 4–16 ms at the default RCU settings on this VM, several
//! times what a command costs otherwise. A command pays it at exit, and a
//! command that starts meanwhile waits for the lock before its commit. So a
//! script of deletes (or of appends to a compiled run, whose census is
//! replaced) costs a grace period per command.
//!
//! With [`hand_off`], the command sends its socket (`SCM_RIGHTS`) to the
//! closer of its network namespace, started by the first command that
//! needs one, and exits at once. The closer holds the sockets (nothing is
//! read from them; they only keep the port ids) until no socket has come
//! for [`QUIET_MS`], then closes them all — the first close waits for the
//! pending destruction, the others find none — and exits. A burst of
//! commands pays one grace period in all, after it, in a process nobody
//! waits for. The kernel state is final before any of this: a transaction
//! commits when its `send` returns.
//!
//! The closer listens on the abstract unix socket `nfkeeper-closer-EUID`,
//! which is private to the network namespace. A socket is only handed to a
//! listener running as the same user ([`SO_PEERCRED`]): a netlink socket
//! carries its opener's privileges.
//!
//! Contract: for short-lived programs about to end. The closer is forked
//! from the calling program; between the fork and its end it runs only
//! system calls on descriptors and stack memory (no allocation), so the
//! caller may have other threads.

use std::io;
use std::os::fd::RawFd;

/// The closer takes the sockets queued for it once per this period (ms),
/// and ends after a period that brought none.
pub const QUIET_MS: i32 = 100;
/// Sockets held at once; when full, they are closed together and
/// collecting goes on.
const HOLD: usize = 512;
/// Connections queued between two of the closer's rounds (the kernel caps
/// it at `net.core.somaxconn`, 4096 by default); a program that finds the
/// queue full closes its socket itself.
const BACKLOG: libc::c_int = 1024;

/// The closer's abstract address for this user (`sockaddr_un` with a
/// leading NUL), and its length.
fn address() -> (libc::sockaddr_un, libc::socklen_t) {
    // SAFETY: a zeroed sockaddr_un is valid; geteuid cannot fail.
    let mut sa: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    sa.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let name = format!("nfkeeper-closer-{}", unsafe { libc::geteuid() });
    for (i, b) in name.bytes().enumerate() {
        sa.sun_path[i + 1] = b as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + 1 + name.len();
    (sa, len as libc::socklen_t)
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// A unix seqpacket socket; `nonblock` for a client, which must never wait
/// for the closer (a full queue fails the connect with `EAGAIN`).
fn seqpacket(nonblock: bool) -> io::Result<RawFd> {
    let nb = if nonblock { libc::SOCK_NONBLOCK } else { 0 };
    // SAFETY: plain socket creation.
    cvt(unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC | nb,
            0,
        )
    })
}

/// Whether a closer is at the address: `Some(connected socket)` if one
/// answers as this user.
fn connect() -> Option<RawFd> {
    let (sa, len) = address();
    let s = seqpacket(true).ok()?;
    // SAFETY: `sa` is a valid address of `len` bytes; `cred` is written by
    // getsockopt within its size.
    let ok = unsafe {
        libc::connect(s, &sa as *const _ as *const libc::sockaddr, len) == 0 && {
            let mut cred: libc::ucred = std::mem::zeroed();
            let mut cl = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
            libc::getsockopt(
                s,
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&mut cred as *mut libc::ucred).cast(),
                &mut cl,
            ) == 0
                && cred.uid == libc::geteuid()
        }
    };
    if ok {
        Some(s)
    } else {
        // SAFETY: ours.
        unsafe { libc::close(s) };
        None
    }
}

/// Sends `fd` over the connected socket `s` (one byte and the descriptor).
fn send_fd(s: RawFd, fd: RawFd) -> io::Result<()> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // Room for one descriptor's control message, aligned.
    let mut cbuf = [0u64; 4];
    // SAFETY: the msghdr points at live buffers; CMSG_* stay within cbuf
    // (CMSG_SPACE(4) = 24 bytes <= 32).
    unsafe {
        let mut m: libc::msghdr = std::mem::zeroed();
        m.msg_iov = &mut iov;
        m.msg_iovlen = 1;
        m.msg_control = cbuf.as_mut_ptr().cast();
        m.msg_controllen = libc::CMSG_SPACE(4) as _;
        let c = libc::CMSG_FIRSTHDR(&m);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(4) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<RawFd>(), fd);
        if libc::sendmsg(s, &m, libc::MSG_NOSIGNAL) != 1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// How a socket was handed off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handoff {
    /// Sent to the closer already running in this namespace.
    Sent,
    /// A closer was started for it: this pid.
    Started(u32),
}

/// Hands `fd` to the closer of this namespace if one runs (`Ok` either
/// way; nothing happens when none runs). Costs a failed connect (~10 µs)
/// when none runs.
pub fn hand_off_if_running(fd: RawFd) -> io::Result<()> {
    match connect() {
        Some(s) => {
            let r = send_fd(s, fd);
            // SAFETY: ours.
            unsafe { libc::close(s) };
            r
        }
        None => Ok(()),
    }
}

/// Hands `fd` (a netlink socket this program is done with) to the closer
/// of this network namespace, starting one if none runs. The caller's own
/// descriptor stays open and closes at its exit without waiting (it is no
/// longer the last reference). On failure nothing changes: the socket then
/// closes at exit as usual. Costs a connect and a send (~30 µs), or a
/// `fork` (~0.1–0.3 ms) for the first command of a burst.
pub fn hand_off(fd: RawFd) -> io::Result<Handoff> {
    if let Some(s) = connect() {
        let r = send_fd(s, fd);
        // SAFETY: ours.
        unsafe { libc::close(s) };
        return r.map(|()| Handoff::Sent);
    }
    let (sa, len) = address();
    let l = seqpacket(false)?;
    // SAFETY: `sa` is valid for `len` bytes; `l` is ours.
    let bound = unsafe {
        libc::bind(l, &sa as *const _ as *const libc::sockaddr, len) == 0
            && libc::listen(l, BACKLOG) == 0
    };
    if !bound {
        let e = io::Error::last_os_error();
        // SAFETY: ours.
        unsafe { libc::close(l) };
        // Another program started a closer meanwhile (or a stranger holds
        // the name): use it if it is ours.
        return match connect() {
            Some(s) => {
                let r = send_fd(s, fd);
                // SAFETY: ours.
                unsafe { libc::close(s) };
                r.map(|()| Handoff::Sent)
            }
            None => Err(e),
        };
    }
    // SAFETY: the child runs only system calls on inherited descriptors and
    // stack memory, and ends with `_exit`.
    match unsafe { libc::fork() } {
        0 => unsafe { closer(l, fd) },
        -1 => {
            let e = io::Error::last_os_error();
            // SAFETY: ours.
            unsafe { libc::close(l) };
            Err(e)
        }
        pid => {
            // SAFETY: the child has its own copy.
            unsafe { libc::close(l) };
            Ok(Handoff::Started(pid as u32))
        }
    }
}

/// Closes every descriptor of the process but `a` and `b`.
unsafe fn close_all_but(a: RawFd, b: RawFd) {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    let (lo, hi) = (lo as libc::c_uint, hi as libc::c_uint);
    let none = 0 as libc::c_uint;
    if lo > 0 {
        libc::syscall(libc::SYS_close_range, none, lo - 1, none);
    }
    if hi > lo + 1 {
        libc::syscall(libc::SYS_close_range, lo + 1, hi - 1, none);
    }
    libc::syscall(libc::SYS_close_range, hi + 1, libc::c_uint::MAX, none);
}

/// The closer: holds `first` and whatever arrives on `listener` until a
/// period of [`QUIET_MS`] brings no new socket, then closes them and exits.
///
/// It sleeps instead of waiting on the listener: a program's connect and
/// send complete on the listener's queue without waking the closer (a
/// wake-up on a busy machine lets the closer take the CPU from the program
/// that is about to exit), and the closer takes what queued once per
/// period.
unsafe fn closer(listener: RawFd, first: RawFd) -> ! {
    close_all_but(listener, first);
    // Its own session: a terminal's signals to the starting command's
    // process group do not end it early (nothing would break; the sockets
    // would close at its death).
    libc::setsid();
    let fl = libc::fcntl(listener, libc::F_GETFL);
    libc::fcntl(listener, libc::F_SETFL, fl | libc::O_NONBLOCK);
    let mut held = [0 as RawFd; HOLD];
    held[0] = first;
    let mut n = 1;
    let nap = libc::timespec {
        tv_sec: 0,
        tv_nsec: QUIET_MS as libc::c_long * 1_000_000,
    };
    loop {
        libc::nanosleep(&nap, std::ptr::null_mut());
        let mut got = 0;
        loop {
            let c = libc::accept4(
                listener,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_CLOEXEC,
            );
            if c < 0 {
                if *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                break;
            }
            got += 1;
            if let Some(fd) = recv_fd(c) {
                if n == HOLD {
                    for &h in &held[..n] {
                        libc::close(h);
                    }
                    n = 0;
                }
                held[n] = fd;
                n += 1;
            }
            libc::close(c);
        }
        if got == 0 {
            break;
        }
    }
    // Stop taking sockets before closing them: a program that connects
    // from now on starts a new closer. (A socket sent on a connection not
    // accepted yet is closed by the kernel with the listener.)
    libc::close(listener);
    for &h in &held[..n] {
        libc::close(h);
    }
    libc::_exit(0)
}

/// One descriptor received on `c` (any others in the message are closed).
unsafe fn recv_fd(c: RawFd) -> Option<RawFd> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut cbuf = [0u64; 8];
    let mut m: libc::msghdr = std::mem::zeroed();
    m.msg_iov = &mut iov;
    m.msg_iovlen = 1;
    m.msg_control = cbuf.as_mut_ptr().cast();
    m.msg_controllen = std::mem::size_of_val(&cbuf) as _;
    if libc::recvmsg(c, &mut m, libc::MSG_CMSG_CLOEXEC) < 0 {
        return None;
    }
    let mut got = None;
    let mut h = libc::CMSG_FIRSTHDR(&m);
    while !h.is_null() {
        if (*h).cmsg_level == libc::SOL_SOCKET && (*h).cmsg_type == libc::SCM_RIGHTS {
            let k = ((*h).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / 4;
            for i in 0..k {
                let fd = std::ptr::read_unaligned(libc::CMSG_DATA(h).cast::<RawFd>().add(i));
                if got.is_none() {
                    got = Some(fd);
                } else {
                    libc::close(fd);
                }
            }
        }
        h = libc::CMSG_NXTHDR(&m, h);
    }
    got
}

//! The packet suite's traffic generator: std sockets in threads, each
//! thread moved into a network namespace with `setns(CLONE_NEWNET)` (a
//! network namespace belongs to the thread, so the harness's own threads
//! stay where they are) and optionally pinned to one CPU with
//! `sched_setaffinity` (what `taskset` does).
//!
//! - [`tcp_bulk`]: one connection, the client writes 128 KiB buffers for
//!   the duration, then closes; throughput is what the server read, from
//!   its first byte to end of stream.
//! - [`udp_flood`]: one connected UDP socket sends 64-byte IP packets
//!   (36-byte payload) for the duration; the rate is what reached the
//!   server's socket over the client's sending time: the datagrams the
//!   server thread read plus those the kernel dropped at its full receive
//!   buffer (the namespace's `RcvbufErrors`/`MemErrors` counters), so a
//!   server thread short of CPU does not pass for a slow firewall. Send
//!   errors (a full queue) are counted, not fatal.
//! - [`tcp_connects`]: new connections one after the other for the
//!   duration, each opened and reset by the client; the rate is the
//!   connections opened per second of the client's time (what the first
//!   packet of a connection costs, with the handshake around it).
//!   [`landed`] says at which local address a few of them arrived.
//! - [`probe`]: whether one connection (TCP) or any of three datagrams (UDP)
//!   gets through within a wait, for the pass/drop checks.
//!
//! Every blocking call has a timeout (the limit), so a firewall that drops
//! everything ends in an error, never a hang.

use super::rules::Proto;
use rustix::net::sockopt;
use rustix::thread::{sched_setaffinity, CpuSet};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

/// UDP payload of a 64-byte IPv4 packet (20 IP + 8 UDP + 36).
pub const UDP_PAYLOAD: usize = 36;
const TCP_CHUNK: usize = 128 << 10;

/// Where a thread runs: a namespace file (`/run/netns/NAME`) and a CPU.
#[derive(Clone, Debug)]
pub struct Place {
    pub ns: PathBuf,
    pub cpu: Option<usize>,
}

/// Pins the calling thread to `cpu` (below [`CpuSet::MAX_CPU`], 1024).
pub fn pin(cpu: usize) -> io::Result<()> {
    if cpu >= CpuSet::MAX_CPU {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "cpu >= 1024"));
    }
    let mut mask = CpuSet::new();
    mask.set(cpu);
    // No PID: the calling thread.
    sched_setaffinity(None, &mask)?;
    Ok(())
}

fn enter(p: &Place) -> io::Result<()> {
    crate::netns::enter(&p.ns)?;
    if let Some(cpu) = p.cpu {
        pin(cpu)?;
    }
    Ok(())
}

/// Runs `f` on a new thread inside `p`.
fn spawn_in<T: Send + 'static>(
    p: &Place,
    f: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> thread::JoinHandle<io::Result<T>> {
    let p = p.clone();
    thread::spawn(move || {
        enter(&p)?;
        f()
    })
}

fn join<T>(h: thread::JoinHandle<io::Result<T>>, who: &str) -> Result<T, String> {
    match h.join() {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(format!("{who}: {e}")),
        Err(_) => Err(format!("{who}: thread panicked")),
    }
}

/// Sets the flag when dropped, so the peer stops waiting even when the
/// thread fails early.
struct Done(Arc<AtomicBool>);

impl Drop for Done {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// How long a server thread may take to listen: on a loaded machine a new
/// thread can wait long for a CPU, which says nothing about the path.
const READY: Duration = Duration::from_secs(10);

/// Starts a server thread, waits until it is listening, then runs the
/// client thread; both results, the server's first.
fn pair<S: Send + 'static, C: Send + 'static>(
    client: &Place,
    server: &Place,
    limit: Duration,
    srv: impl FnOnce(mpsc::Sender<()>, Arc<AtomicBool>) -> io::Result<S> + Send + 'static,
    cli: impl FnOnce() -> io::Result<C> + Send + 'static,
) -> Result<(S, C), String> {
    let (tx, rx) = mpsc::channel();
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let s = spawn_in(server, move || srv(tx, d));
    if rx.recv_timeout(limit.max(READY)).is_err() {
        done.store(true, Ordering::SeqCst);
        return Err(join(s, "server").err().unwrap_or("server not ready".into()));
    }
    let flag = Done(done);
    let c = spawn_in(client, move || {
        let _flag = flag;
        cli()
    });
    let c = join(c, "client");
    let s = join(s, "server");
    Ok((s?, c?))
}

/// What the server of a TCP bulk transfer read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpResult {
    pub bytes: u64,
    pub secs: f64,
}

impl TcpResult {
    /// Gbit/s, when something arrived.
    pub fn gbits(&self) -> Option<f64> {
        (self.bytes > 0 && self.secs > 0.0).then(|| self.bytes as f64 * 8.0 / self.secs / 1e9)
    }
}

/// What the client of a UDP flood sent and the server's socket got.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UdpResult {
    pub sent: u64,
    pub send_errors: u64,
    /// Read by the server thread.
    pub received: u64,
    /// Dropped by the kernel at the server socket's full receive buffer
    /// (past the firewall).
    pub buffer_drops: u64,
    /// The client's sending time.
    pub secs: f64,
}

impl UdpResult {
    /// Packets per second that reached the server's socket, when any did.
    pub fn pps(&self) -> Option<f64> {
        let n = self.received + self.buffer_drops;
        (self.received > 0 && self.secs > 0.0).then(|| n as f64 / self.secs)
    }
}

/// `RcvbufErrors + MemErrors` of the `Udp:` lines of a `/proc/net/snmp`
/// text (a header line of names, then a line of values).
pub fn udp_buffer_drops(snmp: &str) -> Option<u64> {
    let mut lines = snmp.lines().filter(|l| l.starts_with("Udp:"));
    let names: Vec<&str> = lines.next()?.split_whitespace().collect();
    let values: Vec<&str> = lines.next()?.split_whitespace().collect();
    let get = |name: &str| -> Option<u64> {
        let i = names.iter().position(|n| *n == name)?;
        values.get(i)?.parse().ok()
    };
    Some(get("RcvbufErrors")? + get("MemErrors").unwrap_or(0))
}

/// The calling thread's namespace's UDP buffer drops.
fn buffer_drops_here() -> io::Result<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/net/snmp")?;
    udp_buffer_drops(&text)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no Udp: counters"))
}

/// Accepts one connection, giving up when `stop` is set or after `limit`.
/// How long a server waits for its port: the server of the step before
/// (same namespace, same port) may still be closing.
const PORT_FREE: Duration = Duration::from_secs(3);

/// `bind` on `port`, retried while the port is still taken (EADDRINUSE)
/// for up to [`PORT_FREE`].
fn bind_retry<T>(port: u16, bind: impl Fn(u16) -> io::Result<T>) -> io::Result<T> {
    let t0 = Instant::now();
    loop {
        match bind(port) {
            Err(e) if e.kind() == io::ErrorKind::AddrInUse && t0.elapsed() < PORT_FREE => {
                thread::sleep(Duration::from_millis(20));
            }
            r => return r,
        }
    }
}

fn accept(l: &TcpListener, stop: &AtomicBool, limit: Duration) -> io::Result<TcpStream> {
    l.set_nonblocking(true)?;
    let t0 = Instant::now();
    loop {
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false)?;
                return Ok(s);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if stop.load(Ordering::SeqCst) || t0.elapsed() > limit {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "no connection"));
                }
                thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(e),
        }
    }
}

/// A TCP bulk transfer from `client` to `dst` for `dur`; the server
/// listens on `listen` (`dst`'s port unless a DNAT rule changes it).
pub fn tcp_bulk(
    client: &Place,
    server: &Place,
    dst: SocketAddrV4,
    listen: u16,
    dur: Duration,
    limit: Duration,
) -> Result<TcpResult, String> {
    let srv = move |ready: mpsc::Sender<()>, stop: Arc<AtomicBool>| {
        let l = bind_retry(listen, |p| TcpListener::bind(("0.0.0.0", p)))?;
        let _ = ready.send(());
        let mut s = accept(&l, &stop, limit)?;
        s.set_read_timeout(Some(limit))?;
        let mut buf = vec![0u8; 256 << 10];
        let (mut bytes, mut t0) = (0u64, None);
        loop {
            let k = s.read(&mut buf)?;
            if k == 0 {
                break;
            }
            t0.get_or_insert_with(Instant::now);
            bytes += k as u64;
        }
        let secs = t0.map_or(0.0, |t: Instant| t.elapsed().as_secs_f64());
        Ok(TcpResult { bytes, secs })
    };
    let cli = move || {
        let mut s = TcpStream::connect_timeout(&SocketAddr::V4(dst), limit.min(CONNECT))?;
        s.set_write_timeout(Some(limit))?;
        let buf = vec![0x5au8; TCP_CHUNK];
        let t0 = Instant::now();
        while t0.elapsed() < dur {
            s.write_all(&buf)?;
        }
        s.shutdown(Shutdown::Write)
    };
    let (r, ()) = pair(client, server, limit, srv, cli)?;
    Ok(r)
}

/// How long a connection may take to open before the path counts as closed.
const CONNECT: Duration = Duration::from_secs(2);

/// A flood of 64-byte UDP packets from `client` to `dst` for `dur`.
pub fn udp_flood(
    client: &Place,
    server: &Place,
    dst: SocketAddrV4,
    dur: Duration,
    limit: Duration,
) -> Result<UdpResult, String> {
    let srv = move |ready: mpsc::Sender<()>, done: Arc<AtomicBool>| {
        let s = bind_retry(dst.port(), |p| UdpSocket::bind(("0.0.0.0", p)))?;
        // Short, so the end of the flood is noticed soon after the client's.
        s.set_read_timeout(Some(Duration::from_millis(20)))?;
        let drops0 = buffer_drops_here()?;
        let _ = ready.send(());
        let mut buf = [0u8; 2048];
        let mut n = 0u64;
        let t0 = Instant::now();
        loop {
            match s.recv(&mut buf) {
                Ok(_) => n += 1,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    // Idle: the client finished (or never got through).
                    if done.load(Ordering::SeqCst) {
                        break;
                    }
                }
                Err(e) => return Err(e),
            }
            if t0.elapsed() > limit {
                break;
            }
        }
        Ok((n, buffer_drops_here()?.saturating_sub(drops0)))
    };
    let cli = move || {
        let s = UdpSocket::bind("0.0.0.0:0")?;
        s.connect(dst)?;
        let payload = [0x5au8; UDP_PAYLOAD];
        let (mut sent, mut errors) = (0u64, 0u64);
        let t0 = Instant::now();
        // The clock is read every 64 sends: a send costs about a
        // microsecond, a clock read a few percent of that.
        'outer: loop {
            for _ in 0..64 {
                match s.send(&payload) {
                    Ok(_) => sent += 1,
                    Err(_) => errors += 1,
                }
            }
            if t0.elapsed() >= dur {
                break 'outer;
            }
        }
        Ok((sent, errors, t0.elapsed().as_secs_f64()))
    };
    let ((received, buffer_drops), (sent, send_errors, secs)) =
        pair(client, server, limit, srv, cli)?;
    Ok(UdpResult {
        sent,
        send_errors,
        received,
        buffer_drops,
        secs,
    })
}

/// What the client of a connection flood opened.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConnResult {
    /// Connections the client opened (handshake complete).
    pub opened: u64,
    /// Connection attempts that failed or timed out.
    pub failed: u64,
    /// Connections the server accepted.
    pub accepted: u64,
    /// The client's time.
    pub secs: f64,
}

impl ConnResult {
    /// Connections opened per second, when any was.
    pub fn rate(&self) -> Option<f64> {
        (self.opened > 0 && self.secs > 0.0).then(|| self.opened as f64 / self.secs)
    }
}

/// How long the server's `accept` blocks before it looks at the flag.
const ACCEPT_WAIT: Duration = Duration::from_millis(20);

/// The accept queue of a connection flood's listener (the kernel caps it
/// at the namespace's `net.core.somaxconn`): connections the server
/// thread has yet to accept. When it is full the kernel drops SYNs and
/// the client waits a second for its retransmission, so a server thread
/// kept off its CPU for a while must not stall the flood; at 65535 and
/// 15 000 connections per second that takes four seconds.
const BACKLOG: i32 = 65_535;

/// A listener on `port` with [`BACKLOG`] (a second `listen` sets it)
/// whose `accept` gives up after [`ACCEPT_WAIT`] (Linux's `accept`
/// honours `SO_RCVTIMEO`).
fn timed_listener(port: u16) -> io::Result<TcpListener> {
    let l = bind_retry(port, |p| TcpListener::bind(("0.0.0.0", p)))?;
    rustix::net::listen(&l, BACKLOG)?;
    sockopt::set_socket_timeout(&l, sockopt::Timeout::Recv, Some(ACCEPT_WAIT))?;
    Ok(l)
}

/// How long the server waits for the client's reset of a connection.
const RESET_WAIT: Duration = Duration::from_millis(200);

/// Accepts until the client is done and the queue is empty (or `limit`),
/// calling `each` with every accepted connection, then waiting (up to
/// [`RESET_WAIT`]) for the client's reset before dropping it. The client
/// resets first so that neither end keeps the 4-tuple in TIME_WAIT and
/// the client never sees a reset of its connect; and conntrack lets a
/// SYN reopen a 4-tuple whose entry a reset of the same direction closed,
/// so when the client's port comes round again the old entry gives way
/// to a new one (the SYN walks the nat table), where after a reset from
/// the server it would take the SYN into the old entry, the old
/// translation. A server end still open after the wait is dropped with a
/// reset (`SO_LINGER` 0), not a FIN and its TIME_WAIT.
fn accept_all(
    l: &TcpListener,
    done: &AtomicBool,
    limit: Duration,
    mut each: impl FnMut(&TcpStream) -> io::Result<()>,
) -> io::Result<()> {
    let t0 = Instant::now();
    loop {
        match l.accept() {
            Ok((s, _)) => {
                sockopt::set_socket_linger(&s, Some(Duration::ZERO))?;
                s.set_read_timeout(Some(RESET_WAIT))?;
                each(&s)?;
                // Any end will do: the reset (an error), or the wait's.
                let _ = (&s).read(&mut [0u8; 1]);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if done.load(Ordering::SeqCst) {
                    return Ok(());
                }
            }
            Err(e) => return Err(e),
        }
        if t0.elapsed() > limit {
            return Ok(());
        }
    }
}

/// Opens a connection to `dst` and closes it with a reset: `SO_LINGER`
/// of 0 frees the client's port at once (no TIME_WAIT), so a flood never
/// runs out of ports. `Ok(false)`: the path answered with no connection
/// within `wait`: silence, a refusal or reset, or an ICMP unreachable (a
/// namespace that does not forward answers one for an address it does
/// not own, rate-limited, so sometimes and sometimes not).
fn open_and_reset(dst: SocketAddrV4, wait: Duration) -> io::Result<bool> {
    use io::ErrorKind as K;
    match TcpStream::connect_timeout(&SocketAddr::V4(dst), wait) {
        Ok(s) => {
            sockopt::set_socket_linger(&s, Some(Duration::ZERO))?;
            Ok(true)
        }
        Err(e)
            if matches!(
                e.kind(),
                K::TimedOut
                    | K::ConnectionRefused
                    | K::ConnectionReset
                    | K::HostUnreachable
                    | K::NetworkUnreachable
            ) =>
        {
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// New TCP connections from `client` to `dst` for `dur`, one after the
/// other, each opened and reset (see [`open_and_reset`]); the server
/// listens on `listen` and accepts and drops them. Each connection is a
/// new 4-tuple, so its SYN is the first packet of a new conntrack entry
/// on a path that tracks connections.
pub fn tcp_connects(
    client: &Place,
    server: &Place,
    dst: SocketAddrV4,
    listen: u16,
    dur: Duration,
    limit: Duration,
) -> Result<ConnResult, String> {
    let srv = move |ready: mpsc::Sender<()>, done: Arc<AtomicBool>| {
        let l = timed_listener(listen)?;
        let _ = ready.send(());
        let mut n = 0u64;
        accept_all(&l, &done, limit, |_| {
            n += 1;
            Ok(())
        })?;
        Ok(n)
    };
    let cli = move || {
        let (mut opened, mut failed) = (0u64, 0u64);
        let t0 = Instant::now();
        while t0.elapsed() < dur {
            if open_and_reset(dst, limit.min(CONNECT))? {
                opened += 1;
            } else {
                failed += 1;
            }
        }
        Ok((opened, failed, t0.elapsed().as_secs_f64()))
    };
    let (accepted, (opened, failed, secs)) = pair(client, server, limit, srv, cli)?;
    Ok(ConnResult {
        opened,
        failed,
        accepted,
        secs,
    })
}

/// Where `count` connections from `client` to `dst` landed: the local
/// address of each connection the server (listening on `listen`)
/// accepted, in order; a connection not opened within `wait` ends the
/// attempts.
pub fn landed(
    client: &Place,
    server: &Place,
    dst: SocketAddrV4,
    listen: u16,
    count: usize,
    wait: Duration,
) -> Result<Vec<SocketAddr>, String> {
    let limit = READY + wait * count as u32;
    let srv = move |ready: mpsc::Sender<()>, done: Arc<AtomicBool>| {
        let l = timed_listener(listen)?;
        let _ = ready.send(());
        let mut at = Vec::with_capacity(count);
        accept_all(&l, &done, limit, |s| {
            at.push(s.local_addr()?);
            Ok(())
        })?;
        Ok(at)
    };
    let cli = move || {
        for _ in 0..count {
            if !open_and_reset(dst, wait)? {
                break;
            }
        }
        Ok(())
    };
    pair(client, server, limit, srv, cli).map(|(at, ())| at)
}

/// Whether traffic of `proto` from `client` reaches `dst` within `wait`:
/// a TCP connection opens within `wait`, or one of three datagrams arrives
/// by `wait` after the client sent them.
pub fn probe(
    client: &Place,
    server: &Place,
    proto: Proto,
    dst: SocketAddrV4,
    wait: Duration,
) -> Result<bool, String> {
    // The server outlives a client that is slow to get a CPU.
    let limit = READY + wait;
    match proto {
        Proto::Tcp => {
            let srv = move |ready: mpsc::Sender<()>, done: Arc<AtomicBool>| {
                let _l = bind_retry(dst.port(), |p| TcpListener::bind(("0.0.0.0", p)))?;
                let _ = ready.send(());
                let t0 = Instant::now();
                while !done.load(Ordering::SeqCst) && t0.elapsed() < limit {
                    thread::sleep(Duration::from_millis(1));
                }
                Ok(())
            };
            let cli = move || match TcpStream::connect_timeout(&SocketAddr::V4(dst), wait) {
                Ok(_) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::TimedOut => Ok(false),
                Err(e) => Err(e),
            };
            pair(client, server, limit, srv, cli).map(|((), ok)| ok)
        }
        Proto::Udp => {
            let srv = move |ready: mpsc::Sender<()>, done: Arc<AtomicBool>| {
                let s = bind_retry(dst.port(), |p| UdpSocket::bind(("0.0.0.0", p)))?;
                s.set_read_timeout(Some(Duration::from_millis(10)))?;
                let _ = ready.send(());
                let mut buf = [0u8; 64];
                let (t0, mut sent_at) = (Instant::now(), None);
                loop {
                    match s.recv(&mut buf) {
                        Ok(_) => return Ok(true),
                        Err(e)
                            if matches!(
                                e.kind(),
                                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                            ) => {}
                        Err(e) => return Err(e),
                    }
                    if done.load(Ordering::SeqCst) {
                        let at = *sent_at.get_or_insert_with(Instant::now);
                        if at.elapsed() >= wait {
                            return Ok(false);
                        }
                    }
                    if t0.elapsed() > limit {
                        return Ok(false);
                    }
                }
            };
            let cli = move || {
                let s = UdpSocket::bind("0.0.0.0:0")?;
                s.connect(dst)?;
                for _ in 0..3 {
                    // A refused send (an ICMP error from a previous one) is
                    // an answer too; the server's count decides.
                    let _ = s.send(b"probe");
                    thread::sleep(Duration::from_millis(5));
                }
                Ok(())
            };
            pair(client, server, limit, srv, cli).map(|(ok, ())| ok)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netns::{is_root, Netns};
    use std::net::Ipv4Addr;

    #[test]
    fn rates() {
        let t = TcpResult {
            bytes: 1_250_000_000,
            secs: 2.0,
        };
        assert_eq!(t.gbits(), Some(5.0));
        let none = TcpResult {
            bytes: 0,
            secs: 1.0,
        };
        assert_eq!(none.gbits(), None);
        let u = UdpResult {
            sent: 1000,
            send_errors: 0,
            received: 400,
            buffer_drops: 100,
            secs: 0.5,
        };
        assert_eq!(u.pps(), Some(1000.0));
        let nothing_read = UdpResult { received: 0, ..u };
        assert_eq!(nothing_read.pps(), None, "drops alone do not prove a path");
    }

    #[test]
    fn snmp_counters() {
        let names = "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors";
        let cases: [(String, Option<u64>); 4] = [
            (
                format!("Ip: 1 2\nIp: 3 4\n{names}\nUdp: 63 0 9 65 7 0 0 0 2\nUdpLite: x\n"),
                Some(9),
            ),
            // An older kernel without MemErrors.
            ("Udp: InDatagrams RcvbufErrors\nUdp: 5 3\n".into(), Some(3)),
            ("Udp: InDatagrams NoPorts\nUdp: 5 3\n".into(), None),
            ("Tcp: RtoAlgorithm\nTcp: 1\n".into(), None),
        ];
        for (text, want) in cases {
            assert_eq!(udp_buffer_drops(&text), want, "{text}");
        }
    }

    /// Loopback inside one private namespace: both generators move data,
    /// probes pass, and a probe to an unroutable address is an error.
    #[test]
    fn loopback_in_a_namespace_root() {
        if !is_root() {
            eprintln!("skipped: needs root for network namespaces");
            return;
        }
        let ns = Netns::new().expect("namespace");
        let lim = Duration::from_secs(5);
        let up = ns
            .run(&["ip", "link", "set", "lo", "up"], None, lim)
            .unwrap();
        assert!(up.status.success(), "{}", up.stderr);
        let p = Place {
            ns: PathBuf::from("/run/netns").join(ns.name()),
            cpu: None,
        };
        let dst = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 4242);
        let dur = Duration::from_millis(200);
        let t = tcp_bulk(&p, &p, dst, dst.port(), dur, lim).unwrap();
        assert!(t.gbits().unwrap() > 0.01, "{t:?}");
        let u = udp_flood(&p, &p, dst, dur, lim).unwrap();
        assert!(u.pps().unwrap() > 1000.0, "{u:?}");
        assert!(u.received <= u.sent, "{u:?}");
        let wait = Duration::from_millis(200);
        assert!(probe(&p, &p, Proto::Tcp, dst, wait).unwrap());
        assert!(probe(&p, &p, Proto::Udp, dst, wait).unwrap());
        // 192.0.2.1 (TEST-NET) has no route in the namespace: an error, not
        // a pass.
        let nowhere = SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 1), 4242);
        assert!(probe(&p, &p, Proto::Tcp, nowhere, wait).is_err());
    }
}

//! Requests over a netlink connection: commit [`Batch`]es, run dumps and
//! single gets, read the generation. The datagrams go through a
//! [`Transport`] ([`crate::transport`]): the real `NETLINK_NETFILTER`
//! socket from [`Socket::open`], or any other with
//! [`Socket::with_transport`].
//!
//! Facts this module relies on (measured on kernel 6.18, see the crate's
//! tests and `examples/floor.rs`):
//! - A batch must arrive in ONE `send`: nfnetlink processes one skb as a
//!   batch and aborts a batch whose end message is not in it. The only size
//!   limit is the socket's send buffer (`len <= sk_sndbuf - 32`, else
//!   `EMSGSIZE`); `SO_SNDBUFFORCE` (root/CAP_NET_ADMIN) raises it past
//!   `wmem_max`, up to ~2 GiB (the kernel doubles the value and caps at
//!   `INT_MAX`). The kernel copies the batch into one (vmalloc'ed) skb.
//! - Kernel-side netlink processing is synchronous: when `send` returns, the
//!   batch has been committed or aborted and all replies are queued on our
//!   socket. Messages after the batch-end in the same skb are ignored (no
//!   reply), and a batch split over two sends is dropped (the first part
//!   silently, the lone end with `EINVAL`).
//! - Completion: `NLM_F_ACK` on the batch-end message is acknowledged only
//!   when the transaction commits; a failed batch yields its errors and no
//!   end ACK; a generation mismatch yields only `ERESTART` on the begin
//!   message. So [`Socket::commit`] requests no per-message ACK, reads until
//!   the end ACK (success) or an error (failure), and then drains what is
//!   queued without blocking. One send, usually one recv. Per-message ACKs
//!   would be worse than noise: the kernel ACKs successful messages of a
//!   batch that is then aborted.
//! - Sizes measured: a 464.5 MB batch (1M rules) goes in one `send` and
//!   commits in ~15 s; the kernel refuses nothing below `sk_sndbuf`.
//! - Dumps: the kernel fills skbs of at most 32 KiB (~70 rules) and restarts
//!   its walk of the chain from the first rule for every skb, so dumping one
//!   chain of n rules costs O(n^2) in the kernel: 50k rules 0.39 s, 200k
//!   rules 22 s on this VM. Nothing user space does changes that beyond
//!   offering a >= 32 KiB receive buffer (done); keep long chains cached.
//! - Errors are delivered once, after the whole batch has been processed,
//!   one `NLMSG_ERROR` per failing message with that message's sequence
//!   number; a generation mismatch (`ERESTART`) is reported on the
//!   batch-begin message, a failure of the commit itself on the first
//!   message after it (checked by `crates/fakekernel`'s differential
//!   test). `NETLINK_CAP_ACK` keeps error messages small (the failing
//!   request is not copied back).

use std::io;

use crate::batch::{Batch, Outcome};
use crate::netlink::{self, Msg, Msgs, NLMSG_DONE, NLMSG_ERROR, NLM_F_DUMP, NLM_F_DUMP_INTR};
use crate::transport::{is_overrun, Netlink, Transport};
use crate::{msg, Chain, Error, Family, Gen, Object, RuleRef, Set, SetElem, SetElems, Table};

/// Receive buffer size (bytes). Dump skbs are at most 32 KiB; echo
/// notifications are coalesced into skbs of about a page.
const RBUF: usize = 256 * 1024;
const MIN_RCVBUF: usize = 4 << 20;
/// A dump reply shorter than this (bytes) is the kernel's last with data:
/// it fills each to ~16–32 KiB while it has objects left.
const SHORT_REPLY: usize = 8 * 1024;

/// A netlink connection for nf_tables requests. Owns its transport and a
/// receive buffer reused across calls. Build one batch at a time per socket
/// ([`Socket::batch`] hands out the sequence numbers).
pub struct Socket {
    transport: Box<dyn Transport>,
    rbuf: Vec<u8>,
    seq: u32,
    sndbuf: usize,
    rcvbuf: usize,
    /// Scratch for small requests.
    req: Vec<u8>,
    /// A committed batch left objects to the kernel's deferred
    /// destruction, so the last close of this socket waits a grace period
    /// (see [`crate::linger`]).
    frees: bool,
}

/// Result of a batch commit plus how the socket fared.
#[derive(Debug, Default)]
pub struct CommitReport {
    pub outcome: Outcome,
    /// The receive queue overflowed (`ENOBUFS`): some replies were lost, so
    /// a batch with no error seen may still have failed. Reconcile by
    /// re-reading state.
    pub overrun: bool,
}

impl Socket {
    /// Opens and binds a `NETLINK_NETFILTER` socket in the calling thread's
    /// network namespace.
    pub fn open() -> Result<Socket, Error> {
        Socket::with_transport(Box::new(Netlink::open_requests()?))
    }

    /// A socket over any transport (see [`crate::transport`]): the real
    /// netlink socket, or an in-memory kernel in tests. Sizes the
    /// transport's buffers as [`Socket::open`] does.
    pub fn with_transport(transport: Box<dyn Transport>) -> Result<Socket, Error> {
        let mut s = Socket {
            transport,
            rbuf: vec![0; RBUF],
            seq: 0,
            sndbuf: 0,
            rcvbuf: 0,
            req: Vec::new(),
            frees: false,
        };
        s.seq = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as u32)
            .unwrap_or(1);
        s.ensure_bufs(1 << 20, MIN_RCVBUF)?;
        Ok(s)
    }

    /// The netlink port id the kernel gave this socket. The kernel puts it
    /// in `nlmsg_pid` of every notification about a change this socket
    /// committed, which is how an event listener tells its own changes from
    /// others' (see [`crate::events`]).
    /// The namespace's cookie (see [`Transport::netns_cookie`]).
    pub fn netns_cookie(&self) -> Option<u64> {
        self.transport.netns_cookie()
    }

    /// Another socket to the same kernel namespace, for requests on another
    /// thread (see [`Transport::sibling`]); `None` when the transport
    /// cannot open one.
    pub fn sibling(&self) -> Option<Socket> {
        Socket::with_transport(self.transport.sibling()?).ok()
    }

    pub fn portid(&self) -> u32 {
        self.transport.portid()
    }

    /// Raises the kernel socket buffers to at least `snd`/`rcv` bytes
    /// (FORCE variants, falling back to the capped ones without privilege).
    fn ensure_bufs(&mut self, snd: usize, rcv: usize) -> io::Result<()> {
        if snd > self.sndbuf {
            self.transport.set_sndbuf(snd)?;
            self.sndbuf = snd;
        }
        if rcv > self.rcvbuf {
            self.transport.set_rcvbuf(rcv)?;
            self.rcvbuf = rcv;
        }
        Ok(())
    }

    /// Starts a batch numbered from this socket's sequence counter.
    pub fn batch(&mut self, genid: Option<u32>) -> Batch {
        Batch::new(self.seq, genid)
    }

    /// Sends `bytes` in one `send` call.
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.ensure_bufs(bytes.len() + 4096, 0)?;
        Ok(self.transport.send(bytes)?)
    }

    /// Receives one datagram into the reused buffer and returns its length.
    /// `Ok(None)` when `nonblock` and nothing is queued. `ENOBUFS` (the
    /// kernel dropped replies for lack of receive buffer) is an `Err`.
    pub fn recv_raw(&mut self, nonblock: bool) -> Result<Option<usize>, Error> {
        let Some(n) = self.transport.recv(&mut self.rbuf, nonblock)? else {
            return Ok(None);
        };
        if n > self.rbuf.len() {
            return Err(Error::Io(io::Error::other(
                "netlink datagram larger than receive buffer",
            )));
        }
        Ok(Some(n))
    }

    /// The received bytes of the last [`Socket::recv_raw`].
    pub fn received(&self, n: usize) -> &[u8] {
        &self.rbuf[..n]
    }

    /// Commits `batch` (finishing it first) and returns once the kernel's
    /// verdict is known: `outcome.committed` with the end ACK, else the
    /// errors mapped to tags. `Err` means the exchange itself failed (if the
    /// send succeeded, the batch's fate is then unknown).
    pub fn commit(&mut self, batch: &mut Batch) -> Result<CommitReport, Error> {
        let n_msgs = batch.len();
        let bytes = batch.finish();
        // Errors are ~40 bytes of payload but cost ~1 KiB of skb truesize
        // each; size the receive buffer so that a batch whose messages all
        // fail (or all echo) still fits.
        let rcv = (n_msgs.saturating_mul(1024)).clamp(MIN_RCVBUF, 1 << 30);
        self.ensure_bufs(bytes.len() + 4096, rcv)?;
        self.send_raw(bytes)?;
        self.seq = batch.last_seq().wrapping_add(1);
        let mut report = CommitReport::default();
        // Blocking until a verdict, then non-blocking: every reply was queued
        // before `send` returned.
        let mut nonblock = false;
        loop {
            let n = match self.recv_raw(nonblock) {
                Ok(Some(n)) => n,
                Ok(None) => return Ok(report),
                Err(Error::Io(e)) if is_overrun(&e) => {
                    // Replies were dropped; collect what is left.
                    report.overrun = true;
                    nonblock = true;
                    continue;
                }
                Err(e) => return Err(e),
            };
            for m in Msgs::new(&self.rbuf[..n]) {
                batch.absorb(&m?, &mut report.outcome)?;
            }
            nonblock |= report.outcome.committed || !report.outcome.errors.is_empty();
            self.frees |= report.outcome.committed && batch.defers_destruction();
        }
    }

    /// Whether a batch committed on this socket left objects to the
    /// kernel's deferred destruction (see [`Batch::defers_destruction`]):
    /// what makes the socket's last close wait a grace period.
    pub fn defers_destruction(&self) -> bool {
        self.frees
    }

    /// For a program about to end: the socket's last close is handed to
    /// the closer of this namespace ([`crate::linger`]) so that the
    /// program's exit never waits for the kernel's deferred destruction.
    /// When a batch committed here left objects to that destruction, a
    /// closer is started if none runs; otherwise the socket goes to a
    /// closer only if one already runs (then destruction is likely pending,
    /// from a burst of commands). Nothing happens for a transport without a
    /// descriptor. Call at most once.
    pub fn close_after_exit(&mut self) {
        let Some(fd) = self.transport.raw_fd() else {
            return;
        };
        // On failure the socket closes at exit as usual.
        let _ = if std::mem::take(&mut self.frees) {
            crate::linger::hand_off(fd).map(|_| ())
        } else {
            crate::linger::hand_off_if_running(fd)
        };
    }

    /// Runs a dump request (`NFT_MSG_GET*` with `NLM_F_DUMP`) and calls `f`
    /// for each reply message. Returns `DumpInterrupted` (after draining) if
    /// the kernel flagged the dump as inconsistent.
    pub fn dump_raw(
        &mut self,
        msg_type: u16,
        family: Family,
        build: impl FnOnce(&mut netlink::Writer),
        mut f: impl FnMut(&Msg) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.dump_datagrams(msg_type, family, build, |seq, dg| {
            for m in Msgs::new(dg) {
                let m = m?;
                if m.seq == seq && m.ty >= 0x10 {
                    f(&m)?;
                }
            }
            Ok(())
        })
    }

    /// [`Socket::dump_raw`] by datagram: `each(seq, datagram)` for every
    /// received datagram holding a reply of this dump (`seq`: its sequence
    /// number; the datagram may also hold its `NLMSG_DONE`, which `each`
    /// skips like any message below type 0x10). After an error of `each`
    /// the rest is drained (the socket stays clean) and that error
    /// returned; a kernel error (`NLMSG_ERROR`) is returned at once.
    pub fn dump_datagrams(
        &mut self,
        msg_type: u16,
        family: Family,
        build: impl FnOnce(&mut netlink::Writer),
        mut each: impl FnMut(u32, &[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let seq = self.start_dump(msg_type, family, build)?;
        self.dump_rest(seq, false, None, |dg| each(seq, dg))
    }

    /// The rest of dump `seq`, received on this thread to its DONE: each
    /// datagram holding replies goes to `each` until one call fails
    /// (`failed`: an earlier failure); reading goes on to DONE all the
    /// same, so the socket is clean for the next request. `intr`: an
    /// earlier datagram was flagged interrupted.
    fn dump_rest(
        &mut self,
        seq: u32,
        mut intr: bool,
        mut failed: Option<Error>,
        mut each: impl FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        loop {
            let n = self.recv_raw(false)?.ok_or(Error::Truncated)?;
            let (done, data) = dump_step(&self.rbuf[..n], seq, &mut intr)?;
            if data && failed.is_none() {
                failed = each(&self.rbuf[..n]).err();
            }
            if done {
                return dump_end(failed, intr);
            }
        }
    }

    /// [`Socket::dump_datagrams`] (same results and errors) in two steps
    /// per reply datagram: `map(seq, datagram)` makes a `T` of it, then
    /// `each(t)` takes it. Once the first reply shows that more follow,
    /// the receiving and `map` run on a scoped thread: the kernel builds
    /// each next reply (in that thread's `recv`) and it is mapped while
    /// `each` works on the last one. For dumps of many replies whose every
    /// reply costs the kernel a walk (a set's elements: the walk restarts
    /// per reply, ~0.2 ms each at 5k elements, as long as their parsing).
    /// A dump whose first reply is short (its last) spawns no thread.
    pub fn dump_overlapped<T: Send>(
        &mut self,
        msg_type: u16,
        family: Family,
        build: impl FnOnce(&mut netlink::Writer),
        map: impl Fn(u32, &[u8]) -> Result<T, Error> + Send + Sync,
        mut each: impl FnMut(T) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let seq = self.start_dump(msg_type, family, build)?;
        let (mut intr, mut failed) = (false, None);
        let n = self.recv_raw(false)?.ok_or(Error::Truncated)?;
        let (done, data) = dump_step(&self.rbuf[..n], seq, &mut intr)?;
        if data {
            failed = map(seq, &self.rbuf[..n]).and_then(&mut each).err();
        }
        if done {
            return dump_end(failed, intr);
        }
        // A first reply well short of a full one means the kernel's walk
        // ran out: what follows is its DONE, not worth a thread (~0.3 ms
        // to start one).
        if n < SHORT_REPLY {
            return self.dump_rest(seq, intr, failed, |dg| map(seq, dg).and_then(&mut each));
        }
        // Mapped replies in flight between the threads.
        const IN_FLIGHT: usize = 8;
        let this = &mut *self;
        let map = &map;
        std::thread::scope(|sc| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Result<T, Error>>(IN_FLIGHT);
            let recv = sc.spawn(move || -> Result<(), Error> {
                loop {
                    let n = this.recv_raw(false)?.ok_or(Error::Truncated)?;
                    let (done, data) = dump_step(&this.rbuf[..n], seq, &mut intr)?;
                    // A closed channel: the calling side is gone; read on
                    // to DONE all the same.
                    if data {
                        let _ = tx.send(map(seq, &this.rbuf[..n]));
                    }
                    if done {
                        return dump_end(None, intr);
                    }
                }
            });
            for t in rx.iter() {
                if failed.is_none() {
                    failed = t.and_then(&mut each).err();
                }
            }
            let received = recv.join().expect("dump thread");
            match (received, failed) {
                (Err(Error::DumpInterrupted), Some(e)) => Err(e),
                (Err(e), _) => Err(e),
                (Ok(()), Some(e)) => Err(e),
                (Ok(()), None) => Ok(()),
            }
        })
    }

    /// Sends dump request `msg_type` (attributes from `build`); returns
    /// its sequence number.
    fn start_dump(
        &mut self,
        msg_type: u16,
        family: Family,
        build: impl FnOnce(&mut netlink::Writer),
    ) -> Result<u32, Error> {
        let seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        self.req.clear();
        netlink::request(
            &mut self.req,
            msg_type,
            NLM_F_DUMP,
            seq,
            family as u8,
            build,
        );
        let req = std::mem::take(&mut self.req);
        let sent = self.send_raw(&req);
        self.req = req;
        sent?;
        Ok(seq)
    }

    fn dump_objects<O: Object>(&mut self, filter: &O) -> Result<Vec<O>, Error> {
        let mut out = Vec::new();
        self.dump_raw(
            O::GET,
            filter.family(),
            |w| filter.emit(w),
            |m| {
                out.push(O::parse_msg(m)?);
                Ok(())
            },
        )?;
        Ok(out)
    }

    /// All tables of `family` (`Family::Unspec`: every family).
    pub fn tables(&mut self, family: Family) -> Result<Vec<Table>, Error> {
        self.dump_objects(&Table {
            family,
            ..Table::default()
        })
    }

    /// Chains of `family`, of one table if `table` is given.
    pub fn chains(&mut self, family: Family, table: Option<&str>) -> Result<Vec<Chain>, Error> {
        self.dump_objects(&Chain::new(family, table.unwrap_or(""), ""))
    }

    /// Stateful objects (of every type) of `family`, of one table if
    /// `table` is given.
    pub fn objects(
        &mut self,
        family: Family,
        table: Option<&str>,
    ) -> Result<Vec<crate::expr::objref::Obj>, Error> {
        use crate::expr::objref::{Obj, ObjData};
        // Type 0 (NFT_OBJECT_UNSPEC) filters no type out.
        let any = ObjData::Other {
            ty: 0,
            data: Vec::new(),
        };
        self.dump_objects(&Obj::new(family, table.unwrap_or(""), "", any))
    }

    /// Sets of `family`, of one table if `table` is given.
    pub fn sets(&mut self, family: Family, table: Option<&str>) -> Result<Vec<Set>, Error> {
        self.dump_objects(&Set::new(family, table.unwrap_or(""), ""))
    }

    /// Elements of one set, each exactly once.
    ///
    /// The kernel resumes an element dump for every reply by skipping as
    /// many elements as it already sent, in the set's current order; a hash
    /// set that resizes between two replies (the kernel grows it in the
    /// background after many adds, e.g. right after a restore) changes that
    /// order, so the dump repeats some elements and leaves as many out. A
    /// repeated element is the sign: such a dump (or one the kernel flags
    /// as interrupted) is read again after a short pause, up to
    /// [`DUMP_TRIES`] times. Cost of the check: a hash per element.
    pub fn set_elems(
        &mut self,
        family: Family,
        table: &str,
        set: &str,
    ) -> Result<Vec<SetElem>, Error> {
        let out = std::cell::RefCell::new(Vec::new());
        self.set_elems_with(
            family,
            table,
            set,
            |es| {
                out.borrow_mut().extend(es);
                Ok(())
            },
            || out.borrow_mut().clear(),
        )?;
        Ok(out.into_inner())
    }

    /// [`Socket::set_elems`], each reply's elements handed to `f` as they
    /// arrive, while the kernel builds the next reply (see
    /// [`Socket::dump_overlapped`]): the caller's work on the elements
    /// overlaps the kernel's walk. A dump read again (see
    /// [`Socket::set_elems`]) first calls `again`, which must forget what
    /// `f` was given. An error of `f` ends the dump and is returned.
    pub fn set_elems_with(
        &mut self,
        family: Family,
        table: &str,
        set: &str,
        mut f: impl FnMut(Vec<SetElem>) -> Result<(), Error>,
        mut again: impl FnMut(),
    ) -> Result<(), Error> {
        let filter = SetElems::new(family, table, set, Vec::new());
        for attempt in 1..=DUMP_TRIES {
            if attempt > 1 {
                again();
            }
            // Hashes of the (key, end marker) pairs seen: a repeat is a
            // repeated pair (a hash collision only costs a second read).
            let mut seen = std::collections::HashSet::new();
            let mut repeats = false;
            let dumped = self.dump_overlapped(
                SetElems::GET,
                family,
                |w| filter.emit(w),
                // The receiving side copies; this side parses and hands
                // over (measured: parsing there too left this side idle).
                |seq, dg| Ok((seq, dg.to_vec())),
                |(seq, dg)| {
                    let mut es = Vec::new();
                    for m in Msgs::new(&dg) {
                        let m = m?;
                        if m.seq == seq && m.ty >= 0x10 {
                            es.extend(SetElems::parse_msg(&m)?.elems);
                        }
                    }
                    for e in &es {
                        repeats |= !seen.insert(elem_hash(e));
                    }
                    f(es)
                },
            );
            match dumped {
                Ok(()) if !repeats => return Ok(()),
                Ok(()) => {}
                Err(Error::DumpInterrupted) if attempt < DUMP_TRIES => {}
                Err(e) => return Err(e),
            }
            std::thread::sleep(DUMP_PAUSE * attempt);
        }
        Err(Error::DumpInterrupted)
    }

    /// Zero the counters of every element of set `set` (kernel 6.5+:
    /// a dump that resets as it walks; what the elements held before is
    /// returned). O(elements), no transaction: what `iptables -Z` of a
    /// compiled run needs, where replacing each element cost a batch of
    /// 2n messages. Not retried when interrupted: a second walk would only
    /// zero again.
    pub fn reset_set_elems(
        &mut self,
        family: Family,
        table: &str,
        set: &str,
    ) -> Result<Vec<SetElem>, Error> {
        let filter = SetElems::new(family, table, set, Vec::new());
        let mut out = Vec::new();
        self.dump_raw(
            msg::GETSETELEM_RESET,
            family,
            |w| filter.emit(w),
            |m| {
                out.extend(SetElems::parse_msg(m)?.elems);
                Ok(())
            },
        )?;
        Ok(out)
    }

    /// Rules of `family`, narrowed to one table and optionally one chain
    /// (the kernel filters; a chain filter needs the table). `f` gets each
    /// rule as a borrowed, lazily parsed [`RuleRef`].
    pub fn rules(
        &mut self,
        family: Family,
        table: Option<&str>,
        chain: Option<&str>,
        mut f: impl FnMut(RuleRef<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let filter = crate::Rule::key(family, table.unwrap_or(""), chain.unwrap_or(""), None);
        self.dump_raw(
            msg::GETRULE,
            family,
            |w| filter.emit(w),
            |m| {
                let nf = m.nf()?;
                f(RuleRef::parse(Family::from_u8(nf.family)?, nf.attrs)?)
            },
        )
    }

    /// One object by its key (a non-dump `GET*`): `None` when the kernel
    /// says it does not exist (ENOENT). O(1) in the kernel, unlike a dump.
    ///
    /// A set element GET asks for an ACK: for an interval end the kernel
    /// finds no element for, it answers success without an element (seen
    /// on 6.18), which without the ACK is no answer at all; that ACK
    /// means `None` (after a found element it ends the answer).
    pub fn get<O: Object>(&mut self, key: &O) -> Result<Option<O>, Error> {
        let seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        self.req.clear();
        let flags = if O::GET == msg::GETSETELEM {
            netlink::NLM_F_ACK
        } else {
            0
        };
        netlink::request(&mut self.req, O::GET, flags, seq, key.family() as u8, |w| {
            key.emit(w)
        });
        let req = std::mem::take(&mut self.req);
        let sent = self.send_raw(&req);
        self.req = req;
        sent?;
        let mut found = None;
        loop {
            let n = self.recv_raw(false)?.ok_or(Error::Truncated)?;
            for m in Msgs::new(&self.rbuf[..n]) {
                let m = m?;
                if m.seq != seq {
                    continue;
                }
                if m.ty == NLMSG_ERROR {
                    let e = m.error()?;
                    if e.code == 0 {
                        return Ok(found);
                    }
                    if e.code == -libc::ENOENT {
                        return Ok(None);
                    }
                    return Err(Error::Kernel {
                        code: e.code,
                        text: e.text.map(str::to_string),
                    });
                }
                let o = O::parse_msg(&m)?;
                if flags & netlink::NLM_F_ACK == 0 {
                    return Ok(Some(o));
                }
                found = Some(o);
            }
        }
    }

    /// The current ruleset generation.
    pub fn gen(&mut self) -> Result<Gen, Error> {
        let seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        self.req.clear();
        netlink::request(&mut self.req, msg::GETGEN, 0, seq, 0, |_| {});
        let req = std::mem::take(&mut self.req);
        let sent = self.send_raw(&req);
        self.req = req;
        sent?;
        loop {
            let n = self.recv_raw(false)?.ok_or(Error::Truncated)?;
            for m in Msgs::new(&self.rbuf[..n]) {
                let m = m?;
                if m.seq != seq {
                    continue;
                }
                if m.ty == NLMSG_ERROR {
                    let e = m.error()?;
                    return Err(Error::Kernel {
                        code: e.code,
                        text: e.text.map(str::to_string),
                    });
                }
                return Gen::parse_msg(&m);
            }
        }
    }
}

/// How often an inconsistent set-element dump is read again, and the pause
/// before the n-th retry (n times this): a set's resize takes the kernel
/// milliseconds.
pub const DUMP_TRIES: u32 = 8;
const DUMP_PAUSE: std::time::Duration = std::time::Duration::from_millis(2);

/// One received datagram of dump `seq`: whether it ends the dump
/// (`NLMSG_DONE`) and whether it holds replies; the interrupted flag is
/// gathered into `intr`. A kernel error is returned as such.
fn dump_step(dg: &[u8], seq: u32, intr: &mut bool) -> Result<(bool, bool), Error> {
    let (mut done, mut data) = (false, false);
    for m in Msgs::new(dg) {
        let m = m?;
        if m.seq != seq {
            continue;
        }
        *intr |= m.flags & NLM_F_DUMP_INTR != 0;
        match m.ty {
            NLMSG_DONE => done = true,
            NLMSG_ERROR => {
                let e = m.error()?;
                if e.code != 0 {
                    return Err(Error::Kernel {
                        code: e.code,
                        text: e.text.map(str::to_string),
                    });
                }
            }
            _ => data = true,
        }
    }
    Ok((done, data))
}

/// A dump's result once its `NLMSG_DONE` came: the callback's error, else
/// an interrupted dump, else success.
fn dump_end(failed: Option<Error>, intr: bool) -> Result<(), Error> {
    match failed {
        Some(e) => Err(e),
        None if intr => Err(Error::DumpInterrupted),
        None => Ok(()),
    }
}

/// What makes two elements of a dump the same element: the key, and
/// whether it ends an interval (an interval set may hold an end and a
/// start on one key).
fn elem_hash(e: &SetElem) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one((
        e.key.as_deref().unwrap_or_default(),
        e.flags.unwrap_or(0) & crate::setelem::F_INTERVAL_END != 0,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_same_key_and_same_kind() {
        let el = |k: &[u8], end: bool| {
            let mut e = SetElem::key(k);
            if end {
                e.flags = Some(crate::setelem::F_INTERVAL_END);
            }
            e
        };
        // (elements, has a repeat)
        let cases: Vec<(Vec<SetElem>, bool)> = vec![
            (vec![], false),
            (vec![el(&[1], false), el(&[2], false)], false),
            (
                vec![el(&[1], false), el(&[2], false), el(&[1], false)],
                true,
            ),
            // An interval's end marker and the next range's start.
            (
                vec![el(&[1], false), el(&[2], true), el(&[2], false)],
                false,
            ),
            (vec![el(&[2], true), el(&[2], true)], true),
        ];
        for (elems, want) in cases {
            let mut seen = std::collections::HashSet::new();
            let repeats = !elems.iter().all(|e| seen.insert(elem_hash(e)));
            assert_eq!(repeats, want, "{elems:?}");
        }
    }
}

//! nftables change notifications: a socket subscribed to the kernel's
//! `NFNLGRP_NFTABLES` multicast group, and a parser turning notification
//! messages into [`Event`]s.
//!
//! What the kernel sends (checked against `net/netfilter/nf_tables_api.c`
//! and by `tests/events.rs`):
//! - One notification per object changed by a committed transaction, at
//!   commit time (aborted batches send nothing), of type `NEW*` or `DEL*`
//!   (a `DESTROY*` request is announced as the matching `DEL*` on 6.18;
//!   `DESTROY*` types are still parsed), followed by exactly one `NEWGEN`
//!   carrying the new generation id (`NFTA_GEN_ID`) and the committing
//!   task (`NFTA_GEN_PROC_PID`, `NFTA_GEN_PROC_NAME`). A batch that
//!   changes nothing commits no generation and sends nothing.
//! - `nlmsg_pid` of every notification, the `NEWGEN` included, is the
//!   netlink port id of the socket whose batch made the change (compare
//!   with [`crate::Socket::portid`]); 0 for changes the kernel makes on its
//!   own (per the source: a device of a netdev chain or flowtable going
//!   away), which end with no `NEWGEN`.
//! - Notifications are coalesced into datagrams of about a page. A
//!   notification the kernel cannot build, or a datagram that does not fit
//!   the receive buffer, is dropped and the socket's next receive fails with
//!   `ENOBUFS`; that is reported as an [`Event`] with `overrun` set, after
//!   which the listener must re-read everything it keeps.
//! - A socket that asked for echoes (`NLM_F_ECHO`) is left out of the
//!   multicast of its own changes, but other subscribers get them.
//!
//! Parsing never panics; object names that are not UTF-8 are decoded
//! lossily (each invalid byte becomes U+FFFD, so such a name never equals
//! an ASCII name like nfkeeper's).

use std::os::fd::RawFd;
use std::time::Duration;

use crate::netlink::{Msg, Msgs, Tb, NFNL_SUBSYS_NFTABLES};
use crate::transport::{is_overrun, Netlink, Transport};
use crate::{msg, Error};

/// Netlink multicast group of nf_tables notifications (`NFNLGRP_NFTABLES`
/// in `include/uapi/linux/netfilter/nfnetlink.h`).
pub const NFNLGRP_NFTABLES: u32 = 7;

/// nf_tables message types beyond [`crate::msg`] that notifications use
/// (`enum nf_tables_msg_types`).
pub mod more_msg {
    pub const NEWOBJ: u16 = 18;
    pub const DELOBJ: u16 = 20;
    pub const NEWFLOWTABLE: u16 = 22;
    pub const DELFLOWTABLE: u16 = 24;
    pub const DESTROYTABLE: u16 = 26;
    pub const DESTROYCHAIN: u16 = 27;
    pub const DESTROYRULE: u16 = 28;
    pub const DESTROYSET: u16 = 29;
    pub const DESTROYSETELEM: u16 = 30;
    pub const DESTROYOBJ: u16 = 31;
    pub const DESTROYFLOWTABLE: u16 = 32;
}

/// `Event::msg` of the overrun marker: no nf_tables message type.
pub const OVERRUN_MSG: u16 = u16::MAX;

/// Receive buffer asked for by [`EventSocket::open`], bytes. A commit
/// queues one notification per object at once (a rule's is a few hundred
/// bytes, in page-sized datagrams); a foreign restore too large for this
/// overruns, which costs one full re-read.
pub const DEFAULT_RCVBUF: usize = 64 << 20;

/// Datagrams read per [`EventSocket::try_recv`] at most, so that a steady
/// stream of changes cannot keep one call from returning.
const MAX_DATAGRAMS: usize = 4096;

/// Initial read buffer; notification datagrams are at most about a page
/// (`NLMSG_GOODSIZE`). Grown if the kernel ever sends a longer one.
const READ_BUF: usize = 64 * 1024;

/// One notification, or the overrun marker (`overrun` set, `msg` ==
/// [`OVERRUN_MSG`], every other field empty).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Event {
    /// `NFT_MSG_*` type ([`crate::msg`], [`more_msg`]).
    pub msg: u16,
    /// `NFPROTO_*` of the object (0 for `NEWGEN`).
    pub family: u8,
    pub table: Option<String>,
    /// The chain of a chain or rule notification.
    pub chain: Option<String>,
    /// The name of a set (also for its elements), object or flowtable.
    pub name: Option<String>,
    /// The object's handle (tables, chains, rules, sets, objects,
    /// flowtables; element notifications have none).
    pub handle: Option<u64>,
    /// Port id of the socket whose commit made the change; 0 for the kernel.
    pub portid: u32,
    /// `nlmsg_seq` of the request that made the change.
    pub seq: u32,
    /// `NEWGEN` only: the generation the commit produced.
    pub genid: Option<u32>,
    /// `NEWGEN` only: the committing task's id and command name. The id is
    /// the kernel's task pid, i.e. the *thread* id of the thread that sent
    /// the batch (the process id only for its main thread).
    pub proc_pid: Option<u32>,
    pub proc_name: Option<String>,
    /// Notifications were lost here: re-read everything.
    pub overrun: bool,
}

impl Event {
    /// The marker for lost notifications.
    pub fn overrun() -> Event {
        Event {
            msg: OVERRUN_MSG,
            overrun: true,
            ..Event::default()
        }
    }

    /// A removal (`DEL*` or `DESTROY*`).
    pub fn is_delete(&self) -> bool {
        use more_msg::*;
        matches!(
            self.msg,
            msg::DELTABLE
                | msg::DELCHAIN
                | msg::DELRULE
                | msg::DELSET
                | msg::DELSETELEM
                | DELOBJ
                | DELFLOWTABLE
        ) || (DESTROYTABLE..=DESTROYFLOWTABLE).contains(&self.msg)
    }
}

/// Where each message kind keeps table, chain, name and handle
/// (attribute types; 0 = absent). From `nft_*_attributes` in
/// `include/uapi/linux/netfilter/nf_tables.h`.
struct Layout {
    table: u16,
    chain: u16,
    name: u16,
    handle: u16,
}

fn layout(ty: u16) -> Option<Layout> {
    use more_msg::*;
    let l = |table, chain, name, handle| {
        Some(Layout {
            table,
            chain,
            name,
            handle,
        })
    };
    match ty {
        msg::NEWTABLE | msg::DELTABLE | DESTROYTABLE => l(1, 0, 0, 4),
        msg::NEWCHAIN | msg::DELCHAIN | DESTROYCHAIN => l(1, 3, 0, 2),
        msg::NEWRULE | msg::DELRULE | DESTROYRULE => l(1, 2, 0, 3),
        msg::NEWSET | msg::DELSET | DESTROYSET => l(1, 0, 2, 16),
        msg::NEWSETELEM | msg::DELSETELEM | DESTROYSETELEM => l(1, 0, 2, 0),
        NEWOBJ | DELOBJ | DESTROYOBJ => l(1, 0, 2, 6),
        NEWFLOWTABLE | DELFLOWTABLE | DESTROYFLOWTABLE => l(1, 0, 2, 5),
        _ => None,
    }
}

const GEN_ID: u16 = 1;
const GEN_PROC_PID: u16 = 2;
const GEN_PROC_NAME: u16 = 3;
/// `NFT_MSG_TRACE`: packet traces, a different group; never a change.
const TRACE: u16 = 17;

fn name(t: &Tb, ty: u16) -> Option<String> {
    if ty == 0 {
        return None;
    }
    let p = t.get(ty)?.payload;
    let end = p.iter().position(|&b| b == 0).unwrap_or(p.len());
    Some(String::from_utf8_lossy(&p[..end]).into_owned())
}

/// Parses one netlink message. `Ok(None)` for messages that are not
/// nf_tables changes (control messages, other subsystems, traces);
/// unknown nf_tables types yield an event with only the header fields, so
/// a consumer can still treat them as "something changed".
pub fn parse_msg(m: &Msg) -> Result<Option<Event>, Error> {
    if m.ty >> 8 != NFNL_SUBSYS_NFTABLES {
        return Ok(None);
    }
    let ty = m.ty & 0xff;
    if ty == TRACE {
        return Ok(None);
    }
    let nf = m.nf()?;
    let t = Tb::parse(nf.attrs)?;
    let mut e = Event {
        msg: ty,
        family: nf.family,
        portid: m.pid,
        seq: m.seq,
        ..Event::default()
    };
    if ty == msg::NEWGEN {
        e.genid = Some(t.be32(GEN_ID)?);
        e.proc_pid = t.opt_be32(GEN_PROC_PID)?;
        e.proc_name = name(&t, GEN_PROC_NAME);
    } else if let Some(l) = layout(ty) {
        e.table = name(&t, l.table);
        e.chain = name(&t, l.chain);
        e.name = name(&t, l.name);
        if l.handle != 0 {
            e.handle = t.opt_be64(l.handle)?;
        }
    }
    Ok(Some(e))
}

/// Parses one received datagram, appending its events to `out`. On
/// malformed input the events before the fault stay in `out` and the error
/// is returned.
pub fn parse(buf: &[u8], out: &mut Vec<Event>) -> Result<(), Error> {
    for m in Msgs::new(buf) {
        if let Some(e) = parse_msg(&m?)? {
            out.push(e);
        }
    }
    Ok(())
}

/// A netlink connection subscribed to nf_tables notifications (the real
/// socket: of the network namespace it was opened in). Only receives;
/// never sends.
pub struct EventSocket {
    transport: Box<dyn Transport>,
    buf: Vec<u8>,
}

impl EventSocket {
    /// Opens a subscribed socket in the calling thread's network namespace
    /// with a [`DEFAULT_RCVBUF`] receive buffer (forced past `rmem_max`
    /// with CAP_NET_ADMIN, else as large as `rmem_max` allows).
    pub fn open() -> Result<EventSocket, Error> {
        EventSocket::with_rcvbuf(DEFAULT_RCVBUF)
    }

    /// As [`EventSocket::open`] with a receive buffer of `bytes` (the
    /// kernel doubles it and enforces a small minimum). Small buffers make
    /// overruns likely; tests use them to provoke one.
    pub fn with_rcvbuf(bytes: usize) -> Result<EventSocket, Error> {
        EventSocket::with_transport(Box::new(Netlink::open()?), bytes)
    }

    /// Subscribes `transport` (see [`crate::transport`]) to nf_tables
    /// notifications with a receive buffer of `bytes`.
    pub fn with_transport(
        mut transport: Box<dyn Transport>,
        bytes: usize,
    ) -> Result<EventSocket, Error> {
        transport.set_rcvbuf(bytes)?;
        transport.join_group(NFNLGRP_NFTABLES)?;
        Ok(EventSocket {
            transport,
            buf: vec![0; READ_BUF],
        })
    }

    /// Stops the subscription (nothing more is queued; what is queued
    /// stays): while nobody listens, the kernel builds no notifications
    /// of a commit, which for a big one costs more than the commit. `Err`
    /// (still subscribed) when the transport cannot leave a group.
    pub fn leave(&mut self) -> Result<(), Error> {
        Ok(self.transport.leave_group(NFNLGRP_NFTABLES)?)
    }

    /// Subscribes again after [`EventSocket::leave`]; what happened in
    /// between was not queued.
    pub fn rejoin(&mut self) -> Result<(), Error> {
        Ok(self.transport.join_group(NFNLGRP_NFTABLES)?)
    }

    /// Makes the socket non-blocking (`O_NONBLOCK`), so that no read on
    /// it can ever wait, whatever flags it uses: for a socket that is only
    /// drained when someone looks ([`EventSocket::try_recv`]), or waited
    /// for with a bound ([`EventSocket::recv`] polls first).
    pub fn set_nonblocking(&self) -> Result<(), Error> {
        Ok(self.transport.set_nonblocking()?)
    }

    /// The port id of the subscribed connection.
    pub fn portid(&self) -> u32 {
        self.transport.portid()
    }

    /// The file descriptor of the real socket (`None` for other
    /// transports), to poll it together with other descriptors.
    pub fn raw_fd(&self) -> Option<RawFd> {
        self.transport.raw_fd()
    }

    /// Waits up to `timeout` (`None`: forever) for notifications, then
    /// returns everything queued (see [`EventSocket::try_recv`]). Empty on
    /// timeout.
    pub fn recv(&mut self, timeout: Option<Duration>) -> Result<Vec<Event>, Error> {
        if !self.transport.wait(timeout)? {
            return Ok(Vec::new());
        }
        self.try_recv()
    }

    /// Returns the notifications queued now, without blocking (at most
    /// a few thousand datagrams per call; the rest stay queued). Lost
    /// notifications (`ENOBUFS`, a truncated or unparsable datagram) show
    /// as an overrun event at the point of the loss. `Err` only when the
    /// socket fails before anything was read; a failure after that ends
    /// the call with what was read plus an overrun event.
    pub fn try_recv(&mut self) -> Result<Vec<Event>, Error> {
        let mut out = Vec::new();
        for _ in 0..MAX_DATAGRAMS {
            let n = match self.transport.recv(&mut self.buf, true) {
                Ok(None) => break,
                Ok(Some(n)) => n,
                Err(e) if is_overrun(&e) => {
                    mark_overrun(&mut out);
                    continue;
                }
                Err(e) if out.is_empty() => return Err(e.into()),
                Err(_) => {
                    mark_overrun(&mut out);
                    break;
                }
            };
            if n > self.buf.len() {
                mark_overrun(&mut out);
                self.buf.resize(n, 0);
                continue;
            }
            if parse(&self.buf[..n], &mut out).is_err() {
                mark_overrun(&mut out);
            }
        }
        Ok(out)
    }
}

/// Appends the overrun marker unless the last event already is one.
fn mark_overrun(out: &mut Vec<Event>) {
    if !out.last().is_some_and(|e| e.overrun) {
        out.push(Event::overrun());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::{nft_type, Writer, NLMSG_DONE};

    /// One notification as the kernel lays it out: `nlmsghdr` with the
    /// originator's port id, `nfgenmsg`, attributes.
    fn notif(ty: u16, family: u8, pid: u32, seq: u32, attrs: impl FnOnce(&mut Writer)) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut w = Writer::new(&mut buf);
        let start = w.begin_msg(ty, 0, seq, family, 0);
        attrs(&mut w);
        w.end_msg(start);
        buf[12..16].copy_from_slice(&pid.to_ne_bytes());
        buf
    }

    fn nft(m: u16, family: u8, pid: u32, attrs: impl FnOnce(&mut Writer)) -> Vec<u8> {
        notif(nft_type(m), family, pid, 77, attrs)
    }

    fn ev(msg: u16, family: u8, portid: u32) -> Event {
        Event {
            msg,
            family,
            portid,
            seq: 77,
            ..Event::default()
        }
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    #[test]
    fn parses_notifications() {
        type Case = (&'static str, Vec<u8>, Option<Event>);
        let cases: Vec<Case> = vec![
            (
                "NEWRULE with table, chain, handle",
                nft(msg::NEWRULE, 2, 1234, |w| {
                    w.put_str(1, "nfkeeper_filter");
                    w.put_str(2, "INPUT");
                    w.put_be64(3, 7);
                    w.put(4, &[0; 8]);
                }),
                Some(Event {
                    table: s("nfkeeper_filter"),
                    chain: s("INPUT"),
                    handle: Some(7),
                    ..ev(msg::NEWRULE, 2, 1234)
                }),
            ),
            (
                "DELCHAIN",
                nft(msg::DELCHAIN, 10, 5, |w| {
                    w.put_str(1, "nfkeeper_nat");
                    w.put_be64(2, 3);
                    w.put_str(3, "user");
                }),
                Some(Event {
                    table: s("nfkeeper_nat"),
                    chain: s("user"),
                    handle: Some(3),
                    ..ev(msg::DELCHAIN, 10, 5)
                }),
            ),
            (
                "NEWGEN with id, pid, name",
                nft(msg::NEWGEN, 0, 9, |w| {
                    w.put_be32(1, 42);
                    w.put_be32(2, 4321);
                    w.put_str(3, "nft");
                }),
                Some(Event {
                    genid: Some(42),
                    proc_pid: Some(4321),
                    proc_name: s("nft"),
                    ..ev(msg::NEWGEN, 0, 9)
                }),
            ),
            (
                "NEWTABLE from the kernel",
                nft(msg::NEWTABLE, 2, 0, |w| {
                    w.put_str(1, "t");
                    w.put_be32(2, 0);
                    w.put_be64(4, 1);
                }),
                Some(Event {
                    table: s("t"),
                    handle: Some(1),
                    ..ev(msg::NEWTABLE, 2, 0)
                }),
            ),
            (
                "NEWSETELEM names its set",
                nft(msg::NEWSETELEM, 2, 1, |w| {
                    w.put_str(1, "t");
                    w.put_str(2, "__nfk_text");
                }),
                Some(Event {
                    table: s("t"),
                    name: s("__nfk_text"),
                    ..ev(msg::NEWSETELEM, 2, 1)
                }),
            ),
            (
                "DESTROYTABLE",
                nft(more_msg::DESTROYTABLE, 2, 1, |w| w.put_str(1, "t")),
                Some(Event {
                    table: s("t"),
                    ..ev(more_msg::DESTROYTABLE, 2, 1)
                }),
            ),
            (
                "non-UTF-8 name is decoded lossily",
                nft(msg::NEWTABLE, 2, 1, |w| w.put(1, b"t\xff\0")),
                Some(Event {
                    table: s("t\u{fffd}"),
                    ..ev(msg::NEWTABLE, 2, 1)
                }),
            ),
            (
                "unknown nf_tables type: header fields only",
                nft(40, 1, 3, |w| w.put_str(1, "t")),
                Some(ev(40, 1, 3)),
            ),
            (
                "other subsystem (ctnetlink) is ignored",
                notif(1 << 8, 2, 0, 77, |w| w.put_str(1, "t")),
                None,
            ),
            (
                "trace is ignored",
                nft(TRACE, 2, 0, |w| w.put_str(1, "t")),
                None,
            ),
            (
                "control message is ignored",
                notif(NLMSG_DONE, 0, 0, 77, |_| {}),
                None,
            ),
        ];
        for (what, bytes, want) in cases {
            let m = Msgs::new(&bytes).next().unwrap().unwrap();
            assert_eq!(parse_msg(&m).unwrap(), want, "{what}");
        }
    }

    #[test]
    fn malformed_is_error() {
        type Case = (&'static str, Vec<u8>);
        let cases: Vec<Case> = vec![
            (
                "NEWGEN without id",
                nft(msg::NEWGEN, 0, 1, |w| w.put_str(3, "x")),
            ),
            (
                "short generation id",
                nft(msg::NEWGEN, 0, 1, |w| w.put(1, &[1, 2])),
            ),
            (
                "short rule handle",
                nft(msg::NEWRULE, 2, 1, |w| w.put_be32(3, 1)),
            ),
            ("no nfgenmsg", {
                let mut b = notif(nft_type(msg::NEWRULE), 2, 1, 1, |_| {});
                b.truncate(16);
                b[0..4].copy_from_slice(&16u32.to_ne_bytes());
                b
            }),
            ("attribute past the end", {
                let mut b = nft(msg::NEWTABLE, 2, 1, |w| w.put_str(1, "table"));
                b[20] = 200;
                b
            }),
        ];
        for (what, bytes) in cases {
            let mut out = Vec::new();
            assert!(parse(&bytes, &mut out).is_err(), "{what}");
            assert!(out.is_empty(), "{what}");
        }
    }

    #[test]
    fn truncated_datagram_never_parses_as_whole() {
        let mut buf = nft(msg::NEWTABLE, 2, 8, |w| w.put_str(1, "t"));
        buf.extend(nft(msg::NEWRULE, 2, 8, |w| {
            w.put_str(1, "t");
            w.put_str(2, "c");
            w.put_be64(3, 9);
        }));
        buf.extend(nft(msg::NEWGEN, 0, 8, |w| w.put_be32(1, 5)));
        let mut whole = Vec::new();
        parse(&buf, &mut whole).unwrap();
        assert_eq!(whole.len(), 3);
        for cut in 0..buf.len() {
            let mut out = Vec::new();
            let r = parse(&buf[..cut], &mut out);
            assert!(r.is_err() || out.len() < 3, "cut at {cut}");
            assert_eq!(out[..], whole[..out.len()], "cut at {cut}");
        }
    }

    #[test]
    fn garbage_does_not_panic() {
        // A fixed pseudo-random stream (xorshift) shaped a little like
        // netlink: plausible lengths make the parser go deeper.
        let mut x: u32 = 0x9e37_79b9;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let mut errors = 0;
        for _ in 0..2000 {
            let len = (next() % 96) as usize;
            let mut b: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if len >= 16 {
                b[0..4].copy_from_slice(&(len as u32).to_ne_bytes());
                b[4] = (next() % 34) as u8;
                b[5] = NFNL_SUBSYS_NFTABLES as u8;
            }
            let mut out = Vec::new();
            errors += parse(&b, &mut out).is_err() as usize;
        }
        assert!(errors > 0);
    }

    #[test]
    fn deletes_and_overrun_marker() {
        let cases: &[(u16, bool)] = &[
            (msg::NEWTABLE, false),
            (msg::DELTABLE, true),
            (msg::DELRULE, true),
            (msg::NEWGEN, false),
            (more_msg::DELOBJ, true),
            (more_msg::DESTROYRULE, true),
            (more_msg::DESTROYFLOWTABLE, true),
            (more_msg::NEWFLOWTABLE, false),
        ];
        for &(m, del) in cases {
            assert_eq!(ev(m, 2, 0).is_delete(), del, "msg {m}");
        }
        let o = Event::overrun();
        assert!(o.overrun && !o.is_delete() && o.table.is_none());
        let mut v = vec![ev(msg::NEWRULE, 2, 0)];
        mark_overrun(&mut v);
        mark_overrun(&mut v);
        assert_eq!(v, vec![ev(msg::NEWRULE, 2, 0), Event::overrun()]);
    }
}

//! An in-memory nf_tables kernel that speaks the kernel's netlink bytes,
//! for testing what runs over [`nft::Socket`] and [`nft::EventSocket`]
//! without root: the real codec and socket logic run unchanged over its
//! [`nft::Transport`] (see [`Kernel::socket`]).
//!
//! What is modelled, as `net/netfilter/nf_tables_api.c` and
//! `nfnetlink.c` do it (each module's doc lists its facts; the
//! differential test runs the same requests on both and compares):
//! batches (generation check, all-or-nothing, errors per message by
//! sequence number, ACKs, the end ACK only on commit, a new generation per
//! committed non-empty batch), tables, chains (base chains, policies and
//! their counters, updates, renames, chain ids, use counts), rules
//! (placement by handle or rule id, replacement, deletion by handle, id,
//! chain or table; per-table handles), sets (named and anonymous, set
//! ids, bindings and use counts) and elements (intervals, verdict data,
//! userdata, per-element expressions), jump validation (depth and loops:
//! `EMLINK`), dumps with their filters, single gets, echoes and
//! notifications (dropped, with `ENOBUFS` on the next receive, for a
//! subscriber whose receive buffer is full).
//!
//! Not modelled: stateful objects, flowtables, devices (netdev and
//! ingress chains), element timeouts, owner tables' lifetime, interval
//! overlap detection, expression internals (registers, lengths: any
//! expression is accepted as given, but for verdicts and set lookups).
//!
//! Tests inspect the state ([`Kernel::text`], [`Kernel::rules`], ...) and
//! arm faults ([`Kernel::fail_next_commit`], [`Kernel::lose_next_replies`],
//! ...). A [`Kernel`] is a cheap handle to shared state: clone it into
//! threads; every operation takes one lock.
//!
//! In a test (this runs as `tests/behaviour.rs`'s `lib_doc_example`:
//! doctests cannot link under the workspace's static relocation model):
//!
//! ```ignore
//! use nft::{Family, Table};
//!
//! let k = fakekernel::Kernel::new();
//! let mut sock = k.socket();
//! let mut events = k.event_socket();
//! let mut b = sock.batch(None);
//! b.add(&Table::new(Family::Ipv4, "t"), 0);
//! assert!(sock.commit(&mut b).unwrap().outcome.is_ok());
//! assert_eq!(k.text(), "table ip t handle 1 use 0\n");
//! assert_eq!(events.try_recv().unwrap().len(), 2); // NEWTABLE, NEWGEN
//!
//! k.fail_next_commit(fakekernel::FailAt::Commit, 12);
//! let mut b = sock.batch(None);
//! b.add(&Table::new(Family::Ipv4, "u"), 7);
//! let out = sock.commit(&mut b).unwrap().outcome;
//! assert_eq!((out.errors[0].tag, out.errors[0].code), (Some(7), -12));
//! ```
//!
//! Cost: a batch works on a copy of the ruleset that shares rule lists,
//! element maps and sets until it changes them, so a batch costs
//! O(chains + sets) plus what it does; dumps are linear in what they
//! return.

mod batch;
mod conn;
mod encode;
mod errno;
mod exprs;
mod exprtext;
mod list;
mod model;
mod notify;
mod ops;
mod requests;
mod state;
mod text;
mod txn;
mod validate;

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use nft::{Family, Object};

pub use conn::Conn;
pub use exprtext::expr_text;

use encode::{Hdr, TableInfo};
use state::State;

/// Where the next commit fails ([`Kernel::fail_next_commit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailAt {
    /// Before any message: the batch is refused whole, the error on the
    /// batch-begin message (where the kernel reports a generation
    /// mismatch, `ERESTART`: a way to act out a concurrent writer).
    Begin,
    /// The commit itself, after every message succeeded: the error comes
    /// on the first message after the batch-begin one, where the kernel
    /// reports a failure of its commit.
    Commit,
    /// On the n-th message between begin and end (0-based).
    Message(usize),
    /// On the first message of this `NFT_MSG_*` type.
    FirstOf(u16),
}

/// Which replies of the next batch are lost ([`Kernel::lose_next_replies`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// The echoed notifications (the batch's verdict still arrives).
    Echoes,
    /// Every reply: echoes, errors, ACKs.
    Everything,
}

/// Requests the kernel has served.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Batches received.
    pub batches: u64,
    /// Batches committed with at least one change.
    pub commits: u64,
    /// Batches aborted (an error, a failed validation, no end message).
    pub aborts: u64,
    pub dumps: u64,
    /// Of `dumps`, element dumps of a set that reset nothing (`GETSETELEM`,
    /// not `GETSETELEM_RESET`).
    pub elem_dumps: u64,
    /// Single gets, `GETGEN` included.
    pub gets: u64,
}

pub(crate) struct Shared {
    st: Mutex<State>,
    cv: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A fake kernel (one network namespace's nf_tables). Clones share it.
#[derive(Clone)]
pub struct Kernel {
    shared: Arc<Shared>,
}

impl Default for Kernel {
    fn default() -> Self {
        Kernel::new()
    }
}

impl Kernel {
    /// An empty ruleset at generation 1.
    pub fn new() -> Kernel {
        Kernel {
            shared: Arc::new(Shared {
                st: Mutex::new(State::default()),
                cv: Condvar::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.lock()
    }

    /// A new connection (its own port id), for [`nft::Socket::with_transport`]
    /// or raw use.
    pub fn connect(&self) -> Conn {
        let portid = self.lock().connect();
        Conn {
            kernel: self.shared.clone(),
            portid,
        }
    }

    /// A request socket on a new connection.
    pub fn socket(&self) -> nft::Socket {
        nft::Socket::with_transport(Box::new(self.connect()))
            .expect("a fake connection sizes its buffers without fail")
    }

    /// A socket subscribed to notifications, on a new connection.
    pub fn event_socket(&self) -> nft::EventSocket {
        nft::EventSocket::with_transport(Box::new(self.connect()), nft::events::DEFAULT_RCVBUF)
            .expect("a fake connection joins the group without fail")
    }

    /// The current generation id.
    pub fn genid(&self) -> u32 {
        self.lock().genid
    }

    /// Counters of what was served.
    pub fn stats(&self) -> Stats {
        self.lock().stats
    }

    /// The whole state as text (see the `text` module's format): for
    /// golden files and failure messages.
    pub fn text(&self) -> String {
        text::ruleset(&self.lock().rs)
    }

    // Faults.

    /// The next batch that reaches its end fails with `errno` (positive)
    /// at `at`; as the kernel does after a failing message, the others
    /// are still processed and the batch is aborted.
    pub fn fail_next_commit(&self, at: FailAt, errno: i32) {
        self.lock().faults.fail_commit = Some((at, errno));
    }

    /// The next batch's replies to its sender are lost (`what`), and the
    /// sender's next receive fails with `ENOBUFS` (a receive overrun).
    pub fn lose_next_replies(&self, what: Loss) {
        self.lock().faults.lose_replies = Some(what);
    }

    /// The next commit's notifications are lost for every subscriber, and
    /// their next receive fails with `ENOBUFS`.
    pub fn lose_next_events(&self) {
        self.lock().faults.lose_events = true;
    }

    /// The next dump is flagged inconsistent (`NLM_F_DUMP_INTR`), as when
    /// the ruleset changes while it runs.
    pub fn interrupt_next_dump(&self) {
        self.lock().faults.interrupt_dump = true;
    }

    /// Datagrams longer than `bytes` are refused with `EMSGSIZE` (a send
    /// buffer of that size); `None` lifts the limit.
    pub fn max_datagram(&self, bytes: Option<usize>) {
        self.lock().faults.max_datagram = bytes;
    }

    // Inspection: the objects as a dump returns them, without netlink.

    /// Every table.
    pub fn tables(&self) -> Vec<nft::Table> {
        let st = self.lock();
        st.rs
            .tables
            .iter()
            .map(|t| {
                let mut b = Vec::new();
                encode::table(&mut b, &hdr(t.family), &TableInfo::from(t));
                reparse(&b)
            })
            .collect()
    }

    /// The chains of a table (empty when absent).
    pub fn chains(&self, family: Family, table: &str) -> Vec<nft::Chain> {
        let st = self.lock();
        let Some(ti) = st.rs.table(family, table) else {
            return Vec::new();
        };
        let t = &st.rs.tables[ti];
        let uses = t.uses();
        t.chains
            .iter()
            .map(|c| {
                let mut b = Vec::new();
                let u = uses.get(c.name.as_str()).copied().unwrap_or(0);
                encode::chain(&mut b, &hdr(family), &t.name, c, u);
                reparse(&b)
            })
            .collect()
    }

    /// The rules of a chain, in order (empty when absent).
    pub fn rules(&self, family: Family, table: &str, chain: &str) -> Vec<nft::Rule> {
        let st = self.lock();
        let Some(ti) = st.rs.table(family, table) else {
            return Vec::new();
        };
        let t = &st.rs.tables[ti];
        let Some(ci) = t.chain(chain) else {
            return Vec::new();
        };
        let mut prev = 0;
        t.chains[ci]
            .rules
            .iter()
            .map(|s| {
                let mut b = Vec::new();
                encode::rule(&mut b, &hdr(family), &t.name, chain, &s.rule, prev);
                prev = s.rule.handle;
                reparse(&b)
            })
            .collect()
    }

    /// The sets of a table (empty when absent).
    pub fn sets(&self, family: Family, table: &str) -> Vec<nft::Set> {
        let st = self.lock();
        let Some(ti) = st.rs.table(family, table) else {
            return Vec::new();
        };
        let t = &st.rs.tables[ti];
        t.sets
            .iter()
            .map(|s| {
                let mut b = Vec::new();
                encode::set(&mut b, &hdr(family), &t.name, s);
                reparse(&b)
            })
            .collect()
    }

    /// The elements of a set (empty when absent), in key order.
    pub fn elems(&self, family: Family, table: &str, set: &str) -> Vec<nft::SetElem> {
        let st = self.lock();
        let Some(ti) = st.rs.table(family, table) else {
            return Vec::new();
        };
        let t = &st.rs.tables[ti];
        let Some(si) = t.set(set) else {
            return Vec::new();
        };
        let s = &t.sets[si];
        let mut b = Vec::new();
        encode::elems(&mut b, &hdr(family), &t.name, &s.name, s.elems.values());
        reparse::<nft::SetElems>(&b).elems
    }
}

fn hdr(family: Family) -> Hdr {
    Hdr {
        ty: 0,
        flags: 0,
        seq: 0,
        pid: 0,
        family,
        genid: 0,
    }
}

/// Parses a message this crate encoded.
fn reparse<O: Object>(bytes: &[u8]) -> O {
    let m = nft::netlink::Msgs::new(bytes)
        .next()
        .and_then(Result::ok)
        .expect("one encoded message");
    O::parse_msg(&m).expect("the fake kernel encodes what nft parses")
}

//! The kernel's shared state: the committed ruleset, the generation, the
//! connections with their receive queues, pending faults and counters;
//! and the entry point for a datagram sent on a connection.

use std::collections::{BTreeMap, VecDeque};
use std::io;

use nft::netlink::{Msgs, NFNL_MSG_BATCH_BEGIN};

use crate::encode::Task;
use crate::errno::EMSGSIZE;
use crate::model::Ruleset;
use crate::{FailAt, Loss, Stats};

/// One connection's side in the kernel.
pub struct Conn {
    /// Datagrams queued for it, oldest first.
    pub queue: VecDeque<Vec<u8>>,
    /// Bytes in `queue`.
    pub queued: usize,
    /// Receive buffer, bytes: a notification finding this much queued is
    /// dropped (as the kernel's multicast does; replies to requests are
    /// never dropped here).
    pub rcvbuf: usize,
    /// Datagrams were dropped: its next receive fails with `ENOBUFS`.
    pub overrun: bool,
    /// Member of the nf_tables notification group.
    pub subscribed: bool,
    pub nonblocking: bool,
}

/// `rmem_default`, doubled as the kernel books it.
const DEFAULT_RCVBUF: usize = 2 * 212_992;
/// `SOCK_MIN_RCVBUF`: the least a receive buffer is set to.
const MIN_RCVBUF: usize = 2304;

impl Default for Conn {
    fn default() -> Self {
        Conn {
            queue: VecDeque::new(),
            queued: 0,
            rcvbuf: DEFAULT_RCVBUF,
            overrun: false,
            subscribed: false,
            nonblocking: false,
        }
    }
}

impl Conn {
    /// Sets the receive buffer as `SO_RCVBUF` does: doubled, at least the
    /// kernel's minimum.
    pub fn set_rcvbuf(&mut self, bytes: usize) {
        self.rcvbuf = bytes.saturating_mul(2).max(MIN_RCVBUF);
    }

    /// Takes the oldest datagram.
    pub fn pop(&mut self) -> Option<Vec<u8>> {
        let d = self.queue.pop_front()?;
        self.queued -= d.len();
        Some(d)
    }
}

/// Faults armed for what comes next.
#[derive(Default)]
pub struct Faults {
    pub fail_commit: Option<(FailAt, i32)>,
    pub lose_replies: Option<Loss>,
    pub lose_events: bool,
    pub interrupt_dump: bool,
    pub max_datagram: Option<usize>,
}

pub struct State {
    pub rs: Ruleset,
    /// The ruleset generation (`base_seq`): 1 in a fresh namespace, one
    /// more per committed batch that changed something, never 0.
    pub genid: u32,
    /// The last table handle given out (kernel-wide in the kernel).
    pub table_handles: u64,
    pub conns: BTreeMap<u32, Conn>,
    pub next_portid: u32,
    pub faults: Faults,
    pub stats: Stats,
}

/// First port id handed out (the kernel gives the process id to the
/// first socket; any non-zero value works).
const FIRST_PORTID: u32 = 4001;

impl Default for State {
    fn default() -> Self {
        State {
            rs: Ruleset::default(),
            genid: 1,
            table_handles: 0,
            conns: BTreeMap::new(),
            next_portid: FIRST_PORTID,
            faults: Faults::default(),
            stats: Stats::default(),
        }
    }
}

impl State {
    /// Registers a new connection; returns its port id.
    pub fn connect(&mut self) -> u32 {
        let p = self.next_portid;
        self.next_portid += 1;
        self.conns.insert(p, Conn::default());
        p
    }

    /// Queues `datagram` for connection `portid` (dropped if it closed).
    pub fn queue(&mut self, portid: u32, datagram: Vec<u8>) {
        if let Some(c) = self.conns.get_mut(&portid) {
            c.queued += datagram.len();
            c.queue.push_back(datagram);
        }
    }

    /// Queues a notification for subscriber `portid`, unless its receive
    /// buffer is full: then it is lost and the next receive fails with
    /// `ENOBUFS`.
    pub fn multicast(&mut self, portid: u32, datagram: Vec<u8>) {
        if let Some(c) = self.conns.get_mut(&portid) {
            if c.queued > c.rcvbuf {
                c.overrun = true;
            } else {
                c.queued += datagram.len();
                c.queue.push_back(datagram);
            }
        }
    }

    /// Marks replies to `portid` lost.
    pub fn overrun(&mut self, portid: u32) {
        if let Some(c) = self.conns.get_mut(&portid) {
            c.overrun = true;
        }
    }

    /// One datagram sent by connection `portid` (the thread's `task`):
    /// a batch, or requests. Everything it causes is queued when this
    /// returns.
    pub fn input(&mut self, portid: u32, datagram: &[u8], task: &Task) -> io::Result<()> {
        if self.faults.max_datagram.is_some_and(|m| datagram.len() > m) {
            return Err(io::Error::from_raw_os_error(EMSGSIZE));
        }
        let Some(Ok(first)) = Msgs::new(datagram).next() else {
            // Shorter than a message header: the kernel ignores it.
            return Ok(());
        };
        if first.ty == NFNL_MSG_BATCH_BEGIN {
            crate::batch::run(self, portid, datagram, task);
        } else {
            crate::requests::run(self, portid, datagram, task);
        }
        Ok(())
    }
}

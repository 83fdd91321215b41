//! A connection to the fake kernel: the [`Transport`] that [`nft::Socket`]
//! and [`nft::EventSocket`] run over. Sending processes the datagram at
//! once (under the kernel's lock) and queues every reply before it
//! returns, as the real kernel does; receiving takes queued datagrams.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nft::events::NFNLGRP_NFTABLES;
use nft::Transport;

use crate::encode::Task;
use crate::errno::ENOBUFS;
use crate::Shared;

/// One connection (its port id) to a fake kernel.
pub struct Conn {
    pub(crate) kernel: Arc<Shared>,
    pub(crate) portid: u32,
}

/// The calling thread as `NEWGEN` names it: thread id and command name
/// (from `/proc/thread-self`; empty when unreadable).
pub(crate) fn current_task() -> Task {
    let pid = std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|p| p.file_name().and_then(|n| n.to_str()?.parse().ok()))
        .unwrap_or(0);
    let comm = std::fs::read_to_string("/proc/thread-self/comm")
        .map(|s| s.trim_end().to_string())
        .unwrap_or_default();
    Task { pid, comm }
}

impl Transport for Conn {
    fn sibling(&self) -> Option<Box<dyn Transport>> {
        let portid = self.kernel.lock().connect();
        Some(Box::new(Conn {
            kernel: self.kernel.clone(),
            portid,
        }))
    }

    fn portid(&self) -> u32 {
        self.portid
    }

    fn send(&mut self, datagram: &[u8]) -> io::Result<()> {
        let task = current_task();
        let r = self.kernel.lock().input(self.portid, datagram, &task);
        self.kernel.cv.notify_all();
        r
    }

    fn recv(&mut self, buf: &mut [u8], nonblock: bool) -> io::Result<Option<usize>> {
        let mut st = self.kernel.lock();
        loop {
            let Some(c) = st.conns.get_mut(&self.portid) else {
                return Err(io::Error::from(io::ErrorKind::NotConnected));
            };
            if std::mem::take(&mut c.overrun) {
                return Err(io::Error::from_raw_os_error(ENOBUFS));
            }
            if let Some(d) = c.pop() {
                let n = d.len().min(buf.len());
                buf[..n].copy_from_slice(&d[..n]);
                return Ok(Some(d.len()));
            }
            if nonblock || c.nonblocking {
                return Ok(None);
            }
            if !c.subscribed {
                // Replies are queued while the request is sent: on a
                // connection that gets no notifications, nothing can come.
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "fake kernel: blocking receive with nothing queued and nothing to come",
                ));
            }
            st = self.kernel.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn wait(&mut self, timeout: Option<Duration>) -> io::Result<bool> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut st = self.kernel.lock();
        loop {
            let Some(c) = st.conns.get(&self.portid) else {
                return Err(io::Error::from(io::ErrorKind::NotConnected));
            };
            if c.overrun || !c.queue.is_empty() {
                return Ok(true);
            }
            st = match deadline {
                None => self.kernel.cv.wait(st).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(false);
                    }
                    self.kernel
                        .cv
                        .wait_timeout(st, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
    }

    fn set_sndbuf(&mut self, _bytes: usize) -> io::Result<()> {
        Ok(())
    }

    fn set_rcvbuf(&mut self, bytes: usize) -> io::Result<()> {
        if let Some(c) = self.kernel.lock().conns.get_mut(&self.portid) {
            c.set_rcvbuf(bytes);
        }
        Ok(())
    }

    fn join_group(&mut self, group: u32) -> io::Result<()> {
        if group == NFNLGRP_NFTABLES {
            if let Some(c) = self.kernel.lock().conns.get_mut(&self.portid) {
                c.subscribed = true;
            }
        }
        Ok(())
    }

    fn leave_group(&mut self, group: u32) -> io::Result<()> {
        if group == NFNLGRP_NFTABLES {
            if let Some(c) = self.kernel.lock().conns.get_mut(&self.portid) {
                c.subscribed = false;
            }
        }
        Ok(())
    }

    fn set_nonblocking(&self) -> io::Result<()> {
        if let Some(c) = self.kernel.lock().conns.get_mut(&self.portid) {
            c.nonblocking = true;
        }
        Ok(())
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.kernel.lock().conns.remove(&self.portid);
    }
}

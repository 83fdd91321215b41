//! Reading request frames (a 4-byte big-endian length, then that many
//! bytes; see docs/protocol.md) so that a peer costs the daemon only what
//! it actually sent:
//! - the buffer grows as bytes arrive, never from the header alone (a
//!   6-byte header announcing 64 MiB costs nothing until 64 MiB come);
//! - every byte held counts against one budget shared by all connections
//!   ([`Budget`]); beyond it the request is refused as busy;
//! - once a frame has begun, the whole of it must arrive within the
//!   request timeout (one byte every second does not hold a connection);
//! - after a large request the buffer is given back ([`FrameReader::shrink`]).

use std::io::{self, ErrorKind, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Bytes read at most per `read` call while a frame's body arrives.
const STEP: usize = 64 << 10;

/// A buffer above this size is dropped after its request.
pub const KEEP: usize = 1 << 20;

/// A stream whose reads can be bounded in time.
pub trait TimedRead: Read {
    /// Bound the next reads (`None`: wait forever).
    fn set_timeout(&mut self, t: Option<Duration>) -> io::Result<()>;
    /// The clock the timeouts run on.
    fn now(&self) -> Instant {
        Instant::now()
    }
}

impl TimedRead for std::os::unix::net::UnixStream {
    fn set_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(t)
    }
}

/// Request bytes held by all connections together.
#[derive(Debug)]
pub struct Budget {
    held: AtomicUsize,
    max: usize,
}

impl Budget {
    pub const fn new(max: usize) -> Budget {
        Budget {
            held: AtomicUsize::new(0),
            max,
        }
    }

    fn take(&self, n: usize) -> bool {
        if self.held.fetch_add(n, Ordering::SeqCst) + n > self.max {
            self.held.fetch_sub(n, Ordering::SeqCst);
            return false;
        }
        true
    }

    fn give(&self, n: usize) {
        self.held.fetch_sub(n, Ordering::SeqCst);
    }

    /// Bytes held now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::SeqCst)
    }
}

/// Why no frame was read.
#[derive(Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The peer closed (or the idle timeout passed) between frames.
    Closed,
    /// The header announces more than the limit.
    TooLarge(usize),
    /// All connections together hold too much request data.
    Busy,
    /// The frame did not complete in time, or the peer closed mid-frame.
    Incomplete,
}

/// One connection's frame buffer.
#[derive(Default)]
pub struct FrameReader {
    buf: Vec<u8>,
    /// Bytes of `buf` counted in the budget (released by `release`).
    counted: usize,
}

impl FrameReader {
    /// Read the next frame: wait up to `idle` for it to begin, then up to
    /// `request` for all of it; at most `limit` bytes. Returns the body.
    pub fn read(
        &mut self,
        s: &mut dyn TimedRead,
        limit: usize,
        idle: Duration,
        request: Duration,
        budget: &Budget,
    ) -> Result<&[u8], FrameError> {
        self.release(budget);
        self.buf.clear();
        let mut len = [0u8; 4];
        let _ = s.set_timeout(Some(idle));
        // The first byte may wait the idle timeout; the rest of the frame
        // shares the request timeout.
        match read_some(s, &mut len[..1]) {
            Ok(1) => {}
            _ => return Err(FrameError::Closed),
        }
        let deadline = s.now() + request;
        read_exact_by(s, &mut len[1..], deadline).map_err(|_| FrameError::Incomplete)?;
        let n = u32::from_be_bytes(len) as usize;
        if n > limit {
            return Err(FrameError::TooLarge(n));
        }
        while self.buf.len() < n {
            let step = (n - self.buf.len()).min(STEP);
            if !budget.take(step) {
                return Err(FrameError::Busy);
            }
            self.counted += step;
            let at = self.buf.len();
            self.buf.resize(at + step, 0);
            let got = read_exact_by(s, &mut self.buf[at..], deadline);
            if got.is_err() {
                return Err(FrameError::Incomplete);
            }
        }
        Ok(&self.buf[..n])
    }

    /// Stop counting the last frame against the budget.
    pub fn release(&mut self, budget: &Budget) {
        budget.give(std::mem::take(&mut self.counted));
    }

    /// After a request: give a large buffer back to the allocator.
    pub fn shrink(&mut self) {
        if self.buf.capacity() > KEEP {
            self.buf = Vec::new();
        }
    }

    /// Bytes the buffer holds on to.
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }
}

fn read_some(s: &mut dyn TimedRead, b: &mut [u8]) -> io::Result<usize> {
    loop {
        match s.read(b) {
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// Fill `b` before `deadline`.
fn read_exact_by(s: &mut dyn TimedRead, mut b: &mut [u8], deadline: Instant) -> io::Result<()> {
    while !b.is_empty() {
        let left = deadline.saturating_duration_since(s.now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        s.set_timeout(Some(left))?;
        match read_some(s, b)? {
            0 => return Err(ErrorKind::UnexpectedEof.into()),
            k => b = &mut b[k..],
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peer: what it sends, in pieces, each after a delay.
    struct Peer {
        pieces: Vec<(Duration, Vec<u8>)>,
        timeout: Option<Duration>,
        /// Virtual time passed since `t0`.
        now: Duration,
        t0: Instant,
    }

    impl Read for Peer {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            let Some((wait, piece)) = self.pieces.first_mut() else {
                return Ok(0);
            };
            if self.timeout.is_some_and(|t| *wait > t) {
                self.now += self.timeout.unwrap_or_default();
                *wait -= self.timeout.unwrap_or_default();
                return Err(ErrorKind::WouldBlock.into());
            }
            self.now += *wait;
            *wait = Duration::ZERO;
            let k = piece.len().min(b.len());
            b[..k].copy_from_slice(&piece[..k]);
            piece.drain(..k);
            if piece.is_empty() {
                self.pieces.remove(0);
            }
            Ok(k)
        }
    }

    impl TimedRead for Peer {
        fn set_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
            self.timeout = t;
            Ok(())
        }
        fn now(&self) -> Instant {
            self.t0 + self.now
        }
    }

    fn peer(pieces: Vec<(Duration, Vec<u8>)>) -> Peer {
        Peer {
            pieces,
            timeout: None,
            now: Duration::ZERO,
            t0: Instant::now(),
        }
    }

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut v = (body.len() as u32).to_be_bytes().to_vec();
        v.extend_from_slice(body);
        v
    }

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn frames_cost_what_was_sent() {
        type Case = (
            &'static str,
            Vec<(Duration, Vec<u8>)>,
            Result<usize, FrameError>,
        );
        let cases: Vec<Case> = vec![
            ("whole", vec![(S, frame(b"hello"))], Ok(5)),
            ("empty peer", vec![], Err(FrameError::Closed)),
            (
                "too large",
                vec![(S, (100u32).to_be_bytes().to_vec())],
                Err(FrameError::TooLarge(100)),
            ),
            (
                "header only, body never comes",
                vec![(S, (64u32).to_be_bytes().to_vec())],
                Err(FrameError::Incomplete),
            ),
            (
                // One byte a second holds nothing beyond the request timeout.
                "trickle",
                frame(&[b'x'; 30])
                    .into_iter()
                    .map(|b| (S, vec![b]))
                    .collect(),
                Err(FrameError::Incomplete),
            ),
        ];
        for (name, pieces, want) in cases {
            let mut p = peer(pieces);
            let budget = Budget::new(1 << 20);
            let mut r = FrameReader::default();
            let got = r.read(&mut p, 80, 10 * S, 3 * S, &budget).map(<[u8]>::len);
            assert_eq!(got, want, "{name}");
            // Never more than the budget step buffered for a frame that did
            // not send its body.
            assert!(r.capacity() <= STEP, "{name}: {}", r.capacity());
        }
    }

    #[test]
    fn a_big_header_allocates_nothing_and_the_budget_refuses_floods() {
        let budget = Budget::new(3 * STEP);
        let mut p = peer(vec![(S, (64u32 << 20).to_be_bytes().to_vec())]);
        let mut r = FrameReader::default();
        let e = r.read(&mut p, 128 << 20, S, S, &budget);
        assert_eq!(e.err(), Some(FrameError::Incomplete));
        assert!(r.capacity() <= STEP);
        // Budget: each frame holds what it read; beyond the max, busy.
        let big = vec![7u8; 4 * STEP];
        let mut p = peer(vec![(S, frame(&big))]);
        let mut r2 = FrameReader::default();
        r.release(&budget);
        assert_eq!(
            r2.read(&mut p, 128 << 20, S, S, &budget).err(),
            Some(FrameError::Busy)
        );
        r2.release(&budget);
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn large_buffers_are_given_back() {
        let body = vec![1u8; 2 * KEEP];
        let mut p = peer(vec![(S, frame(&body))]);
        let budget = Budget::new(1 << 30);
        let mut r = FrameReader::default();
        assert_eq!(
            r.read(&mut p, 1 << 30, S, S, &budget).map(<[u8]>::len),
            Ok(2 * KEEP)
        );
        r.release(&budget);
        r.shrink();
        assert_eq!(r.capacity(), 0);
        assert_eq!(budget.held(), 0);
    }
}

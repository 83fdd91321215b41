//! The daemon's frame reader (`daemon::frame`) under memory limits.
//!
//! Input: the first byte picks a budget (in 4 KiB steps) and the rest is
//! what a peer sends. Properties: never a panic; the buffer never holds
//! more than what arrived plus one read step (a header alone allocates
//! nothing); every frame returned is exactly as announced; the budget is
//! back to zero once the reader releases.
#![no_main]

use daemon::frame::{Budget, FrameReader, TimedRead};
use libfuzzer_sys::fuzz_target;
use std::io::Read;
use std::time::Duration;

struct Peer<'a>(&'a [u8]);

impl Read for Peer<'_> {
    fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(b)
    }
}

impl TimedRead for Peer<'_> {
    fn set_timeout(&mut self, _: Option<Duration>) -> std::io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&b, rest)) = data.split_first() else {
        return;
    };
    let budget = Budget::new(usize::from(b) * 4096);
    let mut r = FrameReader::default();
    let mut p = Peer(rest);
    let s = Duration::from_secs(1);
    loop {
        let before = p.0.len();
        let got = r.read(&mut p, 1 << 20, s, s, &budget).map(|f| f.len());
        let arrived = before - p.0.len();
        assert!(r.capacity() <= arrived + (64 << 10), "{} > {arrived}", r.capacity());
        r.release(&budget);
        r.shrink();
        assert_eq!(budget.held(), 0);
        match got {
            Ok(n) => assert_eq!(n + 4, arrived),
            Err(_) => break,
        }
    }
});

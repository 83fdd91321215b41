//! Test helpers: a private network namespace per kernel test, and a
//! readable hex renderer for byte goldens.
#![allow(dead_code, unused_imports)]

pub mod golden;

pub use testkit::in_netns;

/// Peak resident set size of this process, KiB.
pub fn peak_rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

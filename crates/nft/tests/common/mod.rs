//! Test helpers: a private network namespace per kernel test, and a
//! readable hex renderer for byte goldens.
#![allow(dead_code)]

/// Runs `f` on a new thread that first moves into a fresh network namespace
/// (checked: the unshare must succeed and `/proc/thread-self/ns/net` must
/// change). Returns `None`, after printing why, when not root or when the
/// namespace cannot be created; `f` then never runs, so nothing can touch
/// the host's namespace.
pub fn in_netns<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIP: kernel test needs root");
        return None;
    }
    std::thread::spawn(move || {
        let before = std::fs::read_link("/proc/thread-self/ns/net").ok();
        // SAFETY: unshare only affects this thread's namespaces.
        let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
        if rc != 0 {
            eprintln!(
                "SKIP: unshare(CLONE_NEWNET) failed: {}",
                std::io::Error::last_os_error()
            );
            return None;
        }
        let after = std::fs::read_link("/proc/thread-self/ns/net").ok();
        assert!(
            before.is_some() && after.is_some() && before != after,
            "not in a new netns; aborting"
        );
        Some(f())
    })
    .join()
    .expect("netns thread panicked")
}

/// Peak resident set size of this process, KiB.
pub fn peak_rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

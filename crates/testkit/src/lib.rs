//! Test support for kernel tests (a dev-dependency only).
//!
//! [`in_netns`] runs a closure on a thread that has moved into a fresh
//! network namespace, and proves it did before running anything: nothing a
//! kernel test does can reach the host's firewall.
//!
//! [`manpage`] renders a program's `--help` texts into its man page, so the
//! page's tests can hold the committed page to the help it documents.

pub mod manpage;

/// Run `f` on a new thread that first unshares its network namespace; the
/// namespace disappears when the thread ends. Returns `None` (after printing
/// why) when not root or when the namespace cannot be made — then `f` never
/// runs. Panics (aborting the test) if the namespace did not change.
pub fn in_netns<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    if !is_root() {
        eprintln!("SKIP: kernel test needs root");
        return None;
    }
    std::thread::spawn(move || {
        let before = std::fs::read_link("/proc/thread-self/ns/net").ok();
        // SAFETY: only the network namespace is unshared (not the file
        // table), and only for this thread.
        if let Err(e) =
            unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNET) }
        {
            eprintln!("SKIP: unshare(CLONE_NEWNET): {e}");
            return None;
        }
        let after = std::fs::read_link("/proc/thread-self/ns/net").ok();
        assert!(
            before.is_some() && after.is_some() && before != after,
            "not in a new network namespace; aborting"
        );
        Some(f())
    })
    .join()
    .expect("netns thread panicked")
}

/// Whether this process may make network namespaces (root), for tests that
/// use `ip netns` instead of [`in_netns`].
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs_in_another_namespace() {
        let host = std::fs::read_link("/proc/thread-self/ns/net").ok();
        if let Some(inner) = super::in_netns(|| std::fs::read_link("/proc/thread-self/ns/net").ok())
        {
            assert_ne!(inner, host);
        }
    }
}

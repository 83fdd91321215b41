//! The kernel's RCU grace periods made short and steady for the length of
//! a run of the command-time suites (the default of `nfkeeper bench`;
//! `--rcu-default` keeps the host's setting).
//!
//! Why: nf_tables waits for an RCU grace period when a transaction removes
//! rules, chains or hooks (flushes, deletes, restores that replace a
//! table). With the default setting a grace period lasts a few scheduler
//! ticks, so such a step of 2–3 ms of work takes 8, 12 or 16 ms depending
//! on where in the tick it started — the same for every nftables-based
//! tool, and larger than the differences the suites compare. Expedited
//! grace periods end in microseconds, leaving each tool's own work. (The
//! wait is paid when a process closes its netlink socket while deleted
//! objects await destruction, i.e. at exit of every short-lived tool; a
//! daemon that keeps its socket open does not pay it at all.)
//!
//! It is a host-wide kernel setting (not the firewall): the previous value
//! is written back when the guard drops, on SIGINT/SIGTERM/SIGHUP (the
//! signal thread of [`crate::netns::watch_signals`] calls [`restore`]), and
//! on panic.

use std::sync::Mutex;

const KNOB: &str = "/sys/kernel/rcu_expedited";

/// The value to write back, while a run has changed it.
static SAVED: Mutex<Option<String>> = Mutex::new(None);

/// Holds the setting; dropping it restores the previous value.
pub struct Expedited(());

/// Sets `/sys/kernel/rcu_expedited` to 1 until the guard drops.
pub fn expedite() -> std::io::Result<Expedited> {
    let before = std::fs::read_to_string(KNOB)?.trim().to_string();
    let mut saved = SAVED.lock().unwrap_or_else(|e| e.into_inner());
    if saved.is_none() {
        *saved = Some(before);
    }
    std::fs::write(KNOB, "1")?;
    Ok(Expedited(()))
}

/// Writes the saved value back (idempotent; a no-op when nothing changed).
pub fn restore() {
    if let Some(v) = SAVED.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = std::fs::write(KNOB, v);
    }
}

impl Drop for Expedited {
    fn drop(&mut self) {
        restore();
    }
}

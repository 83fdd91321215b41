//! The kernel's RCU grace periods made short and steady for the length of
//! a run of the command-time suites (`nfkeeper bench --rcu-expedited`; by
//! default a run keeps the host's setting, which users' kernels run with:
//! headline numbers include what a grace period costs each tool).
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

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

const KNOB: &str = "/sys/kernel/rcu_expedited";

/// The host's own value while any run has the knob changed: written by the
/// first run that changes it, read by the others, removed by the run that
/// restores it. Without it a run started while another had the knob at 1
/// took 1 for the host's value and left it there (seen on this machine).
/// A run killed before restoring leaves the file, so the next run still
/// restores the host's value.
const SAVED_FILE: &str = "/run/nfkeeper/bench-rcu-expedited.saved";

/// The value to write back, while this run has changed it.
static SAVED: Mutex<Option<String>> = Mutex::new(None);

/// Holds the setting; dropping it restores the previous value.
pub struct Expedited(());

/// The host's value: the one another run saved, else the knob's now (then
/// saved for the runs that start after this one).
fn host_value(saved: &Path) -> std::io::Result<String> {
    if let Ok(v) = std::fs::read_to_string(saved) {
        let v = v.trim();
        if v == "0" || v == "1" {
            return Ok(v.to_string());
        }
    }
    let now = std::fs::read_to_string(KNOB)?.trim().to_string();
    if let Some(dir) = saved.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(saved)
    {
        f.write_all(now.as_bytes())?;
    }
    Ok(now)
}

/// Sets `/sys/kernel/rcu_expedited` to 1 until the guard drops.
pub fn expedite() -> std::io::Result<Expedited> {
    let before = host_value(Path::new(SAVED_FILE))?;
    let mut saved = SAVED.lock().unwrap_or_else(|e| e.into_inner());
    if saved.is_none() {
        *saved = Some(before);
    }
    std::fs::write(KNOB, "1")?;
    Ok(Expedited(()))
}

/// Writes the host's value back (idempotent; a no-op when nothing
/// changed). A run that ends while another still runs gives that one the
/// host's setting for the rest of it: slower, never wrong.
pub fn restore() {
    if let Some(v) = SAVED.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = std::fs::write(KNOB, v);
        let _ = std::fs::remove_file(SAVED_FILE);
    }
}

impl Drop for Expedited {
    fn drop(&mut self) {
        restore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first run's saved value wins over what the knob says later.
    #[test]
    fn host_value_is_the_first_runs() {
        let dir = std::env::temp_dir().join(format!("nfk-rcu-{}", std::process::id()));
        let saved = dir.join("saved");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&saved, "0").unwrap();
        assert_eq!(host_value(&saved).unwrap(), "0");
        std::fs::write(&saved, "garbage").unwrap();
        if Path::new(KNOB).exists() {
            // A damaged file: the knob's value.
            let now = std::fs::read_to_string(KNOB).unwrap().trim().to_string();
            assert_eq!(host_value(&saved).unwrap(), now);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

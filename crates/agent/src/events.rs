//! The kernel's nftables notifications, so a change to nfkeeper's tables
//! is noticed within milliseconds rather than at the next periodic check.
//!
//! A thread blocks on an event socket of the agent's network namespace and
//! signals the agent once per committed transaction (its NEWGEN) that
//! touched a table named `nfkeeper_*`, or when notifications were lost.
//! The signal carries nothing: the agent reads the tables and compares
//! digests, so its own applies (whose events also arrive) cost one read and
//! are never mistaken for drift.

use tokio::sync::mpsc::Sender;

/// Start the watcher thread; `false` (with the reason) if the event socket
/// cannot be opened (then only the periodic check finds drift).
pub fn spawn(tx: Sender<()>) -> Result<(), String> {
    let mut es = nft::EventSocket::open().map_err(|e| format!("nftables events: {e}"))?;
    std::thread::Builder::new()
        .name("nft-events".into())
        .spawn(move || {
            let mut ours = false;
            loop {
                let evs = match es.recv(None) {
                    Ok(evs) => evs,
                    Err(_) => {
                        std::thread::sleep(std::time::Duration::from_millis(100));
                        continue;
                    }
                };
                for e in evs {
                    if e.overrun
                        || e.table
                            .as_deref()
                            .is_some_and(|t| t.starts_with("nfkeeper_"))
                    {
                        ours = true;
                    }
                    if (e.genid.is_some() || e.overrun) && ours {
                        ours = false;
                        // Full: a signal is already pending, which is enough.
                        if let Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) =
                            tx.try_send(())
                        {
                            return;
                        }
                    }
                }
            }
        })
        .map_err(|e| e.to_string())?;
    Ok(())
}

//! Rule dumps of many chains with their round trips on another thread.
//!
//! A dump per chain costs a round trip (~10 µs: the request, the kernel's
//! walk into a reply, the receive), so reading 20k chains waits ~200 ms on
//! the socket. [`rules_of_chains`] runs those dumps on a second socket in a
//! scoped thread, which also turns each rule into what the caller keeps of
//! it; the calling thread uses the rules of one chain while the next
//! chains are being dumped.

use std::sync::mpsc;

use crate::{Error, Family, RuleRef, Socket};

/// Batches in flight between the threads: bounds how far the dumping side
/// runs ahead.
const IN_FLIGHT: usize = 16;

/// Steps per batch handed over: one message per chain of 2–3 rules would
/// cost a thread wake-up each (20k chains: ~0.1 s more than in batches).
const BATCH: usize = 512;

/// What the dumping thread hands over: steps `f` takes in order, or the
/// error that ended the dumps.
type Handed<T> = Result<Vec<(usize, Option<T>)>, Error>;

/// The rules of `chains` (of `table`), one dump each, in this order, on
/// `other` (a socket to the same namespace, see [`Socket::sibling`]) in a
/// scoped thread that turns each into a `T` (`keep`): `f(i, Some(t))` for
/// each rule of chain `chains[i]`, then `f(i, None)` when its dump is
/// complete. `f` runs on the calling thread, which may use its own socket
/// meanwhile. The first error of either side ends both and is returned (a
/// kernel error or an interrupted dump as [`Socket::rules`] returns them).
pub fn rules_of_chains<T: Send>(
    mut other: Socket,
    family: Family,
    table: &str,
    chains: &[&str],
    keep: impl Fn(&RuleRef<'_>) -> T + Send,
    mut f: impl FnMut(usize, Option<T>) -> Result<(), Error>,
) -> Result<(), Error> {
    std::thread::scope(|sc| {
        let (tx, rx) = mpsc::sync_channel::<Handed<T>>(IN_FLIGHT);
        sc.spawn(move || {
            let mut batch: Vec<(usize, Option<T>)> = Vec::with_capacity(BATCH);
            for (i, c) in chains.iter().enumerate() {
                let r = other.rules(family, Some(table), Some(c), |r| {
                    if r.table == table && r.chain == *c {
                        batch.push((i, Some(keep(&r))));
                    }
                    if batch.len() >= BATCH {
                        let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                        // A closed channel: the reading side stopped (its
                        // error is returned).
                        tx.send(Ok(full)).map_err(|_| Error::Truncated)?;
                    }
                    Ok(())
                });
                if let Err(e) = r {
                    let _ = tx.send(Err(e));
                    return;
                }
                batch.push((i, None));
                if batch.len() >= BATCH || i + 1 == chains.len() {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    if tx.send(Ok(full)).is_err() {
                        return;
                    }
                }
            }
        });
        for handed in rx.iter() {
            for (i, t) in handed? {
                f(i, t)?;
            }
        }
        Ok(())
    })
}

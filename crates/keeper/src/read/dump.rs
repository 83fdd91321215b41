//! Dumping a table's rules from the kernel: one dump for the table or
//! one per chain (whichever the kernel walks less for), and for many
//! chains the dumps on a second socket in a thread of their own while the
//! caller builds the model from the rules before them.

use super::*;
use std::sync::mpsc;

/// How to dump all rules of a table: `Some(chains)`, one dump per chain
/// that has any, or `None`, one table-wide dump. The kernel resumes a dump
/// by skipping from the first rule of what is dumped for every 32 KiB reply
/// (~100 of our rules), so a dump of R rules costs ~R²/200 skip steps,
/// while each extra request costs about what ~250 steps do (a round trip of
/// ~10 µs against ~40 ns per step). The kernel's use count per chain (its
/// rules plus references to it) bounds each chain's rules; chains with a
/// use count of 0 have none. Choose the cheaper estimate: many small chains
/// favour one dump, a few long ones one dump each (1M rules in 1000 chains:
/// seconds instead of many minutes).
pub(crate) fn per_chain_dumps<'a>(
    chains: impl Iterator<Item = &'a nft::Chain>,
) -> Option<Vec<&'a str>> {
    let mut used: Vec<(&str, u64)> = Vec::new();
    for c in chains {
        match c.use_count {
            Some(0) => {}
            n => used.push((c.name.as_str(), u64::from(n.unwrap_or(u32::MAX / 2)))),
        }
    }
    let total: u64 = used.iter().map(|u| u.1).sum();
    let one = 250 + total.saturating_mul(total) / 200;
    let each = used.iter().fold(0u64, |acc, u| {
        acc.saturating_add(250)
            .saturating_add(u.1.saturating_mul(u.1) / 200)
    });
    (each <= one).then(|| used.into_iter().map(|u| u.0).collect())
}

/// One kernel rule as far as reading it back needs.
pub(super) struct KernelRule {
    pub(super) chain: String,
    pub(super) handle: u64,
    pub(super) userdata: Option<Vec<u8>>,
    pub(super) counters: Counters,
    /// The chain of its jump/goto verdict, if any.
    pub(super) target: Option<String>,
}

/// Rules of chain `chain` of our table `tname`, appended to `out`.
pub(super) fn dump_rules(
    sock: &mut Socket,
    fam: nft::Family,
    tname: &str,
    chain: Option<&str>,
    out: &mut Vec<KernelRule>,
) -> Result<(), nft::Error> {
    sock.rules(fam, Some(tname), chain, |r| {
        if r.table != tname || chain.is_some_and(|c| c != r.chain) {
            return Ok(());
        }
        let (counters, target) = counters_and_target(&r);
        out.push(KernelRule {
            chain: r.chain.to_string(),
            handle: r.handle.unwrap_or(0),
            userdata: r.userdata.map(<[u8]>::to_vec),
            counters,
            target,
        });
        Ok(())
    })
}

/// A kernel rule's counters (its counter expression) and the chain its
/// jump/goto verdict names, if any.
pub(crate) fn counters_and_target(r: &nft::RuleRef<'_>) -> (Counters, Option<String>) {
    let mut counters = Counters::default();
    let mut target = None;
    // Only these two kinds are decoded: the others' names are read and
    // their data skipped.
    const KINDS: &[&str] = &[nft::expr::KIND_COUNTER, nft::expr::KIND_IMMEDIATE];
    for e in r.exprs_of(KINDS) {
        match e {
            Ok(Expr::Counter { bytes, packets }) => counters = Counters { packets, bytes },
            Ok(Expr::Immediate {
                data: nft::Data::Verdict(Verdict::Jump(c) | Verdict::Goto(c)),
                ..
            }) => target = Some(c),
            _ => {}
        }
    }
    (counters, target)
}

/// Chains dumped on a thread of their own from this many on: below it the
/// thread's start (~50 µs) and second socket cost more than the overlap
/// saves (a chain's dump is ~10 µs of round trip).
pub(super) const PARALLEL_CHAINS: usize = 256;

/// Rules handed over per message between the threads.
const BATCH: usize = 512;

/// Rules of `chains` of table `tname`, one dump each, in order, to `take`:
/// the dumps on a second socket (`other`) in a scoped thread, while `take`
/// runs on the calling thread. 5k kube-proxy services (20k chains, 50k
/// rules): the dumps are 195 ms of round trips on one socket, and a full
/// sync 1.14 s → 0.95 s with them beside the reading. Rules are parsed by
/// `take` (parsing on the dumping thread made it the slower side, and its
/// allocations were freed on the other thread). An error of either side
/// ends both; the dumping side's is returned first.
pub(super) fn dump_parallel(
    mut other: Socket,
    fam: nft::Family,
    tname: &str,
    chains: &[&str],
    mut take: impl FnMut(KernelRule) -> Result<(), nft::Error>,
) -> Result<(), nft::Error> {
    std::thread::scope(|sc| {
        let (tx, rx) = mpsc::sync_channel::<Vec<KernelRule>>(8);
        let dumper = sc.spawn(move || -> Result<(), nft::Error> {
            let mut batch: Vec<KernelRule> = Vec::with_capacity(BATCH);
            for c in chains {
                dump_rules(&mut other, fam, tname, Some(c), &mut batch)?;
                if batch.len() >= BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    if tx.send(full).is_err() {
                        // The reader stopped (its error is returned).
                        return Ok(());
                    }
                }
            }
            if !batch.is_empty() {
                let _ = tx.send(batch);
            }
            Ok(())
        });
        let mut taken = Ok(());
        for batch in rx.iter() {
            for d in batch {
                taken = take(d);
                if taken.is_err() {
                    break;
                }
            }
            if taken.is_err() {
                break;
            }
        }
        // Dropping the receiver stops a dumper still sending.
        drop(rx);
        let dumped = dumper
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        dumped.and(taken)
    })
}

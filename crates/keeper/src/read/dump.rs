//! Dumping a table's rules from the kernel: one dump for the table or
//! one per chain (whichever the kernel walks less for), and for many
//! chains the dumps' round trips on a second socket in a thread of their
//! own while the caller builds the model from the rules before them.

use super::*;

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
        out.push(kernel_rule(&r));
        Ok(())
    })
}

/// What reading back needs of a dumped rule.
fn kernel_rule(r: &nft::RuleRef<'_>) -> KernelRule {
    let (counters, target) = counters_and_target(r);
    KernelRule {
        chain: r.chain.to_string(),
        handle: r.handle.unwrap_or(0),
        userdata: r.userdata.map(<[u8]>::to_vec),
        counters,
        target,
    }
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

/// Rules of `chains` of table `tname`, one dump each, in order, to `take`:
/// the dumps' round trips on a second socket (`other`) in a thread of
/// their own ([`nft::prefetch::rules_of_chains`]), which also decodes
/// them, while `take` builds the model on the calling thread (parsing the
/// rules' texts there as well made the dumping side the slower one). 5k
/// kube-proxy services (20k chains, 50k rules): the dumps are ~195 ms of
/// round trips on one socket; a full sync went from 1.14–1.24 s to
/// 0.94–1.01 s with them beside the reading.
pub(super) fn dump_parallel(
    other: Socket,
    fam: nft::Family,
    tname: &str,
    chains: &[&str],
    mut take: impl FnMut(KernelRule) -> Result<(), nft::Error>,
) -> Result<(), nft::Error> {
    nft::prefetch::rules_of_chains(other, fam, tname, chains, kernel_rule, |_, r| match r {
        Some(r) => take(r),
        None => Ok(()),
    })
}

//! The warm model: every nfkeeper table of both families as the kernel has
//! it, with where each rule and chain is in the kernel (a `keeper::State`
//! kept for the daemon's lifetime), so a write becomes the smallest batch
//! without reading anything; and the [`Source`] that keeps it in step
//! with the kernel for the transaction core.
//!
//! Invariant between groups of writes: for every table, the model equals
//! what the kernel had at generation `genid`, except tables flagged stale
//! by [`crate::coherence`] (re-read before they are used).

use crate::Shared;
use keeper::read::{read_scoped, Scope};
use keeper::state::{State, SAVE_ORDER};
use keeper::txn::{Source, Write};
use keeper::Error;
use nft::Socket;
use ruleset::{Family, TableKind};
use std::time::{Duration, Instant};

/// Tables in iptables-save order (the order listings and saves use).
pub const KINDS: [TableKind; 5] = SAVE_ORDER;

/// Attempts of one group before its writes fail as "changed concurrently".
const ATTEMPTS: u32 = 8;

/// Read every table of ours from the kernel: one dump each, all of one
/// generation.
pub fn load(sock: &mut Socket) -> Result<State, nft::Error> {
    loop {
        let mut st = State::default();
        let g0 = sock.gen()?.id;
        for f in Family::ALL {
            for kind in KINDS {
                resync(&mut st, sock, f, kind)?;
            }
        }
        // A commit elsewhere during the reads: read again, so that the
        // model is one generation's state.
        if sock.gen()?.id == g0 {
            st.genid = g0;
            return Ok(st);
        }
    }
}

/// Re-read one table from the kernel into the model.
pub fn resync(
    st: &mut State,
    sock: &mut Socket,
    f: Family,
    kind: TableKind,
) -> Result<(), nft::Error> {
    let snap = read_scoped(sock, f, kind, &Scope::Table)?;
    st.install(f, kind, snap);
    Ok(())
}

pub fn fam_name(f: Family) -> &'static str {
    match f {
        Family::Ipv4 => "ip",
        _ => "ip6",
    }
}

/// The daemon's model source: the warm state, brought up to date from
/// the nftables events before each attempt.
pub struct Warm<'a> {
    pub sh: &'a Shared,
}

/// A batch larger than this (bytes), or one deleting in bulk (a chain
/// flush, a replaced table), is committed without listening to nftables
/// events (`Coherence::pause`): the kernel then builds no notification of
/// each object. ~1 000 rules or ~10 000 set elements; below that the
/// notifications cost less than a resync would if another writer
/// committed during the pause.
const QUIET_BYTES: usize = 256 << 10;

impl Source for Warm<'_> {
    fn quiet(&mut self, bytes: usize, bulk: bool) -> bool {
        (bulk || bytes > QUIET_BYTES) && self.sh.coherence.pause(&self.sh.metrics)
    }

    fn committed(&mut self, sock: &mut Socket, expect: Option<u32>) -> Option<u32> {
        self.sh.coherence.resume(sock, expect, &self.sh.metrics)
    }

    fn prepare(
        &mut self,
        sock: &mut Socket,
        st: &mut State,
        writes: &[&Write],
        attempt: u32,
    ) -> Result<u32, Error> {
        sync(self.sh, st, sock, attempt > 0)?;
        keeper::txn::fetch_rename_handles(sock, st, writes).map_err(Error::from_nft)?;
        refresh_rewritten_counters(sock, st, writes)?;
        // What each write needs of the ipsets (the sets an ipset command
        // names, the sets rules name) is read per attempt, as direct mode
        // does: packet-path updates (`-j SET`), expiring members and
        // counters change sets without a netlink event. Only a group of
        // reads meets the sets an earlier group of reads kept, while the
        // kernel is still at their generation and all are static
        // (`keeper::ipset::kept`); what it needs beyond them is read.
        let reads = writes.iter().all(|w| match &w.work {
            keeper::txn::Work::Ipset(job) => keeper::ipset::kept::reads_only(job),
            _ => false,
        });
        if attempt == 0 && reads && st.ipset.kept_at == Some(st.genid) {
            self.sh.metrics.ipset_kept.add(writes.len() as u64);
        } else {
            st.ipset = keeper::ipset::Sets::default();
        }
        let now = keeper::ipset::now();
        for w in writes {
            if let keeper::txn::Work::Ipset(job) = &w.work {
                // `sync` brought every rule table of the model to the
                // kernel's generation: references are counted there.
                let rules = keeper::ipset::refs::Rules::Model(&st.model);
                keeper::ipset::txn::prepare(sock, &mut st.ipset, job, now, &rules)
                    .map_err(Error::from_nft)?;
            }
        }
        keeper::ipset::rules::prepare(sock, st, writes, now).map_err(Error::from_nft)?;
        Ok(st.genid)
    }

    fn invalidate(&mut self, f: Family, k: TableKind) {
        self.sh.coherence.mark(f, k);
    }

    fn backoff(&mut self, attempt: u32) -> bool {
        attempt < ATTEMPTS
    }
}

/// The counters of the chains `--noflush` restores declare (and so
/// rewrite), read from the kernel into the model: the model does not
/// follow packet counts, and without them a rewrite must replace every
/// rule it keeps to reset its counters (kube-proxy's syncs declare every
/// chain they write). O(rules of those chains), no parsing.
fn refresh_rewritten_counters(
    sock: &mut Socket,
    st: &mut State,
    writes: &[&Write],
) -> Result<(), Error> {
    for f in Family::ALL {
        st.view_mut(f).forget_counters_read();
    }
    for w in writes {
        let keeper::txn::Work::Restore(r) = &w.work else {
            continue;
        };
        if !r.noflush || r.test {
            continue;
        }
        for (kind, scope) in keeper::scope::restore_scopes(&r.input, w.family, true, r.table, "") {
            if let Scope::Part { rules_of, .. } = scope {
                keeper::read::refresh_counters(sock, st, w.family, kind, &rules_of)
                    .map_err(Error::from_nft)?;
            }
        }
    }
    Ok(())
}

/// Bring the model to the kernel's current generation: drain the events
/// up to it, then re-read the tables someone else changed. Unless `force`,
/// trusts the model without asking the kernel when the events drained show
/// nothing since (see [`crate::coherence::Coherence::quiet_since`]).
pub fn sync(sh: &Shared, st: &mut State, sock: &mut Socket, force: bool) -> Result<(), Error> {
    sh.coherence.drain(&sh.metrics);
    if !force && st.genid != 0 && sh.coherence.quiet_since(st.genid) {
        return Ok(());
    }
    let g = sock.gen().map_err(Error::from_nft)?.id;
    let mut stale = sh.coherence.take_stale();
    // Everything is re-read anyway when events were lost: no need to wait
    // for a NEWGEN that may have been among them.
    if g != st.genid && !stale.all {
        if !sh
            .coherence
            .wait_seen(g, Duration::from_secs(2), &sh.metrics)
        {
            stale.all = true;
        }
        let more = sh.coherence.take_stale();
        stale.all |= more.all;
        stale.tables.extend(more.tables);
    }
    let targets: Vec<(Family, TableKind)> = if stale.all {
        Family::ALL
            .into_iter()
            .flat_map(|f| KINDS.map(|k| (f, k)))
            .collect()
    } else {
        stale.tables.into_iter().collect()
    };
    for (f, k) in targets {
        let t0 = Instant::now();
        resync(st, sock, f, k).map_err(Error::from_nft)?;
        sh.metrics.resyncs.inc();
        crate::log::line(&format!(
            "event=resync family={} table={} us={}",
            fam_name(f),
            k.name(),
            t0.elapsed().as_micros()
        ));
    }
    st.genid = g;
    Ok(())
}

//! The one retry loop every group of writes goes through — iptables
//! commands, a restore, ipset invocations: bring the model up to date
//! ([`Source::prepare`]), plan the writes not yet answered into one batch,
//! commit it with the generation id the model was read at, and act on the
//! outcome. What differs between kinds of writes (how they are planned,
//! how the model keeps or undoes them, how a refusal is worded) is a
//! [`Plan`]; what the kernel's answers mean is decided here once:
//!
//! - applied: the plan keeps its model, the generation moves on; writes
//!   the plan left unanswered (deferred: a name another write of the
//!   group renamed away is only free after the commit) are planned into
//!   the next batch;
//! - a message of write `i` refused: the plan answers `i` (or plans it
//!   differently) and the other writes are replayed;
//! - refused as a whole (no write's message): a generation conflict, the
//!   group is replayed after the model is brought up to date;
//! - no verdict at all (replies lost) while the generation moved, or a
//!   socket error: the fate is unknown; every open write is answered
//!   [`Error::Unconfirmed`] and what the plan touched is read again.

use super::{nothing_applied, Source, Stats, Write, NO_VERDICT};
use crate::error::Error;
use crate::plan::Pending;
use crate::state::State;
use nft::socket::CommitReport;
use nft::{Socket, Tag};
use std::time::Instant;

/// One kind of write, as the driver sees it. Calls for one attempt come
/// in this order: [`Plan::plan`], then exactly one of [`Plan::kept`] and
/// [`Plan::undone`], then (for a refusal) [`Plan::refused`].
pub(crate) trait Plan {
    type Answer;

    /// Plan every write `i` with `open[i]` into `pending` (tagged with
    /// `i`, or finer tags the plan maps back in [`Plan::refused`]), on a
    /// model prepared for this attempt; the answer of each write planned
    /// (an error leaves nothing of it in `pending` or the model), `None`
    /// for a write deferred to the batch after this one (never the first
    /// open write: each round answers at least one).
    fn plan(
        &mut self,
        st: &mut State,
        src: &mut dyn Source,
        pending: &mut Pending,
        open: &[bool],
    ) -> Vec<Option<Self::Answer>>;

    /// The batch was applied (`rep`), or was empty (`None`): keep what the
    /// model did. `answers` are [`Plan::plan`]'s.
    fn kept(
        &mut self,
        sock: &mut Socket,
        st: &mut State,
        src: &mut dyn Source,
        pending: &Pending,
        rep: Option<&CommitReport>,
        answers: &[Option<Self::Answer>],
    );

    /// The batch was not applied (`unknown`: or its fate is unknown): undo
    /// what the model did and hand what may differ from the kernel to
    /// `src`.
    fn undone(&mut self, st: &mut State, src: &mut dyn Source, pending: &Pending, unknown: bool);

    /// The write whose messages carry `tag`, if any (default: the tag is
    /// the write's index in the group).
    fn write_of(&self, tag: Tag) -> Option<usize> {
        Some(tag as usize)
    }

    /// Message `seq`, tagged `tag`, of a write was refused with `errno`:
    /// the write's answer, or `None` to replay the group (the plan then
    /// plans the write differently, or reads more for it).
    fn refused(
        &mut self,
        sock: &mut Socket,
        src: &mut dyn Source,
        pending: &Pending,
        refusal: (Tag, i32, u32),
    ) -> Option<Self::Answer>;

    /// The answer of write `i` failing with `e` outside the model (busy,
    /// a read error, an unconfirmed commit).
    fn failed(&self, i: usize, e: &Error) -> Self::Answer;
}

/// Run `group` through `plan` until every write is answered; one answer
/// per write, in order.
pub(crate) fn drive<P: Plan>(
    sock: &mut Socket,
    st: &mut State,
    src: &mut dyn Source,
    group: &[&Write],
    stats: &mut Stats,
    plan: &mut P,
) -> Vec<P::Answer> {
    let n = group.len();
    let mut fin: Vec<Option<P::Answer>> = (0..n).map(|_| None).collect();
    let fail_open = |fin: &mut Vec<Option<P::Answer>>, plan: &P, e: &Error| {
        for (i, f) in fin.iter_mut().enumerate() {
            if f.is_none() {
                *f = Some(plan.failed(i, e));
            }
        }
    };
    let mut attempt = 0u32;
    loop {
        let open: Vec<bool> = fin.iter().map(Option::is_none).collect();
        let writes: Vec<&Write> = (0..n).filter(|i| open[*i]).map(|i| group[i]).collect();
        if writes.is_empty() {
            break;
        }
        if attempt > 0 && !src.backoff(attempt) {
            fail_open(&mut fin, plan, &Error::Busy);
            break;
        }
        let genid = match src.prepare(sock, st, &writes, attempt) {
            Ok(g) => g,
            Err(Error::Busy) => {
                stats.conflicts += 1;
                attempt += 1;
                continue;
            }
            Err(e) => {
                fail_open(&mut fin, plan, &e);
                break;
            }
        };
        let mut pending = Pending::new(sock.batch(Some(genid)));
        let mut answers = plan.plan(st, src, &mut pending, &open);
        if pending.is_empty() {
            if let Err(e) = pending.reset_counters(sock) {
                fail_open(&mut fin, plan, &Error::from_nft(e));
                break;
            }
            plan.kept(sock, st, src, &pending, None, &answers);
            settle(&mut fin, &mut answers);
            continue;
        }
        let t0 = Instant::now();
        let quiet = src.quiet(pending.batch_ref().bytes().len(), pending.bulk);
        let rep = sock.commit(pending.batch());
        stats.commit_time += t0.elapsed();
        let mut now = None;
        if quiet {
            let expect = match &rep {
                Ok(r) if r.outcome.is_ok() => Some(genid.wrapping_add(1)),
                Ok(r) if !r.outcome.errors.is_empty() => Some(genid),
                _ => None,
            };
            now = src.committed(sock, expect);
        }
        match rep {
            Ok(rep) if rep.outcome.is_ok() => {
                stats.commits += 1;
                plan.kept(sock, st, src, &pending, Some(&rep), &answers);
                st.genid = now.unwrap_or(genid.wrapping_add(1));
                match pending.reset_counters(sock) {
                    Ok(()) => settle(&mut fin, &mut answers),
                    // Committed, but not every counter zeroed: say so.
                    Err(e) => fail_open(&mut fin, plan, &Error::from_nft(e)),
                }
                // Writes the plan left open (deferred to a batch after
                // this one) go round again; each round answers at least
                // its first open write, so this ends.
                continue;
            }
            Ok(rep) if rep.outcome.errors.is_empty() && !nothing_applied(sock, genid) => {
                // No verdict (replies lost) and the generation moved: the
                // batch may have committed; replaying could apply it twice.
                plan.undone(st, src, &pending, true);
                fail_open(&mut fin, plan, &Error::Unconfirmed(NO_VERDICT.into()));
                break;
            }
            Ok(rep) => {
                plan.undone(st, src, &pending, false);
                let first = rep.outcome.errors.first();
                // A registry beyond its capacity: planned again with that
                // table's new chains as kernel chains (this ends: the
                // table's registry gets no more adds).
                let full = first
                    .filter(|e| -e.code == libc::ENFILE)
                    .and_then(|e| pending.registry_adds_at(e.seq));
                if let Some((f, k)) = full {
                    st.mark_registry_full(f, k);
                    continue;
                }
                let refusal = first.and_then(|e| e.tag.map(|t| (t, -e.code, e.seq)));
                match refusal.and_then(|r| plan.write_of(r.0).filter(|i| *i < n).map(|i| (i, r))) {
                    Some((i, r)) => {
                        if let Some(a) = plan.refused(sock, src, &pending, r) {
                            fin[i] = Some(a);
                        }
                    }
                    // The batch as a whole: a generation conflict. (A write
                    // refused alone is not a conflict: each such replay
                    // answers one write or changes how one is planned, so
                    // they end.)
                    _ => {
                        stats.conflicts += 1;
                        attempt += 1;
                    }
                }
            }
            Err(e) => {
                // Sent or not, the fate is unknown.
                plan.undone(st, src, &pending, true);
                fail_open(&mut fin, plan, &Error::Unconfirmed(e.to_string()));
                break;
            }
        }
    }
    fin.into_iter()
        .enumerate()
        .map(|(i, a)| a.unwrap_or_else(|| plan.failed(i, &Error::Busy)))
        .collect()
}

/// Each open write's answer is what the plan made of it.
fn settle<A>(fin: &mut [Option<A>], answers: &mut [Option<A>]) {
    for (f, a) in fin.iter_mut().zip(answers.iter_mut()) {
        if f.is_none() {
            *f = a.take();
        }
    }
}

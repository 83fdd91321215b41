//! An iptables-restore payload, alone in its transaction. Tables it
//! replaces are written whole at the end; with `--noflush` each line is
//! planned as a command. The model keeps the change only if the kernel
//! took it; a refusal names the input line that asked for the object.

use super::drive::Plan;
use super::{
    after_commit, describe, named_tables, presence, restore_presence, Restore, Source, Write,
};
use crate::error::{Error, Failure};
use crate::plan::{replay, Pending, PlanOpts, Planner};
use crate::state::State;
use iptables::exec::{restore_open, RestoreOpts, RestoreStats, Reverse};
use nft::socket::CommitReport;
use nft::{Socket, Tag};
use ruleset::{Family, TableKind};
use std::collections::HashSet;

pub(super) struct RestorePlan<'a> {
    w: &'a Write,
    job: &'a Restore,
    opts: PlanOpts,
    /// Replayed with plain appends (a run refused one of its keys).
    plain: bool,
    /// Of the attempt being made: how to undo it in the model, and what
    /// to put back if its batch is abandoned.
    reverse: Option<Reverse>,
    present0: [Vec<TableKind>; 2],
    places0: std::collections::HashMap<String, crate::ipset::Place>,
}

impl<'a> RestorePlan<'a> {
    pub(super) fn new(w: &'a Write, job: &'a Restore, opts: PlanOpts) -> RestorePlan<'a> {
        RestorePlan {
            w,
            job,
            opts,
            plain: false,
            reverse: None,
            present0: Default::default(),
            places0: Default::default(),
        }
    }

    fn touched(&self) -> HashSet<(Family, TableKind)> {
        named_tables(self.w, self.job).into_iter().collect()
    }

    /// The model is back: put back presence and ipset places, and have
    /// `src` read the restore's tables again (the planner may have moved
    /// kernel locations in the view, e.g. a rename moves its chain's
    /// handle, which a long-lived view must not keep).
    fn back(&self, st: &mut State, src: &mut dyn Source) {
        restore_presence(st, &self.present0);
        st.ipset.places = self.places0.clone();
        for (f, k) in named_tables(self.w, self.job) {
            src.invalidate(f, k);
        }
    }
}

impl Plan for RestorePlan<'_> {
    type Answer = Result<RestoreStats, Failure>;

    fn plan(
        &mut self,
        st: &mut State,
        src: &mut dyn Source,
        pending: &mut Pending,
        _open: &[bool],
    ) -> Vec<Option<Self::Answer>> {
        let (w, job) = (self.w, self.job);
        let o = RestoreOpts {
            family: w.family,
            noflush: job.noflush,
            counters: job.counters,
            test: job.test,
            table: job.table,
            prog: &w.prog,
        };
        self.present0 = presence(st);
        self.places0 = st.ipset.places.clone();
        self.reverse = None;
        pending.tails = std::mem::take(&mut st.tails);
        let start = pending.mark(st.view(w.family));
        let o2 = PlanOpts {
            plain_appends: self.opts.plain_appends || self.plain,
            ..self.opts
        };
        let changes_raw = named_tables(w, job).contains(&(w.family, TableKind::Raw));
        let had_helpers =
            changes_raw && compile::replay::has_helpers(st.model.table(w.family, TableKind::Raw));
        let (rs, view, sets) = st.model_view_ipsets(w.family);
        let mut planner = Planner::new(w.family, view, pending, o2).with_ipsets(sets);
        let (rstats, reverse) = match restore_open(rs, &job.input, &o, &mut planner) {
            Ok(x) => x,
            Err(f) => {
                // The restore undid itself in the model.
                pending.truncate(start, st.view_mut(w.family));
                self.back(st, src);
                return vec![Some(Err(f.into()))];
            }
        };
        if job.test {
            pending.truncate(start, st.view_mut(w.family));
            return vec![Some(Ok(rstats))];
        }
        // The replay of raw's helper rules is checked on the whole new
        // table, before it is written (while the lines of its rules are
        // known): a refusal names the line of the rule it cannot replay.
        let refused = if changes_raw {
            replay::check(rs.table(w.family, TableKind::Raw), w.family)
                .err()
                .map(|(id, e)| {
                    let line = planner
                        .p
                        .fresh_tags
                        .get(&(w.family, TableKind::Raw))
                        .and_then(|ft| ft.rules.get(&id))
                        .map_or(planner.p.tag as usize, |t| *t as usize);
                    (line, e)
                })
        } else {
            None
        };
        let finished = match refused {
            Some(x) => Err(x),
            None => planner.finish(rs).map_err(|e| (planner.p.tag as usize, e)),
        };
        if let Err((line, e)) = finished {
            reverse.undo(&mut st.model);
            pending.truncate(start, st.view_mut(w.family));
            self.back(st, src);
            return vec![Some(Err(Failure {
                line,
                err: Error::Command(e),
            }))];
        }
        if changes_raw {
            let t = st.model.table(w.family, TableKind::Raw);
            replay::emit(pending, w.family, t, had_helpers);
        }
        self.reverse = Some(reverse);
        vec![Some(Ok(rstats))]
    }

    fn kept(
        &mut self,
        sock: &mut Socket,
        st: &mut State,
        src: &mut dyn Source,
        pending: &Pending,
        rep: Option<&CommitReport>,
        _answers: &[Option<Self::Answer>],
    ) {
        let Some(reverse) = self.reverse.take() else {
            return;
        };
        reverse.keep(&mut st.model);
        if let Some(rep) = rep {
            after_commit(st, src, self.opts, pending, rep, &self.touched());
            crate::ipset::rules::collect(sock, st, &crate::ipset::rules::removing_tables(self.w));
        }
    }

    fn undone(&mut self, st: &mut State, src: &mut dyn Source, pending: &Pending, unknown: bool) {
        if let Some(reverse) = self.reverse.take() {
            reverse.undo(&mut st.model);
        }
        restore_presence(st, &self.present0);
        st.ipset.places = self.places0.clone();
        // Views of replaced tables were forgotten when the restore started
        // them; side effects as for commands.
        for key in self.touched() {
            src.invalidate(key.0, key.1);
        }
        if !unknown {
            for key in &pending.side_effects {
                src.invalidate(key.0, key.1);
            }
        }
    }

    fn write_of(&self, _tag: Tag) -> Option<usize> {
        Some(0)
    }

    fn refused(
        &mut self,
        sock: &mut Socket,
        src: &mut dyn Source,
        pending: &Pending,
        (tag, errno, seq): (Tag, i32, u32),
    ) -> Option<Self::Answer> {
        let line = tag as usize;
        // A run refused a key it already has, or had no room for it:
        // replay the restore with plain appends.
        if matches!(errno, libc::EEXIST | libc::ENFILE) && !pending.joined.is_empty() && !self.plain
        {
            self.plain = true;
            return None;
        }
        if let Some(e) = src.explain(sock, self.w, errno) {
            return Some(Err(Failure { line, err: e }));
        }
        if src.widen(self.w, errno) {
            return None;
        }
        Some(Err(Failure {
            line,
            err: Error::Refused(describe(pending, seq, errno)),
        }))
    }

    fn failed(&self, _: usize, e: &Error) -> Self::Answer {
        Err(Failure {
            line: 0,
            err: e.clone(),
        })
    }
}

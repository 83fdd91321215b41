//! A group of iptables command writes (and syncs) as one transaction:
//! each write applied to the model under savepoints of the tables it
//! names, mirrored into the batch; a write the model refuses is cut out
//! of both; the replay of raw's `-j CT --helper` rules rebuilt for the raw
//! tables the group changed (`crate::plan::replay`).

use super::drive::Plan;
use super::{after_commit, describe, kinds_of, presence, restore_presence, Source, Work, Write};
use crate::error::Error;
use crate::plan::{replay, Pending, PlanOpts, Planner};
use crate::state::State;
use nft::socket::CommitReport;
use nft::{Socket, Tag};
use ruleset::{Family, TableKind};
use std::collections::HashSet;

pub(super) struct Cmds<'g> {
    group: &'g [&'g Write],
    opts: PlanOpts,
    /// Writes replayed with plain appends (a run refused one of their keys).
    plain: HashSet<usize>,
    /// Of the attempt being made: tables written, and what to put back if
    /// its batch is abandoned.
    touched: HashSet<(Family, TableKind)>,
    present0: [Vec<TableKind>; 2],
    places0: std::collections::HashMap<String, crate::ipset::Place>,
}

impl<'g> Cmds<'g> {
    pub(super) fn new(group: &'g [&'g Write], opts: PlanOpts) -> Cmds<'g> {
        Cmds {
            group,
            opts,
            plain: HashSet::new(),
            touched: HashSet::new(),
            present0: Default::default(),
            places0: Default::default(),
        }
    }

    fn end_model(&self, st: &mut State, keep: bool) {
        for (f, k) in &self.touched {
            let t = st.model.table_mut(*f, *k);
            if keep {
                if let Some(log) = t.commit_log() {
                    st.garbage.push(log);
                }
            } else {
                t.rollback();
            }
        }
    }
}

impl Plan for Cmds<'_> {
    type Answer = Result<String, Error>;

    fn plan(
        &mut self,
        st: &mut State,
        _src: &mut dyn Source,
        pending: &mut Pending,
        open: &[bool],
    ) -> Vec<Option<Self::Answer>> {
        let group = self.group;
        self.present0 = presence(st);
        self.places0 = st.ipset.places.clone();
        self.touched.clear();
        pending.tails = std::mem::take(&mut st.tails);
        // Raw tables the group changes: whether each had helper rules, and
        // the last write that changed it (its tag goes on the replay).
        let mut raw: Vec<(Family, bool, Option<usize>)> = Vec::new();
        for w in group
            .iter()
            .filter(|w| kinds_of(w).contains(&TableKind::Raw))
        {
            if !raw.iter().any(|(f, ..)| *f == w.family) {
                let t = st.model.table(w.family, TableKind::Raw);
                raw.push((w.family, compile::replay::has_helpers(t), None));
            }
        }
        let mut outs: Vec<Option<Self::Answer>> = (0..group.len()).map(|_| None).collect();
        for (i, w) in group.iter().enumerate() {
            // After a deferred write, the later ones wait too: each is
            // planned on what the writes before it made, in group order.
            if !open[i] || pending.deferred {
                continue;
            }
            let Work::Cmds(cmds) = &w.work else {
                outs[i] = Some(Ok(String::new()));
                continue;
            };
            pending.set_tag(i as Tag);
            let mark = pending.mark(st.view(w.family));
            let places_before = st.ipset.places.clone();
            let mut sps = Vec::new();
            for k in kinds_of(w) {
                let t = st.model.table_mut(w.family, k);
                t.begin();
                sps.push((k, t.savepoint().expect("transaction open")));
                self.touched.insert((w.family, k));
            }
            let o = PlanOpts {
                plain_appends: self.opts.plain_appends || self.plain.contains(&i),
                ..self.opts
            };
            let mut out = String::new();
            let mut r = Ok(());
            for (j, p) in cmds.iter().enumerate() {
                let (t, view, sets) = st.parts_ipsets(w.family, p.table);
                let mut planner = Planner::new(w.family, view, pending, o).with_ipsets(sets);
                r = planner.run(p.table, t, p.clone(), &mut out).map_err(|e| {
                    if cmds.len() > 1 {
                        Error::CommandAt { index: j, err: e }
                    } else {
                        Error::Command(e)
                    }
                });
                if r.is_err() {
                    break;
                }
            }
            let changes_raw = kinds_of(w).contains(&TableKind::Raw);
            if r.is_ok() && changes_raw {
                let t = st.model.table(w.family, TableKind::Raw);
                if let Err((_, e)) = replay::check(t, w.family) {
                    r = Err(Error::Command(e));
                }
            }
            match r {
                Ok(()) => {
                    outs[i] = Some(Ok(out));
                    if changes_raw {
                        if let Some(x) = raw.iter_mut().find(|x| x.0 == w.family) {
                            x.2 = Some(i);
                        }
                    }
                }
                Err(e) => {
                    for (k, sp) in sps {
                        st.model.table_mut(w.family, k).rollback_to(sp);
                    }
                    pending.truncate(mark, st.view_mut(w.family));
                    st.ipset.places = places_before;
                    // A deferred write stays open: the driver plans it
                    // again in the next batch.
                    if !pending.deferred {
                        outs[i] = Some(Err(e));
                    }
                }
            }
        }
        for (f, had, last) in &raw {
            if let Some(i) = last {
                pending.set_tag(*i as Tag);
                replay::emit(pending, *f, st.model.table(*f, TableKind::Raw), *had);
            }
        }
        outs
    }

    fn kept(
        &mut self,
        sock: &mut Socket,
        st: &mut State,
        src: &mut dyn Source,
        pending: &Pending,
        rep: Option<&CommitReport>,
        answers: &[Option<Self::Answer>],
    ) {
        self.end_model(st, true);
        let Some(rep) = rep else { return };
        after_commit(st, src, self.opts, pending, rep, &self.touched);
        let removing: Vec<(Family, TableKind)> = self
            .group
            .iter()
            .zip(answers)
            .filter(|(_, a)| a.as_ref().is_some_and(|r| r.is_ok()))
            .flat_map(|(w, _)| crate::ipset::rules::removing_tables(w))
            .collect();
        crate::ipset::rules::collect(sock, st, &removing);
    }

    fn undone(&mut self, st: &mut State, src: &mut dyn Source, pending: &Pending, unknown: bool) {
        self.end_model(st, false);
        restore_presence(st, &self.present0);
        st.ipset.places = self.places0.clone();
        if unknown {
            for (f, k) in &self.touched {
                src.invalidate(*f, *k);
            }
        } else {
            for (f, k) in &pending.side_effects {
                src.invalidate(*f, *k);
            }
        }
    }

    fn refused(
        &mut self,
        sock: &mut Socket,
        src: &mut dyn Source,
        pending: &Pending,
        (tag, errno, seq): (Tag, i32, u32),
    ) -> Option<Self::Answer> {
        let i = tag as usize;
        let w = self.group[i];
        // A run refused a key it already has, or had no room for it:
        // replay the write with plain appends.
        if matches!(errno, libc::EEXIST | libc::ENFILE)
            && pending.joined.contains(&(i as Tag))
            && self.plain.insert(i)
        {
            return None;
        }
        if let Some(e) = src.explain(sock, w, errno) {
            return Some(Err(e));
        }
        if src.widen(w, errno) {
            return None;
        }
        Some(Err(Error::Refused(describe(pending, seq, errno))))
    }

    fn failed(&self, _: usize, e: &Error) -> Self::Answer {
        Err(e.clone())
    }
}

//! The transaction core, shared by direct mode and the daemon: a group of
//! writes applied to the model with savepoints, mirrored into one batch,
//! committed with the generation id the model was read at; a write the
//! model or the kernel refuses is cut out and the rest replayed; a
//! generation conflict is replayed after the model is brought up to date;
//! handles of created objects are learnt from the kernel's echoes.
//!
//! Where the model comes from is the caller's [`Source`]: read for each
//! attempt (direct mode, [`crate::direct`]) or kept warm by following the
//! kernel's events (the daemon). Everything else is here, so both modes
//! accept, refuse and word the same input the same way.
//!
//! Contract: every write gets exactly one [`Done`]; a write answered `Ok`
//! is in the kernel; a write answered with an error left nothing in the
//! kernel (except [`Error::Unconfirmed`]: unknown); the model ends equal
//! to what the kernel holds for every table the group touched, or those
//! tables are handed to [`Source::invalidate`].
//!
//! One retry loop serves every kind of write (`drive`); what differs is a
//! plan per kind: `cmds` (iptables commands and syncs, grouped), `restore`
//! (an iptables-restore payload, alone), and `crate::ipset::txn` (ipset
//! invocations, grouped).

mod cmds;
mod drive;
mod restore;

pub(crate) use drive::Plan;

use crate::error::{Error, Failure, Refusal};
use crate::plan::{Pending, PlanOpts};
use crate::state::State;
use iptables::exec::RestoreStats;
use iptables::parse::Parsed;
use nft::Object;
use nft::{msg, Socket};
use ruleset::{Family, TableKind};
use std::collections::HashSet;
use std::time::Duration;

/// What a write does.
pub enum Work {
    /// iptables commands applied as one unit (a command line: one; typed
    /// operations: all or none).
    Cmds(Vec<Parsed>),
    /// An iptables-restore payload (always alone in its transaction).
    Restore(Restore),
    /// Nothing: only bring the model up to date.
    Sync,
    /// An ipset invocation (see [`crate::ipset`]); consecutive ones share
    /// a transaction.
    Ipset(crate::ipset::Job),
}

/// An iptables-restore invocation.
#[derive(Clone, Debug)]
pub struct Restore {
    pub input: String,
    pub noflush: bool,
    pub counters: bool,
    pub test: bool,
    pub table: Option<TableKind>,
}

/// One write of a group.
pub struct Write {
    pub family: Family,
    /// Program name for messages ("iptables", "ip6tables-restore" …).
    pub prog: String,
    pub work: Work,
}

/// The answer to one write.
#[derive(Debug)]
pub enum Done {
    /// The commands' output (listings of `-L -Z`), or why they failed.
    Cmds(Result<String, Error>),
    Restore(Result<RestoreStats, Failure>),
    Sync(Result<(), Error>),
    /// ipset's output and exit status (failures included).
    Ipset(ipset::exec::Output),
}

impl Done {
    pub fn is_ok(&self) -> bool {
        match self {
            Done::Cmds(r) => r.is_ok(),
            Done::Restore(r) => r.is_ok(),
            Done::Sync(r) => r.is_ok(),
            Done::Ipset(o) => o.code == 0,
        }
    }
}

/// Where the model comes from and how it is kept in step with the kernel.
pub trait Source {
    /// Bring `st` up to date for `writes` (the writes of the group not yet
    /// answered) and return the generation the batch must carry. `attempt`
    /// is 0 for the first try; later ones follow a conflict, after which
    /// nothing cached may be trusted. `Err(Error::Busy)` counts as a
    /// conflict (e.g. a dump interrupted by a concurrent change).
    fn prepare(
        &mut self,
        sock: &mut Socket,
        st: &mut State,
        writes: &[&Write],
        attempt: u32,
    ) -> Result<u32, Error>;

    /// The kernel refused write `w` with `errno` although the model took
    /// it: the model did not see what the kernel saw. `Some(error)` words
    /// the refusal (reading what it needs); `None` if it cannot.
    fn explain(&mut self, _sock: &mut Socket, _w: &Write, _errno: i32) -> Option<Error> {
        None
    }

    /// Whether reading more (whole tables) for write `w` may let the
    /// model word a refusal with `errno` itself; if so the source reads
    /// more for it from the next [`Source::prepare`] on.
    fn widen(&mut self, _w: &Write, _errno: i32) -> bool {
        false
    }

    /// Table `k` of family `f` in `st` may no longer be what the kernel
    /// holds: read it again before it is used.
    fn invalidate(&mut self, f: Family, k: TableKind);

    /// A batch of `bytes` is about to be committed (`bulk`: it also
    /// deletes objects in bulk, see [`Pending::bulk`]): whether the source
    /// stops following the kernel's notifications for it (a source that
    /// follows them pays for the kernel building one per object of its own
    /// commits). If so, [`Source::committed`] follows the commit.
    fn quiet(&mut self, _bytes: usize, _bulk: bool) -> bool {
        false
    }

    /// After a commit [`Source::quiet`] agreed to: `expect` is the
    /// generation the kernel is at if nobody else committed meanwhile
    /// (`None`: unknown, the commit's fate is). Returns the generation the
    /// kernel is at when the source could tell that nobody else committed
    /// (a batch the kernel found nothing to do in leaves the generation
    /// where it was: one before `expect`).
    fn committed(&mut self, _sock: &mut Socket, _expect: Option<u32>) -> Option<u32> {
        None
    }

    /// Before attempt `attempt` (≥ 1) after a conflict: wait a little, or
    /// give up (false: the writes fail as busy).
    fn backoff(&mut self, attempt: u32) -> bool;
}

/// What one commit cost, for metrics.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Kernel commits that applied something.
    pub commits: u32,
    /// Attempts that hit a generation conflict.
    pub conflicts: u32,
    /// Time spent in kernel commits.
    pub commit_time: Duration,
}

/// Apply `writes` in order: consecutive commands and syncs as one
/// transaction, each restore alone. Returns one [`Done`] per write.
pub fn apply(
    sock: &mut Socket,
    st: &mut State,
    src: &mut dyn Source,
    opts: PlanOpts,
    writes: &[Write],
    stats: &mut Stats,
) -> Vec<Done> {
    let mut done: Vec<Option<Done>> = (0..writes.len()).map(|_| None).collect();
    let mut from = 0;
    while from < writes.len() {
        if let Work::Restore(r) = &writes[from].work {
            let w = [&writes[from]];
            let mut plan = restore::RestorePlan::new(&writes[from], r, opts);
            let mut answers = drive::drive(sock, st, src, &w, stats, &mut plan);
            done[from] = answers.pop().map(Done::Restore);
            from += 1;
            continue;
        }
        // A run of ipset writes, or of iptables commands and syncs.
        let ipset = matches!(writes[from].work, Work::Ipset(_));
        let to = writes[from..]
            .iter()
            .position(|w| {
                matches!(w.work, Work::Restore(_)) || matches!(w.work, Work::Ipset(_)) != ipset
            })
            .map_or(writes.len(), |p| from + p);
        let group: Vec<&Write> = writes[from..to].iter().collect();
        let answers: Vec<Done> = if ipset {
            let mut plan = crate::ipset::txn::IpsetPlan::new(&group);
            drive::drive(sock, st, src, &group, stats, &mut plan)
                .into_iter()
                .map(Done::Ipset)
                .collect()
        } else {
            let mut plan = cmds::Cmds::new(&group, opts);
            drive::drive(sock, st, src, &group, stats, &mut plan)
                .into_iter()
                .map(Done::Cmds)
                .collect()
        };
        for (i, d) in answers.into_iter().enumerate() {
            done[from + i] = Some(d);
        }
        from = to;
    }
    done.into_iter()
        .map(|d| d.unwrap_or(Done::Sync(Err(Error::Busy))))
        .collect()
}

/// Tables a write of commands touches.
pub(super) fn kinds_of(w: &Write) -> Vec<TableKind> {
    let mut v: Vec<TableKind> = match &w.work {
        Work::Cmds(c) => c.iter().map(|p| p.table).collect(),
        _ => Vec::new(),
    };
    v.sort_by_key(|k| k.index());
    v.dedup();
    v
}

/// Which tables of each family exist, to put back if a batch is abandoned.
pub(super) fn presence(st: &State) -> [Vec<TableKind>; 2] {
    Family::ALL.map(|f| {
        TableKind::ALL
            .into_iter()
            .filter(|k| st.exists(f, *k))
            .collect()
    })
}

pub(super) fn restore_presence(st: &mut State, p: &[Vec<TableKind>; 2]) {
    for f in Family::ALL {
        st.view_mut(f).present = p[f.index()].iter().copied().collect();
    }
}

/// What a batch without any answer from the kernel is reported as.
pub(super) const NO_VERDICT: &str = "the kernel's answer to the transaction was lost";

/// After a batch got no verdict (its replies lost): whether the kernel is
/// still at generation `genid`, so nothing of it was applied and it may be
/// replayed. O(1): one GETGEN.
pub(super) fn nothing_applied(sock: &mut Socket, genid: u32) -> bool {
    sock.gen().is_ok_and(|g| g.id == genid)
}

/// After a committed batch: learn the echoed handles; tables whose echoes
/// were lost, and tables with foreign objects the batch touched (their
/// list may have changed), are read again before next use.
pub(super) fn after_commit(
    st: &mut State,
    src: &mut dyn Source,
    opts: PlanOpts,
    pending: &Pending,
    rep: &nft::socket::CommitReport,
    touched: &HashSet<(Family, TableKind)>,
) {
    if opts.echo {
        for f in Family::ALL {
            let missing = pending.settle(f, st.view_mut(f), &rep.outcome.echoes);
            if missing > 0 || rep.overrun {
                for (tf, k) in touched.iter().filter(|(tf, _)| *tf == f) {
                    src.invalidate(*tf, *k);
                }
            }
        }
    }
    for key in touched {
        if st.foreign.get(key).is_some_and(|v| !v.is_empty()) {
            src.invalidate(key.0, key.1);
        }
    }
}

/// What the refused message `seq` of `pending` did, in iptables-nft's
/// terms.
pub(super) fn describe(pending: &Pending, seq: u32, errno: i32) -> Refusal {
    let mut r = Refusal {
        errno,
        op: None,
        object: String::new(),
    };
    let Some(m) = pending.batch_ref().message(seq) else {
        return r;
    };
    let Ok(nf) = m.nf() else { return r };
    let Ok(fam) = nft::Family::from_u8(nf.family) else {
        return r;
    };
    let flags = m.flags;
    use nft::netlink::{NLM_F_APPEND, NLM_F_REPLACE};
    match m.ty & 0xff {
        msg::NEWRULE | msg::DELRULE => {
            let chain = nft::Rule::parse(fam, nf.attrs.clone())
                .map(|x| x.chain)
                .unwrap_or_default();
            r.op = Some(match m.ty & 0xff {
                msg::DELRULE if chain.is_empty() => "TABLE_FLUSH",
                msg::DELRULE => "RULE_DELETE",
                _ if flags & NLM_F_REPLACE != 0 => "RULE_REPLACE",
                _ if flags & NLM_F_APPEND != 0 => "RULE_APPEND",
                _ => "RULE_INSERT",
            });
            r.object = format!("rule in chain {chain}");
        }
        msg::NEWCHAIN | msg::DELCHAIN => {
            let c = nft::Chain::parse(fam, nf.attrs.clone()).unwrap_or_default();
            r.op = Some(match m.ty & 0xff {
                msg::DELCHAIN => "CHAIN_DEL",
                _ if c.handle.is_some() => "CHAIN_RENAME",
                _ if c.policy.is_some() || c.counters.is_some() => "CHAIN_UPDATE",
                _ => "CHAIN_USER_ADD",
            });
            r.object = format!("chain {}", c.name);
        }
        msg::NEWTABLE | msg::DELTABLE => {
            let t = nft::Table::parse(fam, nf.attrs.clone()).unwrap_or_default();
            r.op = Some(if m.ty & 0xff == msg::NEWTABLE {
                "TABLE_ADD"
            } else {
                "TABLE_FLUSH"
            });
            r.object = format!("table {}", t.name);
        }
        msg::NEWSET | msg::DELSET | msg::NEWSETELEM | msg::DELSETELEM => {
            let name = if matches!(m.ty & 0xff, msg::NEWSET | msg::DELSET) {
                nft::Set::parse(fam, nf.attrs.clone())
                    .map(|s| s.name)
                    .unwrap_or_default()
            } else {
                match nft::SetElems::parse(fam, nf.attrs.clone()) {
                    Ok(es) if es.set.is_empty() => es
                        .set_id
                        .and_then(|id| set_created(pending, seq, fam, id))
                        .unwrap_or_default(),
                    Ok(es) => es.set,
                    Err(_) => String::new(),
                }
            };
            r.op = Some(match m.ty & 0xff {
                msg::NEWSET => "SET_ADD",
                msg::DELSET => "SET_DEL",
                msg::NEWSETELEM => "SET_ELEM_ADD",
                _ => "SET_ELEM_DEL",
            });
            r.object = format!("set {name}");
        }
        _ => {}
    }
    r
}

/// The name of the set with batch-local id `id` that a message before
/// `seq` of `pending` creates (elements of a set made in the same batch
/// name it by that id only). O(messages before `seq`), on a refusal only.
fn set_created(pending: &Pending, seq: u32, fam: nft::Family, id: u32) -> Option<String> {
    let b = pending.batch_ref();
    (b.first_seq()..seq).rev().find_map(|q| {
        let m = b.message(q)?;
        if m.ty & 0xff != msg::NEWSET {
            return None;
        }
        let s = nft::Set::parse(fam, m.nf().ok()?.attrs.clone()).ok()?;
        (s.id == Some(id)).then_some(s.name)
    })
}

/// The tables a restore names (those it may change).
pub(super) fn named_tables(w: &Write, job: &Restore) -> Vec<(Family, TableKind)> {
    crate::scope::restore_tables(&job.input, job.table)
        .into_iter()
        .map(|k| (w.family, k))
        .collect()
}

/// Learn, from the kernel, the handle of each chain `writes` rename that
/// the view lacks: chains are created without an echo of their handle
/// (see `plan::Planner::new_chain`), and a rename names the chain by it.
/// One `GETCHAIN` per such chain, once (the view keeps it).
pub fn fetch_rename_handles(
    sock: &mut Socket,
    st: &mut State,
    writes: &[&Write],
) -> Result<(), nft::Error> {
    for (f, k, old) in rename_sources(writes) {
        let view = st.view(f);
        let known =
            view.chain_handles.contains_key(&(k, old.clone())) || view.is_registered(k, &old);
        if known || st.model.table(f, k).chain(&old).is_none() {
            continue;
        }
        let (fam, tname) = (
            compile::layout::nft_family(f),
            compile::layout::table_name(k),
        );
        if let Some(h) = sock
            .get(&nft::Chain::new(fam, &tname, &old))?
            .and_then(|c| c.handle)
        {
            st.view_mut(f).learn_chain(k, old, h);
        }
    }
    Ok(())
}

/// The chains `writes` rename (`-E OLD NEW`, in commands and in restore
/// lines), by family and table.
fn rename_sources(writes: &[&Write]) -> Vec<(Family, TableKind, String)> {
    let mut out = Vec::new();
    for w in writes {
        match &w.work {
            Work::Cmds(cmds) => {
                for p in cmds {
                    if let iptables::parse::Command::Rename(old, _) = &p.command {
                        out.push((w.family, p.table, old.clone()));
                    }
                }
            }
            Work::Restore(r) => {
                let mut kind = None;
                for line in r.input.lines() {
                    let l = line.trim_start();
                    if let Some(t) = l.strip_prefix('*') {
                        kind = TableKind::from_name(t.trim())
                            .filter(|k| r.table.is_none_or(|o| o == *k));
                        continue;
                    }
                    let rest = l
                        .strip_prefix("-E ")
                        .or_else(|| l.strip_prefix("--rename-chain "));
                    if let (Some(k), Some(old)) =
                        (kind, rest.and_then(|r| r.split_whitespace().next()))
                    {
                        out.push((w.family, k, old.to_string()));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refused message is described as iptables-nft names it; elements
    /// of a set made in the same batch name that set (by its batch id).
    #[test]
    fn refusals_name_their_object() {
        let fam = nft::Family::Ipv4;
        let mut b = nft::batch::Batch::new(1, None);
        let mut set = nft::Set::new(fam, "nfkeeper_nat", "__nfk_run9");
        set.key_type = Some(7);
        set.key_len = Some(4);
        set.id = Some(5);
        let s_seq = b.add(&set, 1);
        let mut es = nft::SetElems::new(
            fam,
            "nfkeeper_nat",
            "",
            vec![nft::SetElem::key(&[10, 0, 0, 1])],
        );
        es.set_id = Some(5);
        let e_seq = b.add(&es, 2);
        let named = nft::SetElems::new(
            fam,
            "nfkeeper_nat",
            "x",
            vec![nft::SetElem::key(&[1, 2, 3, 4])],
        );
        let n_seq = b.delete(&named, 3);
        let r_seq = b.add(
            &nft::Rule::new(fam, "nfkeeper_nat", "KUBE-SERVICES", vec![]),
            4,
        );
        let p = Pending::new(b);
        // (seq, op, object)
        let cases = [
            (s_seq, "SET_ADD", "set __nfk_run9"),
            (e_seq, "SET_ELEM_ADD", "set __nfk_run9"),
            (n_seq, "SET_ELEM_DEL", "set x"),
            (r_seq, "RULE_INSERT", "rule in chain KUBE-SERVICES"),
        ];
        for (seq, op, object) in cases {
            let r = describe(&p, seq, -16);
            assert_eq!(
                (r.op, r.object.as_str()),
                (Some(op), object),
                "message {seq}"
            );
        }
    }
}

//! Compiling runs of similar rules into one set lookup or verdict map.
//!
//! A *run* is a maximal sequence of adjacent logical rules of one chain that
//! differ only in the value of one key field ([`KeyKind`]): same other
//! matches, same target (a *set run*, one kernel rule `KEY @set TARGET`), or
//! only verdict targets that may differ (a *map run*, one kernel rule
//! `KEY vmap @map`). Each element carries a counter and the id of the
//! logical rule it stands for, so per-rule counters survive.
//!
//! Proof obligations (checked by the classify crate's differential tests):
//! - Keys of one run never overlap: at most one element can match a packet,
//!   so order inside the run does not matter. A key equal to an earlier one
//!   of the run ends the run there (the later rule starts the next one).
//! - The key is never negated, and the rest of every rule of the run is the
//!   same expressions, so "rule i matches" is "shape matches and key = k_i".
//! - Rules with stateful matches (limit, statistic, quota, …) are never in
//!   a run: one kernel expression would be one shared state for all.
//! - Runs shorter than [`RunOpts::min_len`] stay plain rules; longer than
//!   [`MAX_LEN`] are cut into consecutive runs of at most that many.
//!
//! Cost: O(rules × key kinds) rule comparisons for a chain (each rule is
//! scanned by the kinds its neighbour may share a run with); the output is
//! one kernel rule per plain rule or run plus one element per run member.

use crate::lower::{lower_rule, Lowered, Result};
use iptables::ext::Match;
use iptables::{Rule, Target};
use nft::expr::reg;
use nft::{Expr, Verdict};
use ruleset::{Family, RuleId, TableKind};

mod extent;
mod key;
pub mod numgen;
use extent::{diff, extent, may_join, Extent};
pub use key::KeyKind;

/// Tuning of run detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOpts {
    /// Shortest run worth a set lookup; shorter ones stay plain rules.
    pub min_len: usize,
    /// Compile kube-proxy's endpoint selection into numgen verdict maps
    /// ([`numgen`]). Off by default: one named set per service costs the
    /// kernel O(sets) per set lookup by name and per element dump, which
    /// made kube-proxy's syncs at 5k services 2× slower (BENCHMARKS.md
    /// §11).
    pub numgen: bool,
}

/// The default shortest run: where one lookup costs a packet what the
/// rules it replaces cost. Measured (BENCHMARKS.md §6.7, `nfkeeper bench
/// packet --case f.`): a lookup in an address set costs 64-byte UDP about
/// what 16 plain `-s ADDR` rules cost that fail at their first compare
/// (runs of 8: 0.53× the plain rules' rate, 16: 1.01×, 32: 1.61×).
pub const DEFAULT_MIN_LEN: usize = 16;

/// The longest run: a longer sequence becomes consecutive runs, one set
/// each. Why: the kernel answers a set dump in ~32 KiB replies and starts
/// each reply by walking the set from its first element, so reading a set
/// of n elements costs O(n²/~250) element visits; cut into sets of at most
/// `MAX_LEN`, reading n members costs O(n · MAX_LEN/~250). Measured
/// (100 000 elements with counters and rule text, `nft list set`): one set
/// 1.40 s of kernel time, ten sets of 10 000 0.30 s. The price is one
/// more lookup per cut for a packet that matches none of them (~30 ns).
pub const MAX_LEN: usize = 8192;

/// The fewest elements a run's set is made with for it to get a
/// capacity (see [`capacity`]).
pub const SIZED_FROM: usize = 256;

/// The capacity of a run's set made with `elems` elements: none below
/// [`SIZED_FROM`], else [`crate::layout::set_capacity`].
///
/// Without a size, the kernel's hash doubling was 9% of the samples of a
/// 100k-rule restore (BENCHMARKS.md §8.19: restores of 10k–50k rules 1.2×
/// faster with one). A write whose append the kernel refuses as beyond it
/// is planned again with plain appends (the rules after a full run then
/// form a new one). So only sets made with many elements at once
/// (restores) get a size; a run that starts short and grows by appends,
/// one element per batch, costs the kernel no resizing worth avoiding and
/// stays unbounded up to [`MAX_LEN`]. Interval sets (a tree, never
/// resized) get none either. Buckets: 8 KiB at the least, 256 KiB for a
/// run of [`MAX_LEN`] addresses.
pub fn capacity(elems: usize) -> Option<u32> {
    (elems >= SIZED_FROM).then(|| crate::layout::set_capacity(elems))
}

impl Default for RunOpts {
    fn default() -> Self {
        RunOpts {
            min_len: DEFAULT_MIN_LEN,
            numgen: false,
        }
    }
}

/// One element of a run's set or map. A member is one element, except
/// for [`KeyKind::Dports`]: one per port, contiguous, each with the
/// member's id (its counter is their sum).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunElem {
    pub key: Vec<u8>,
    /// Map runs: the verdict of this element's rule.
    pub verdict: Option<Verdict>,
    /// The logical rule this element stands for (its counter is this
    /// rule's counter).
    pub id: RuleId,
    /// Interval runs: the end marker (one past the range's last value; a
    /// second element, flagged as an interval end), unless the range runs
    /// to the top of the key space.
    pub end: Option<Vec<u8>>,
}

/// Every run set's name starts with this; no other object of ours does.
pub const SET_PREFIX: &str = "__nfk_run";

/// The id of the run whose set is named `set` (the number after
/// [`SET_PREFIX`]).
pub fn run_id(set: &str) -> Option<u64> {
    set.strip_prefix(SET_PREFIX)?.parse().ok()
}

/// The named set (or verdict map) of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSet {
    /// `__nfk_run<id of the run's first rule>`.
    pub name: String,
    pub key: KeyKind,
    pub key_type: u32,
    pub key_len: u32,
    /// A verdict map (elements carry verdicts).
    pub map: bool,
    /// An interval set (prefix and port-range keys).
    pub interval: bool,
    pub elems: Vec<RunElem>,
    /// What every member is without its key (and, for a map, without its
    /// target): a rule joins the run iff [`RunSet::admits`] it.
    pub shape: Rule,
}

impl RunSet {
    /// Whether `r` is a member of this run's shape: same shape, a key of
    /// this kind, the run's target (a verdict, for a map). Returns the
    /// element it would be (key, verdict). Key overlap is not checked here.
    pub fn admits(&self, r: &Rule, family: Family) -> Option<(Vec<u8>, Option<Verdict>)> {
        admits(self.key, self.map, &self.shape, r, family)
    }
}

/// [`RunSet::admits`] for a run described by its parts.
pub fn admits(
    key: KeyKind,
    map: bool,
    shape: &Rule,
    r: &Rule,
    family: Family,
) -> Option<(Vec<u8>, Option<Verdict>)> {
    // A numgen member's statistic match is its key: the rest must be
    // stateless.
    if key != KeyKind::Numgen && !runnable(r) {
        return None;
    }
    let (k, mut s) = key.split(r, family)?;
    if !runnable(&s) {
        return None;
    }
    let verdict = if map {
        let v = verdict_of(&r.target)?;
        s.target = Target::None;
        Some(v)
    } else {
        None
    };
    (s == *shape).then_some((k, verdict))
}

/// One kernel rule of a compiled chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// Logical rule `id`, to be lowered as itself (by the caller, which
    /// may already hold it lowered or not need the expressions).
    Plain { id: RuleId },
    /// A run: the shared expressions with a lookup in `set` in place of the
    /// per-rule counter.
    Run { lowered: Lowered, set: Box<RunSet> },
}

/// Whether a rule may be part of a run at all.
pub(crate) fn runnable(r: &Rule) -> bool {
    !r.matches.iter().any(|m| {
        matches!(
            m,
            Match::Limit(_) | Match::Statistic(_) | Match::Recent(_) | Match::Nfacct(_)
        // A set lookup needs the rule table's copy of the set, which
        // only plain rules ask for.
        | Match::Set(_)
        )
    }) && !matches!(&r.target, Target::Ext(t) if matches!(**t, iptables::ext::TargetExt::Set(_)))
}

fn is_verdict(t: &Target) -> bool {
    matches!(
        t,
        Target::Accept | Target::Drop | Target::Return | Target::Jump(_) | Target::Goto(_)
    )
}

pub fn verdict_of(t: &Target) -> Option<Verdict> {
    Some(match t {
        Target::Accept => Verdict::Accept,
        Target::Drop => Verdict::Drop,
        Target::Return => Verdict::Return,
        Target::Jump(c) => Verdict::Jump(c.to_string()),
        Target::Goto(c) => Verdict::Goto(c.to_string()),
        _ => return None,
    })
}

/// Compile one chain's rules (in order) into kernel rules and run sets.
pub fn compile_chain(
    rules: &[(RuleId, &Rule)],
    family: Family,
    table: TableKind,
    chain: &str,
    o: RunOpts,
) -> Result<Vec<Item>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < rules.len() {
        let (id, r) = rules[i];
        if let Some(k) = numgen::group_len(rules, i).filter(|_| o.numgen) {
            let members = &rules[i..i + k];
            let keys = members
                .iter()
                .map(|(_, r)| KeyKind::Numgen.split(r, family).expect("a member").0)
                .collect();
            match run_item(members, keys, true, KeyKind::Numgen, family, table, chain)? {
                Some(run) => out.push(run),
                None => out.extend(members.iter().map(|(id, _)| Item::Plain { id: *id })),
            }
            i += k;
            continue;
        }
        let best = if runnable(r) {
            // The longest run as cut at MAX_LEN; among equally long ones
            // the first kind (single fields before tuples before ranges).
            // A run that reaches the chain's end or MAX_LEN can't be
            // beaten: the kinds after it are not tried (a Cloud Foundry
            // chain is one scan, not three). Only kinds the next rule may
            // join are tried: a run of one stays a plain rule whatever its
            // kind. Together: O(rules) rule comparisons for a chain.
            let left = (rules.len() - i).min(MAX_LEN);
            let next = rules.get(i + 1).map(|(_, n)| diff(r, n));
            let mut best: Option<(KeyKind, Extent)> = None;
            for &k in &KeyKind::ALL {
                if best.as_ref().is_some_and(|b| b.1 .0.len() == left) {
                    break;
                }
                if !next.is_some_and(|d| may_join(k, d)) {
                    continue;
                }
                let e = extent(rules, i, k, family);
                if best.as_ref().is_none_or(|b| e.0.len() > b.1 .0.len()) {
                    best = Some((k, e));
                }
            }
            best
        } else {
            None
        };
        match best {
            Some((kind, (mut keys, map))) if keys.len() >= o.min_len.max(2) => {
                keys.truncate(MAX_LEN);
                let n = keys.len();
                let members = &rules[i..i + n];
                match run_item(members, keys, map, kind, family, table, chain)? {
                    Some(run) => out.push(run),
                    // Its shape needs the kernel's xtables extensions: they
                    // run before the lookup, so stateful ones would see
                    // every packet; the members stay plain rules.
                    None => out.extend(members.iter().map(|(id, _)| Item::Plain { id: *id })),
                }
                i += n;
            }
            _ => {
                out.push(Item::Plain { id });
                i += 1;
            }
        }
    }
    Ok(out)
}

fn run_item(
    members: &[(RuleId, &Rule)],
    keys: Vec<Vec<u8>>,
    map: bool,
    kind: KeyKind,
    family: Family,
    table: TableKind,
    chain: &str,
) -> Result<Option<Item>> {
    let (_, mut shape) = kind
        .split(members[0].1, family)
        .expect("extent checked the key");
    if map {
        shape.target = Target::None;
    }
    let name = format!("{SET_PREFIX}{}", members[0].0 .0);
    let lowered = run_rule(
        kind,
        map,
        &shape,
        &name,
        family,
        table,
        chain,
        members.len(),
    )?;
    if lowered.compat.is_some() {
        return Ok(None);
    }
    let (key_type, key_len) = kind.key_type(family);
    let elems = if kind == KeyKind::Dports {
        // One element per port of each member, a member's contiguous.
        members
            .iter()
            .flat_map(|(id, r)| {
                let verdict = if map { verdict_of(&r.target) } else { None };
                kind.keys(r, family)
                    .expect("extent checked the keys")
                    .into_iter()
                    .map(move |key| RunElem {
                        key,
                        verdict: verdict.clone(),
                        id: *id,
                        end: None,
                    })
            })
            .collect()
    } else {
        members
            .iter()
            .zip(keys)
            .map(|((id, r), key)| RunElem {
                key,
                verdict: if map { verdict_of(&r.target) } else { None },
                id: *id,
                end: kind.end_marker(r, family),
            })
            .collect()
    };
    Ok(Some(Item::Run {
        lowered,
        set: Box::new(RunSet {
            name,
            key: kind,
            key_type,
            key_len,
            map,
            interval: kind.is_interval(),
            elems,
            shape,
        }),
    }))
}

/// Drop the tcp/udp match's fragment guard (a transport load with an
/// always-true range, see `lower::matches::tcp::fragment_guard`) from a run
/// rule whose key loads a transport field itself: that load already stops
/// the rule on non-first fragments, so the guard cannot change the outcome
/// and would cost every packet one more comparison.
fn drop_fragment_guard(exprs: &mut Vec<Expr>) {
    let guard = |w: &[Expr]| {
        matches!(
            w,
            [
                Expr::Payload { base: b, offset: 0, len: 2, .. },
                Expr::Range { neq: false, from, to, .. },
            ] if *b == nft::expr::base::TRANSPORT && from[..] == [0, 0] && to[..] == [0xff, 0xff]
        )
    };
    if let Some(i) = exprs.windows(2).position(guard) {
        exprs.drain(i..i + 2);
    }
}

/// The kernel rule of a run of `key` with `shape` (as [`compile_chain`]
/// builds it), for a run started outside a whole-chain compile. `len`:
/// the run's member count (a numgen run draws modulo it).
#[allow(clippy::too_many_arguments)]
pub fn run_rule(
    key: KeyKind,
    map: bool,
    shape: &Rule,
    set: &str,
    family: Family,
    table: TableKind,
    chain: &str,
    len: usize,
) -> Result<Lowered> {
    let mut lowered = lower_rule(shape, family, table, chain)?;
    if key.loads_transport() {
        drop_fragment_guard(&mut lowered.exprs);
    }
    let at = lowered
        .exprs
        .iter()
        .rposition(|e| matches!(e, Expr::Counter { .. }))
        .expect("lower_rule emits a counter");
    let lookup = Expr::Lookup {
        set: set.to_string(),
        set_id: None,
        sreg: reg::R1,
        dreg: map.then_some(reg::VERDICT),
        flags: None,
    };
    let mut load = key.load(family, len);
    load.push(lookup);
    lowered.exprs.splice(at..at + 1, load);
    Ok(lowered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iptables::parse::{parse, ParseOpts};

    fn rules(lines: &[&str]) -> Vec<Rule> {
        lines
            .iter()
            .map(|l| {
                let words: Vec<&str> = l.split(' ').collect();
                let o = ParseOpts {
                    family: Family::Ipv4,
                    restore: true,
                    table: Some(TableKind::Filter),
                    prog: "t",
                };
                parse(&words, o).expect(l).rules.remove(0)
            })
            .collect()
    }

    /// Compile `lines` as one chain X, rule ids 1, 2, … in order.
    fn compile_lines(lines: &[String], o: RunOpts) -> Vec<Item> {
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let rs = rules(&refs);
        let ids: Vec<(RuleId, &Rule)> = rs
            .iter()
            .enumerate()
            .map(|(i, r)| (RuleId(i as u64 + 1), r))
            .collect();
        compile_chain(&ids, Family::Ipv4, TableKind::Filter, "X", o).expect("compiles")
    }

    #[test]
    fn capacity_leaves_room_above_a_threshold() {
        // (elements, capacity)
        let cases: &[(usize, Option<u32>)] = &[
            (0, None),
            (16, None),
            (SIZED_FROM - 1, None),
            (SIZED_FROM, Some(512)),
            (341, Some(512)),
            (342, Some(1024)),
            (MAX_LEN, Some(16384)),
            (MAX_LEN * 15, Some(1 << 18)),
        ];
        for &(elems, want) in cases {
            assert_eq!(capacity(elems), want, "{elems}");
            if let Some(c) = want {
                assert!(c as usize >= elems + elems / 2, "{elems}");
            }
        }
    }

    #[test]
    fn long_sequences_are_cut_at_max_len() {
        // (rules, want run lengths): cut into runs of MAX_LEN, the rest a
        // run of its own when it reaches the minimum, else plain rules.
        let cases: &[(usize, &[usize])] = &[
            (MAX_LEN, &[MAX_LEN]),
            (MAX_LEN + 1, &[MAX_LEN]),
            (MAX_LEN + 20, &[MAX_LEN, 20]),
            (2 * MAX_LEN + 16, &[MAX_LEN, MAX_LEN, 16]),
        ];
        for &(n, want) in cases {
            let lines: Vec<String> = (0..n)
                .map(|i| {
                    format!(
                        "-A X -s 10.{}.{}.{}/32 -j ACCEPT",
                        i >> 16,
                        (i >> 8) & 255,
                        i & 255
                    )
                })
                .collect();
            let items = compile_lines(&lines, RunOpts::default());
            let runs: Vec<usize> = items
                .iter()
                .filter_map(|it| match it {
                    Item::Run { set, .. } => Some(set.elems.len()),
                    Item::Plain { .. } => None,
                })
                .collect();
            let plain = items
                .iter()
                .filter(|it| matches!(it, Item::Plain { .. }))
                .count();
            assert_eq!(runs, want, "{n} rules");
            assert_eq!(
                plain + runs.iter().sum::<usize>(),
                n,
                "{n} rules: every rule once"
            );
        }
    }

    /// Items as a compact string: `P` plain, `S3`/`M3` a set/map run of 3.
    fn shape_of(lines: &[&str], min_len: usize) -> String {
        let rs = rules(lines);
        let refs: Vec<(RuleId, &Rule)> = rs
            .iter()
            .enumerate()
            .map(|(i, r)| (RuleId(i as u64 + 1), r))
            .collect();
        let items = compile_chain(
            &refs,
            Family::Ipv4,
            TableKind::Filter,
            "X",
            RunOpts {
                min_len,
                numgen: true,
            },
        )
        .unwrap();
        items
            .iter()
            .map(|it| match it {
                Item::Plain { .. } => "P".to_string(),
                Item::Run { set, .. } if set.key == KeyKind::Numgen => {
                    format!("N{}", set.elems.len())
                }
                Item::Run { set, .. } => {
                    let kind = if set.map { "M" } else { "S" };
                    let tuple = if set.key.is_tuple()
                        || set.key.is_interval()
                        || set.key == KeyKind::Dports
                    {
                        format!(":{:?}", set.key)
                    } else {
                        String::new()
                    };
                    let mut ids: Vec<RuleId> = set.elems.iter().map(|e| e.id).collect();
                    ids.dedup();
                    format!("{kind}{}{tuple}", ids.len())
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn runs_are_found_split_and_kept_short_as_plain_rules() {
        let cases: &[(&[&str], usize, &str)] = &[
            // Cloud Foundry: one run.
            (
                &[
                    "-A X -s 10.0.0.1 -j ACCEPT",
                    "-A X -s 10.0.0.2 -j ACCEPT",
                    "-A X -s 10.0.0.3 -j ACCEPT",
                ],
                2,
                "S3",
            ),
            // Below the threshold: plain.
            (
                &["-A X -s 10.0.0.1 -j ACCEPT", "-A X -s 10.0.0.2 -j ACCEPT"],
                3,
                "P,P",
            ),
            // A repeated key ends the run; the repeat starts the next.
            (
                &[
                    "-A X -s 10.0.0.1 -j ACCEPT",
                    "-A X -s 10.0.0.2 -j ACCEPT",
                    "-A X -s 10.0.0.1 -j ACCEPT",
                    "-A X -s 10.0.0.3 -j ACCEPT",
                ],
                2,
                "S2,S2",
            ),
            // Verdicts differ: a verdict map; a non-verdict target ends it.
            (
                &[
                    "-A X -d 10.0.0.1 -j ACCEPT",
                    "-A X -d 10.0.0.2 -j DROP",
                    "-A X -d 10.0.0.3 -j RETURN",
                    "-A X -d 10.0.0.4 -j LOG",
                ],
                2,
                "M3,P",
            ),
            // Prefixes are interval keys: touching ranges do not overlap,
            // an overlapping one ends the run.
            (
                &[
                    "-A X -s 10.0.0.0/24 -j DROP",
                    "-A X -s 10.0.1.0/24 -j DROP",
                    "-A X -s 10.0.0.128/25 -j DROP",
                ],
                2,
                "S2:SrcNet,P",
            ),
            (
                &[
                    "-A X -d 10.0.0.0/8 -j DROP",
                    "-A X -d 10.1.0.0/16 -j DROP",
                    "-A X -d 11.0.0.0/8 -j DROP",
                ],
                2,
                "P,S2:DstNet",
            ),
            // Addresses and prefixes mixed: a range each.
            (
                &["-A X -s 10.0.0.1/32 -j DROP", "-A X -s 10.9.0.0/16 -j DROP"],
                2,
                "S2:SrcNet",
            ),
            // Port ranges; the whole range is no key (it is no port match).
            (
                &[
                    "-A X -p tcp -m tcp --dport 1000:1999 -j DROP",
                    "-A X -p tcp -m tcp --dport 2000:2999 -j DROP",
                    "-A X -p tcp -m tcp --dport 0:65535 -j DROP",
                ],
                2,
                "S2:DportRange,P",
            ),
            // A non-contiguous mask is no prefix; negations are never keys.
            (
                &[
                    "-A X -s 10.0.0.0/255.0.255.0 -j DROP",
                    "-A X -s 10.1.0.0/255.0.255.0 -j DROP",
                ],
                2,
                "P,P",
            ),
            (
                &["-A X ! -s 10.0.0.1 -j DROP", "-A X ! -s 10.0.0.2 -j DROP"],
                2,
                "P,P",
            ),
            // Ports of one protocol; a different other match splits.
            (
                &[
                    "-A X -p tcp -m tcp --dport 80 -j ACCEPT",
                    "-A X -p tcp -m tcp --dport 443 -j ACCEPT",
                    "-A X -p udp -m udp --dport 53 -j ACCEPT",
                ],
                2,
                "S2,P",
            ),
            // Stateful matches never share a kernel rule.
            (
                &[
                    "-A X -s 10.0.0.1 -m limit --limit 1/sec -j ACCEPT",
                    "-A X -s 10.0.0.2 -m limit --limit 1/sec -j ACCEPT",
                ],
                2,
                "P,P",
            ),
            // Interfaces without wildcard.
            (
                &[
                    "-A X -i eth0 -j ACCEPT",
                    "-A X -i eth1 -j ACCEPT",
                    "-A X -i veth+ -j ACCEPT",
                ],
                2,
                "S2,P",
            ),
            // kube-proxy's service dispatch: address and port vary, each
            // rule its own comment and chain: one verdict map on the tuple.
            (
                &[
                    "-A X -d 10.96.0.1/32 -p tcp -m comment --comment a -m tcp --dport 443 -j SVC-A",
                    "-A X -d 10.96.0.10/32 -p tcp -m comment --comment b -m tcp --dport 53 -j SVC-B",
                    "-A X -d 10.96.0.10/32 -p tcp -m comment --comment c -m tcp --dport 9153 -j SVC-C",
                ],
                2,
                "M3:DstDport",
            ),
            // Address and port both vary (the packet suite's c.rules).
            (
                &[
                    "-A X -s 10.0.0.1/32 -p tcp -m tcp --dport 80 -j DROP",
                    "-A X -s 10.0.0.2/32 -p tcp -m tcp --dport 81 -j DROP",
                    "-A X -s 10.0.0.2/32 -p tcp -m tcp --dport 80 -j DROP",
                    "-A X -s 10.0.0.2/32 -p tcp -m tcp --dport 81 -j DROP",
                ],
                2,
                "S3:SrcDport,P",
            ),
            // One field suffices: no tuple (Cloud Foundry with a port).
            (
                &[
                    "-A X -s 10.0.0.1/32 -p tcp -m tcp --dport 8080 -j ACCEPT",
                    "-A X -s 10.0.0.2/32 -p tcp -m tcp --dport 8080 -j ACCEPT",
                ],
                2,
                "S2",
            ),
            (
                &[
                    "-A X -s 10.0.0.1/32 -d 10.1.0.1/32 -j ACCEPT",
                    "-A X -s 10.0.0.1/32 -d 10.1.0.2/32 -j ACCEPT",
                    "-A X -s 10.0.0.2/32 -d 10.1.0.1/32 -j ACCEPT",
                ],
                2,
                "S3:SrcDst",
            ),
            // The input interface decides the chain: one verdict map.
            (
                &[
                    "-A X -i eth0 -j A",
                    "-A X -i eth1 -j B",
                    "-A X -i eth2 -j A",
                ],
                2,
                "M3",
            ),
            // Multiport lists of single ports: a member per rule, an
            // element per port; a shared port ends the run (the earlier
            // rule has it), a range or a negation is no key.
            (
                &[
                    "-A X -p tcp -m multiport --dports 80,443 -j DROP",
                    "-A X -p tcp -m multiport --dports 22,8080,9 -j DROP",
                    "-A X -p tcp -m multiport --dports 25 -m comment --comment m -j DROP",
                    "-A X -p tcp -m multiport --dports 26,443 -j DROP",
                    "-A X -p tcp -m multiport --dports 27,28 -j DROP",
                    "-A X -p tcp -m multiport --dports 29,30:40 -j DROP",
                    "-A X -p tcp -m multiport ! --dports 41,42 -j DROP",
                ],
                2,
                "S3:Dports,S2:Dports,P,P",
            ),
            (
                &[
                    "-A X -p udp -m multiport --dports 53,5353 -j ACCEPT",
                    "-A X -p udp -m multiport --dports 67,68 -j DROP",
                    "-A X -p udp -m multiport --dports 123 -j ACCEPT",
                ],
                2,
                "M3:Dports",
            ),
            // Comments differ: still one run (each element keeps its own).
            (
                &[
                    "-A X -s 10.0.0.1/32 -m comment --comment x -j ACCEPT",
                    "-A X -s 10.0.0.2/32 -m comment --comment y -j ACCEPT",
                ],
                2,
                "S2",
            ),
            // kube-proxy's endpoint selection (10 decimals, as kube-proxy
            // writes it), after its masquerade rule: one numgen map.
            (
                &[
                    "-A X ! -s 10.128.0.0/10 -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j MARK --set-xmark 0x4000/0x4000",
                    "-A X -m comment --comment a -m statistic --mode random --probability 0.3333333333 -j SEP-A",
                    "-A X -m comment --comment b -m statistic --mode random --probability 0.5000000000 -j SEP-B",
                    "-A X -m comment --comment c -j SEP-C",
                ],
                16,
                "P,N3",
            ),
            // As iptables-save prints it (11 decimals), two endpoints.
            (
                &[
                    "-A X -m statistic --mode random --probability 0.50000000000 -j SEP-A",
                    "-A X -j SEP-B",
                ],
                16,
                "N2",
            ),
            (
                &[
                    "-A X -m statistic --mode random --probability 0.33333333349 -j SEP-A",
                    "-A X -m statistic --mode random --probability 0.50000000000 -j SEP-B",
                    "-A X -j SEP-C",
                ],
                16,
                "N3",
            ),
            // Session affinity rules before it stay plain rules.
            (
                &[
                    "-A X -m recent --rcheck --seconds 10800 --reap --name SEP-A --mask 255.255.255.255 --rsource -j SEP-A",
                    "-A X -m statistic --mode random --probability 0.50000000000 -j SEP-A",
                    "-A X -j SEP-B",
                ],
                16,
                "P,N2",
            ),
            // Old kube-proxy's 5 decimals is not uniform: plain rules.
            (
                &[
                    "-A X -m statistic --mode random --probability 0.33333 -j SEP-A",
                    "-A X -m statistic --mode random --probability 0.50000 -j SEP-B",
                    "-A X -j SEP-C",
                ],
                16,
                "P,N2",
            ),
            // No unconditional last rule, a probability out of sequence,
            // different other matches, a non-verdict target, an inverted
            // or nth statistic: plain rules.
            (
                &[
                    "-A X -m statistic --mode random --probability 0.3333333333 -j SEP-A",
                    "-A X -m statistic --mode random --probability 0.5000000000 -j SEP-B",
                    "-A X -m statistic --mode random --probability 0.5000000000 -j SEP-C",
                ],
                16,
                "P,P,P",
            ),
            (
                &[
                    "-A X -m statistic --mode random --probability 0.5000000000 -j SEP-A",
                    "-A X -m statistic --mode random --probability 0.3333333333 -j SEP-B",
                    "-A X -j SEP-C",
                ],
                16,
                "P,P,P",
            ),
            (
                &[
                    "-A X -s 10.0.0.1/32 -m statistic --mode random --probability 0.5000000000 -j SEP-A",
                    "-A X -j SEP-B",
                ],
                16,
                "P,P",
            ),
            (
                &[
                    "-A X -m statistic --mode random --probability 0.5000000000 -j LOG",
                    "-A X -j LOG",
                ],
                16,
                "P,P",
            ),
            (
                &[
                    "-A X -m statistic --mode random ! --probability 0.5000000000 -j SEP-A",
                    "-A X -j SEP-B",
                ],
                16,
                "P,P",
            ),
            (
                &[
                    "-A X -m statistic --mode nth --every 2 --packet 0 -j SEP-A",
                    "-A X -j SEP-B",
                ],
                16,
                "P,P",
            ),
            // The same shape with its own matches, any verdicts.
            (
                &[
                    "-A X -p udp -m statistic --mode random --probability 0.5000000000 -j ACCEPT",
                    "-A X -p udp -j DROP",
                    "-A X -p udp -j DROP",
                ],
                16,
                "N2,P",
            ),
        ];
        for (lines, min_len, want) in cases {
            assert_eq!(shape_of(lines, *min_len), *want, "{lines:?}");
        }
    }

    #[test]
    fn admits_what_the_run_would_have_taken() {
        let rs = rules(&[
            "-A X -s 10.0.0.1 -j ACCEPT",
            "-A X -s 10.0.0.9 -j ACCEPT",
            "-A X -s 10.0.0.9 -j DROP",
            "-A X -s 10.0.0.0/8 -j ACCEPT",
        ]);
        let (_, shape) = KeyKind::Src.split(&rs[0], Family::Ipv4).unwrap();
        assert!(admits(KeyKind::Src, false, &shape, &rs[1], Family::Ipv4).is_some());
        assert!(admits(KeyKind::Src, false, &shape, &rs[2], Family::Ipv4).is_none());
        assert!(admits(KeyKind::Src, false, &shape, &rs[3], Family::Ipv4).is_none());
        let mut any = shape.clone();
        any.target = Target::None;
        let (k, v) = admits(KeyKind::Src, true, &any, &rs[2], Family::Ipv4).unwrap();
        assert_eq!((k, v), (vec![10, 0, 0, 9], Some(Verdict::Drop)));
    }

    /// An expression that cannot change whether the rule matches: a range
    /// over every value, or a compare after masking everything away.
    fn always_true(w: &[Expr]) -> bool {
        match w {
            [Expr::Range {
                neq: false,
                from,
                to,
                ..
            }, ..] => from.iter().all(|b| *b == 0) && to.iter().all(|b| *b == 0xff),
            [Expr::Bitwise { mask, .. }, Expr::Cmp { .. }, ..] => mask.iter().all(|b| *b == 0),
            _ => false,
        }
    }

    #[test]
    fn run_rules_carry_no_expression_that_cannot_change_the_outcome() {
        // One run per key kind, with tcp and udp shapes.
        let shapes: &[fn(usize) -> String] = &[
            |i| format!("-A X -s 10.0.0.{i}/32 -j ACCEPT"),
            |i| format!("-A X -p tcp -m tcp --dport {} -j ACCEPT", 1000 + i),
            |i| format!("-A X -p udp -m udp --dport {} -j DROP", 1000 + i),
            |i| format!("-A X -d 10.0.0.{i}/32 -p tcp -m tcp --dport 80 -j ACCEPT"),
            |i| {
                format!(
                    "-A X -s 10.0.0.{i}/32 -p udp -m udp --dport {} -j ACCEPT",
                    53 + i
                )
            },
            |i| {
                format!(
                    "-A X -p tcp -m tcp --dport {}:{} -j ACCEPT",
                    1000 + 10 * i,
                    1005 + 10 * i
                )
            },
            |i| format!("-A X -s 10.{i}.0.0/16 -p tcp -m tcp -j ACCEPT"),
        ];
        for shape in shapes {
            let lines: Vec<String> = (1..=20).map(shape).collect();
            let items = compile_lines(
                &lines,
                RunOpts {
                    min_len: 4,
                    numgen: false,
                },
            );
            let mut runs = 0;
            for item in items {
                if let Item::Run { lowered, .. } = item {
                    runs += 1;
                    let e = &lowered.exprs;
                    let transport_loads = e
                        .iter()
                        .filter(|x| {
                            matches!(x, Expr::Payload { base, .. } if *base == nft::expr::base::TRANSPORT)
                        })
                        .count();
                    for i in 0..e.len() {
                        // A full range after the rule's only transport load
                        // is the fragment guard: it refuses non-first
                        // fragments, so it can change the outcome.
                        let guard = i > 0
                            && transport_loads == 1
                            && matches!(&e[i - 1], Expr::Payload { base, .. } if *base == nft::expr::base::TRANSPORT);
                        assert!(guard || !always_true(&e[i..]), "{}: {e:?}", lines[0]);
                    }
                }
            }
            assert_eq!(runs, 1, "{}", lines[0]);
        }
    }
}

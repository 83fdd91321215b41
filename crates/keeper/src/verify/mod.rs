//! `verify`: does what is in the kernel equal what the logical rules it
//! records compile to?
//!
//! Every kernel object of ours names the logical rule it stands for (its
//! userdata: id and canonical text), so the kernel alone says what the
//! expressions should be. For one table this reads the model back
//! ([`crate::read`]), then dumps the kernel's rules, sets and elements
//! once more and checks, for each:
//! - a plain rule: its expressions are what its logical rule lowers to,
//!   and each anonymous set it looks up holds the lowered set's elements;
//! - a run's rule: its expressions are what the run's key kind and shape
//!   compile to; every element of its set is a member whose rule, split by
//!   the run's key, gives the element's key and (maps) its verdict;
//! - base chains: iptables' hook, priority and type;
//! - sets: each run set is used by exactly one run rule, each anonymous
//!   set by a rule, each ipset copy (a rule's `-m set`/`-j SET`, whose
//!   set header is read from the ipset table) by a rule; anything else in
//!   the table is foreign.
//!
//! For the raw table also the replay table of its `-j CT --helper` rules
//! ([`replay`]).
//!
//! Counters are not compared (they are the kernel's). Cost: one rule dump,
//! one set dump, one element dump per set, plus the read itself.

mod replay;

use crate::read::{RunSnap, SeenElem};
use compile::layout;
use compile::lower_rule_with;
use compile::runs::{admits, run_rule, KeyKind, SET_PREFIX};
use compile::userdata::catalog;
use iptables::print::save::{save_rule_body, CounterStyle};
use iptables::Rule;
use nft::{Expr, Socket};
use ruleset::{Counters, Family, RuleId, TableKind};
use std::collections::{BTreeSet, HashMap};

/// What one table's check found.
#[derive(Debug, Default)]
pub struct Report {
    /// Kernel rules checked (plain and run rules).
    pub rules: usize,
    /// Runs checked and their elements.
    pub runs: usize,
    pub elems: usize,
    /// Each difference, one line of text naming the object.
    pub diffs: Vec<String>,
    /// What could not be checked (not a difference), one line each.
    pub notes: Vec<String>,
}

/// One kernel rule as dumped.
struct KRule {
    chain: String,
    handle: u64,
    exprs: Result<Vec<Expr>, String>,
}

/// A netlink socket to check tables with.
pub fn socket() -> Result<Socket, nft::Error> {
    Socket::open()
}

/// Check table `kind` of `family`; `None` when nfkeeper has no such table
/// in the kernel.
pub fn verify_table(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
) -> Result<Option<Report>, nft::Error> {
    let mut snap = crate::read::read_table_keeping_run_elems(sock, family, kind)?;
    let mut run_elems = snap.run_elems.take().unwrap_or_default();
    if !snap.exists {
        return Ok(None);
    }
    let fam = layout::nft_family(family);
    let tname = layout::table_name(kind);
    let mut rep = Report::default();
    for f in &snap.foreign {
        rep.diffs.push(format!("{f}: not written by nfkeeper"));
    }

    // Base chains as iptables registers them.
    let chains = sock.chains(fam, Some(&tname))?;
    for b in layout::base_chains(kind) {
        let Some(c) = chains.iter().find(|c| c.table == tname && c.name == b.name) else {
            rep.diffs.push(format!("chain {}: missing", b.name));
            continue;
        };
        let hook = c.hook.as_ref().map(|h| (h.num, h.priority));
        if hook != Some((b.hook, b.priority)) || c.chain_type.as_deref() != Some(b.chain_type) {
            rep.diffs.push(format!(
                "chain {}: hook {hook:?} type {:?}, expected hook ({}, {}) type {}",
                b.name, c.chain_type, b.hook, b.priority, b.chain_type
            ));
        }
    }

    let mut krules = Vec::new();
    sock.rules(fam, Some(&tname), None, |r| {
        if r.table == tname {
            krules.push(KRule {
                chain: r.chain.to_string(),
                handle: r.handle.unwrap_or(0),
                exprs: r
                    .exprs()
                    .collect::<Result<_, _>>()
                    .map_err(|e| e.to_string()),
            });
        }
        Ok(())
    })?;
    let id_of: HashMap<u64, RuleId> = snap.handles.iter().map(|(id, h)| (*h, *id)).collect();
    let run_of: HashMap<u64, &RunSnap> = snap.runs.iter().map(|r| (r.handle, r)).collect();
    // Dumps may answer for the whole family: keep our table's.
    let mut sets = sock.sets(fam, Some(&tname))?;
    sets.retain(|s| s.table == tname);
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for c in snap.table.chains() {
        for r in snap.table.rules_in(&c) {
            names.extend(
                crate::ipset::rules::rule_names(r.body)
                    .into_iter()
                    .map(String::from),
            );
        }
    }
    let ipsets = crate::ipset::rules::catalog(sock, &names)?;
    let cx = Cx {
        family,
        kind,
        fam,
        tname: &tname,
        ipsets: &ipsets,
    };
    for kr in &krules {
        let exprs = match &kr.exprs {
            Ok(e) => e,
            Err(e) => {
                rep.diffs.push(format!(
                    "rule handle {} in chain {}: unreadable expressions ({e})",
                    kr.handle, kr.chain
                ));
                continue;
            }
        };
        for e in exprs {
            match e {
                Expr::Lookup { set, .. } => {
                    used.insert(set.clone());
                }
                Expr::Other { name, .. } if name == nft::expr::dynset::NAME => {
                    // A `-j SET` update names its copy by the ipset's name.
                    if let Some(id) = id_of.get(&kr.handle) {
                        if let Some((_, _, r)) = snap.table.rule_by_id(*id) {
                            used.extend(
                                crate::ipset::rules::rule_names(r.body)
                                    .into_iter()
                                    .map(String::from),
                            );
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(run) = run_of.get(&kr.handle) {
            rep.runs += 1;
            rep.rules += 1;
            // The elements the read dumped (a run read by a probe or
            // whose set vanished meanwhile has none kept: dump it).
            let elems = match run_elems.remove(&run.set) {
                Some(e) => e,
                None => sock
                    .set_elems(fam, &tname, &run.set)?
                    .iter()
                    .map(SeenElem::of)
                    .collect(),
            };
            cx.check_run(&snap.table, run, kr, exprs, &elems, &mut rep);
        } else if let Some(id) = id_of.get(&kr.handle) {
            rep.rules += 1;
            let Some((_, _, r)) = snap.table.rule_by_id(*id) else {
                continue;
            };
            cx.check_plain(sock, &sets, r.body, kr, exprs, &mut rep)?;
        }
    }
    if kind == TableKind::Raw {
        replay::check(sock, family, &snap.table, &mut rep)?;
    }
    for s in &sets {
        if s.name == catalog::SET || s.name == compile::registry::SET {
            continue;
        }
        let copy = s
            .userdata
            .as_deref()
            .and_then(crate::ipset::meta::decode_set)
            .is_some_and(|m| m.role == crate::ipset::meta::Role::Copy);
        if !s.name.starts_with(SET_PREFIX) && !s.name.starts_with(ANON_PREFIX) && !copy {
            rep.diffs
                .push(format!("set {}: not written by nfkeeper", s.name));
        } else if !used.contains(&s.name) {
            rep.diffs.push(format!("set {}: used by no rule", s.name));
        }
    }
    Ok(Some(rep))
}

/// Names of the anonymous sets lowered rules look up (see
/// `compile::AnonSet::to_nft`).
const ANON_PREFIX: &str = "__nfk_set";

struct Cx<'a> {
    family: Family,
    kind: TableKind,
    fam: nft::Family,
    tname: &'a str,
    /// The ipsets the table's rules name.
    ipsets: &'a crate::ipset::Sets,
}

impl Cx<'_> {
    fn text(&self, r: &Rule) -> String {
        let mut s = String::new();
        save_rule_body(
            &mut s,
            self.family,
            r,
            Counters::default(),
            CounterStyle::None,
        );
        s
    }

    fn check_plain(
        &self,
        sock: &mut Socket,
        sets: &[nft::Set],
        body: &Rule,
        kr: &KRule,
        exprs: &[Expr],
        rep: &mut Report,
    ) -> Result<(), nft::Error> {
        let what = || {
            format!(
                "rule handle {} in chain {} (\"-A {}{}\")",
                kr.handle,
                kr.chain,
                kr.chain,
                self.text(body)
            )
        };
        let want = match lower_rule_with(body, self.family, self.kind, &kr.chain, self.ipsets) {
            Ok(l) => l,
            Err(e) => {
                rep.diffs
                    .push(format!("{}: does not compile ({e})", what()));
                return Ok(());
            }
        };
        let want_exprs = &want.exprs;
        if normalized(want_exprs) != normalized(exprs) {
            rep.diffs.push(format!(
                "{}: kernel expressions differ from what the rule compiles to\n  kernel:   {:?}\n  compiled: {:?}",
                what(),
                normalized(exprs),
                normalized(want_exprs)
            ));
            return Ok(());
        }
        // The anonymous sets, in lookup order on both sides.
        let kernel_sets = exprs.iter().filter_map(|e| match e {
            Expr::Lookup { set, .. } if set.starts_with(ANON_PREFIX) => Some(set.as_str()),
            _ => None,
        });
        for (name, a) in kernel_sets.zip(&want.sets) {
            let (want_set, want_elems) = a.to_nft(self.fam, self.tname, 0);
            let got = sets.iter().find(|s| s.name == name);
            let same_type = got.is_some_and(|s| {
                (s.key_type, s.key_len) == (want_set.key_type, want_set.key_len)
                    && s.flags.unwrap_or(0) & nft::set::flags::INTERVAL
                        == want_set.flags.unwrap_or(0) & nft::set::flags::INTERVAL
            });
            let elems = |es: &[nft::SetElem]| -> BTreeSet<(Vec<u8>, u32)> {
                es.iter()
                    .map(|e| (e.key.clone().unwrap_or_default(), e.flags.unwrap_or(0)))
                    .collect()
            };
            let got_elems = sock.set_elems(self.fam, self.tname, name)?;
            if !same_type || elems(&got_elems) != elems(&want_elems.elems) {
                rep.diffs.push(format!(
                    "{}: set {name} is not the rule's ({} elements, {} expected)",
                    what(),
                    got_elems.len(),
                    want_elems.elems.len()
                ));
            }
        }
        Ok(())
    }

    fn check_run(
        &self,
        t: &ruleset::Table<Rule>,
        run: &RunSnap,
        kr: &KRule,
        exprs: &[Expr],
        elems: &[SeenElem],
        rep: &mut Report,
    ) {
        let what = format!(
            "run rule handle {} in chain {} (set {})",
            kr.handle, kr.chain, run.set
        );
        let body = |id: &RuleId| t.rule_by_id(*id).map(|(_, _, r)| r.body);
        // The shape: recorded in the run rule, else the first member's.
        let shape = run.shape.clone().or_else(|| {
            let first = body(run.members.first()?)?;
            let (_, mut s) = run.key.split(first, self.family)?;
            if run.map {
                s.target = iptables::Target::None;
            }
            Some(s)
        });
        let Some(shape) = shape else {
            if !run.members.is_empty() {
                rep.diffs.push(format!(
                    "{what}: its shape is neither recorded nor derivable"
                ));
            }
            return;
        };
        match run_rule(
            run.key,
            run.map,
            &shape,
            &run.set,
            self.family,
            self.kind,
            &kr.chain,
            run.members.len(),
        ) {
            Ok(l) if normalized(&l.exprs) == normalized(exprs) => {}
            Ok(l) => rep.diffs.push(format!(
                "{what}: kernel expressions differ from what the run compiles to\n  kernel:   {:?}\n  compiled: {:?}",
                normalized(exprs),
                normalized(&l.exprs)
            )),
            Err(e) => rep.diffs.push(format!("{what}: does not compile ({e})")),
        }
        // An interval run: end markers, and the ones its members need.
        let mut ends = BTreeSet::new();
        let mut want_ends = BTreeSet::new();
        let mut census = catalog::Census::default();
        // A multiport member is an element per port: counted once, and
        // every port of it must be there (`ports` against `want_ports`).
        let multi = run.key == KeyKind::Dports;
        let mut counted = std::collections::HashSet::new();
        let (mut ports, mut want_ports) = (BTreeSet::new(), BTreeSet::new());
        for e in elems {
            if e.end {
                ends.insert(e.key.clone());
                continue;
            }
            rep.elems += 1;
            if let Some(id) = e.id {
                if !multi || counted.insert(id) {
                    census.add(id);
                }
            }
            let Some(r) = e.id.as_ref().and_then(body) else {
                // Reported by the read as foreign.
                continue;
            };
            let key = e.key.clone();
            let verdict = e.verdict.clone();
            want_ends.extend(run.key.end_marker(r, self.family));
            let mut want = admits(run.key, run.map, &shape, r, self.family);
            if multi {
                ports.insert(key.clone());
                let keys = run.key.keys(r, self.family).unwrap_or_default();
                if let Some((k, _)) = want.as_mut().filter(|_| keys.contains(&key)) {
                    // Any of its ports is this member's element.
                    k.clone_from(&key);
                }
                want_ports.extend(keys);
            }
            if want != Some((key.clone(), verdict)) {
                rep.diffs.push(format!(
                    "{what}: element {} is rule \"-A {}{}\", which {}",
                    hex(&key),
                    kr.chain,
                    self.text(r),
                    match want {
                        None => "is not of the run's shape".to_string(),
                        Some((k, v)) => format!("is element {} {v:?}", hex(&k)),
                    }
                ));
            }
        }
        // The census nfkeeper wrote says how many members the run has and
        // which (xor of their ids): a member removed behind our back is
        // missing from the model read back, so only this shows it.
        match run.census {
            Some(c) if c != census => rep.diffs.push(format!(
                "{what}: {} member elements where nfkeeper wrote {} ({})",
                census.count,
                c.count,
                if census.count < c.count {
                    "an element was removed behind its back"
                } else if census.count > c.count {
                    "an element was added behind its back"
                } else {
                    "elements were replaced behind its back"
                }
            )),
            Some(_) => {}
            None => rep.notes.push(format!(
                "{what}: no census in the catalog (written by an older nfkeeper, or removed): its member count is not checked"
            )),
        }
        let keys = |ks: &BTreeSet<Vec<u8>>| ks.iter().map(|k| hex(k)).collect::<Vec<_>>().join(",");
        if ports != want_ports {
            rep.diffs.push(format!(
                "{what}: port elements {} where its members' lists need {}",
                keys(&ports),
                keys(&want_ports)
            ));
        }
        if ends != want_ends {
            rep.diffs.push(format!(
                "{what}: interval end markers {} where its members need {}",
                keys(&ends),
                keys(&want_ends)
            ));
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Syslog's "warning" level, the kernel's default for `log`.
const LOG_WARNING: u32 = 4;

/// Expressions as compared: counters without their values (the kernel's),
/// lookups by set name only (batch ids are the sender's; anonymous sets'
/// names are the kernel's, their contents are compared on their own),
/// defaults the kernel fills in made explicit.
fn normalized(exprs: &[Expr]) -> Vec<Expr> {
    let mut out = exprs.to_vec();
    for e in out.iter_mut() {
        match e {
            Expr::Counter { bytes, packets } => (*bytes, *packets) = (0, 0),
            Expr::Lookup {
                set, set_id, flags, ..
            } => {
                if set.starts_with(ANON_PREFIX) {
                    *set = ANON_PREFIX.to_string();
                }
                *set_id = None;
                *flags = flags.filter(|f| *f != 0);
            }
            // The kernel fills in a syslog logger's level (warning).
            Expr::Log {
                group: None, level, ..
            } => *level = Some(level.unwrap_or(LOG_WARNING)),
            // The kernel does not dump the direction of these keys.
            Expr::Ct { key, dir, .. }
                if [nft::expr::ct::PROTOCOL, nft::expr::ct::L3PROTOCOL].contains(key) =>
            {
                *dir = None
            }
            Expr::Numgen { offset, .. } => *offset = Some(offset.unwrap_or(0)),
            // The kernel dumps a dynset's zero timeout and flags.
            Expr::Other { name, data } if name == nft::expr::dynset::NAME => {
                if let Some(d) = nft::expr::dynset::canonical(data) {
                    *data = d;
                }
            }
            // The kernel makes an absent range end equal to its start.
            Expr::Nat {
                reg_addr_min,
                reg_addr_max,
                reg_proto_min,
                reg_proto_max,
                ..
            } => {
                *reg_addr_max = reg_addr_max.or(*reg_addr_min);
                *reg_proto_max = reg_proto_max.or(*reg_proto_min);
            }
            Expr::Masq {
                reg_proto_min,
                reg_proto_max,
                ..
            }
            | Expr::Redir {
                reg_proto_min,
                reg_proto_max,
                ..
            } => *reg_proto_max = reg_proto_max.or(*reg_proto_min),
            _ => {}
        }
    }
    merge_v4_addresses(&mut out);
    out
}

/// `-s A -d B` (whole IPv4 addresses) as one 8-byte load and compare:
/// earlier builds wrote two loads and two compares, which test the same
/// bytes, so a table they wrote still verifies.
fn merge_v4_addresses(exprs: &mut Vec<Expr>) {
    use nft::expr::{base, reg, CmpOp};
    let load = |e: &Expr, at: u32| {
        matches!(e, Expr::Payload { dreg, base: b, offset, len: 4 }
            if *dreg == reg::R1 && *b == base::NETWORK && *offset == at)
    };
    let eq4 = |e: &Expr| match e {
        Expr::Cmp {
            sreg,
            op: CmpOp::Eq,
            data,
        } if *sreg == reg::R1 && data.len() == 4 => Some(data.clone()),
        _ => None,
    };
    let at = exprs.windows(4).position(|w| {
        load(&w[0], 12) && eq4(&w[1]).is_some() && load(&w[2], 16) && eq4(&w[3]).is_some()
    });
    let Some(i) = at else { return };
    let mut data = eq4(&exprs[i + 1]).unwrap_or_default();
    data.extend(eq4(&exprs[i + 3]).unwrap_or_default());
    let merged = [
        Expr::Payload {
            dreg: reg::R1,
            base: base::NETWORK,
            offset: 12,
            len: 8,
        },
        Expr::Cmp {
            sreg: reg::R1,
            op: CmpOp::Eq,
            data,
        },
    ];
    exprs.splice(i..i + 4, merged);
}

#[cfg(test)]
mod tests {
    use super::*;
    use nft::expr::{base, reg, CmpOp};

    fn load(offset: u32, len: u32) -> Expr {
        Expr::Payload {
            dreg: reg::R1,
            base: base::NETWORK,
            offset,
            len,
        }
    }

    fn cmp(op: CmpOp, data: &[u8]) -> Expr {
        Expr::Cmp {
            sreg: reg::R1,
            op,
            data: data.to_vec(),
        }
    }

    /// What earlier builds wrote for `-s A -d B` verifies against the
    /// merged form; nothing else is merged.
    #[test]
    fn two_address_compares_equal_the_merged_one() {
        let (a, b) = ([10, 0, 0, 1], [172, 16, 0, 1]);
        let merged = vec![load(12, 8), cmp(CmpOp::Eq, &[10, 0, 0, 1, 172, 16, 0, 1])];
        let cases: Vec<(Vec<Expr>, bool)> = vec![
            (
                vec![
                    load(12, 4),
                    cmp(CmpOp::Eq, &a),
                    load(16, 4),
                    cmp(CmpOp::Eq, &b),
                ],
                true,
            ),
            (merged.clone(), true),
            (
                vec![
                    load(12, 4),
                    cmp(CmpOp::Neq, &a),
                    load(16, 4),
                    cmp(CmpOp::Eq, &b),
                ],
                false,
            ),
            (
                vec![
                    load(16, 4),
                    cmp(CmpOp::Eq, &b),
                    load(12, 4),
                    cmp(CmpOp::Eq, &a),
                ],
                false,
            ),
            (vec![load(12, 4), cmp(CmpOp::Eq, &a)], false),
        ];
        for (exprs, same) in cases {
            assert_eq!(normalized(&exprs) == normalized(&merged), same, "{exprs:?}");
        }
    }
}

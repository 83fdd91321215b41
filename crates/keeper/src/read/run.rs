//! A compiled run read back: its members from its set's elements (see
//! `compile::runs`), each rebuilt from the element's userdata.

use super::*;
use ruleset::hash::{FxMap, FxSet};

/// What the elements of run `rr` (of table `kind`) gave so far: each
/// member is put into the model's run chain as its element arrives
/// (staged there, placed in id order at the end), its texts into the
/// snapshot's maps.
struct Gathered<'r, 'a, 's> {
    kind: TableKind,
    rr: &'r RunRule<'a>,
    /// A partial read (see [`read_run`]).
    partial: bool,
    /// Whether `Snapshot::run_elems` keeps the elements.
    keep_seen: bool,
    /// A multiport run: a member is an element per port, its counters
    /// their sum; each member's id in its elements → the id it got.
    ports: Option<FxMap<RuleId, RuleId>>,
    table: ruleset::Staging<'s, Rule>,
    lazy: &'s mut FxMap<RuleId, String>,
    overflow: &'s mut HashMap<RuleId, u32>,
    /// The run chain's texts (a partial read's).
    texts: Option<&'s mut FxMap<String, RuleId>>,
    /// The members staged so far (their ids).
    ids: Vec<RuleId>,
    /// Elements that are not ours, for `Snapshot::foreign`.
    foreign: Vec<String>,
    /// What `Snapshot::run_elems` keeps of each element.
    seen: Vec<SeenElem>,
}

impl Gathered<'_, '_, '_> {
    /// Forget what was gathered (the dump is read again).
    fn clear(&mut self) {
        self.table.clear();
        for id in &self.ids {
            self.lazy.remove(id);
            self.overflow.remove(id);
        }
        if let Some(m) = self.texts.as_deref_mut() {
            let gone: FxSet<RuleId> = self.ids.iter().copied().collect();
            m.retain(|_, id| !gone.contains(id));
        }
        self.ids.clear();
        if let Some(p) = self.ports.as_mut() {
            p.clear();
        }
        self.foreign.clear();
        self.seen.clear();
    }

    /// Element `e` as a member, `overflow_texts` the catalog's.
    fn add(&mut self, e: &nft::SetElem, overflow_texts: &mut Texts) {
        let (kind, rr, partial) = (self.kind, self.rr, self.partial);
        if self.keep_seen {
            self.seen.push(SeenElem::of(e));
        }
        // An interval run's end markers belong to the member before them.
        if e.flags
            .is_some_and(|f| f & nft::setelem::F_INTERVAL_END != 0)
        {
            return;
        }
        let family = self.table.table().family();
        let verdict = match &e.data {
            Some(nft::Data::Verdict(Verdict::Jump(t))) => Some((t.as_str(), false)),
            Some(nft::Data::Verdict(Verdict::Goto(t))) => Some((t.as_str(), true)),
            _ => None,
        };
        let mut lazy = false;
        let rebuilt = match (rr.lazy && partial, verdict) {
            (true, Some((t, goto))) => match rule_text(e.userdata.as_deref(), overflow_texts) {
                Some((id, mut text, chunks)) => {
                    let blanks = text.len() - text.trim_start_matches([' ', '\t']).len();
                    text.drain(..blanks);
                    match stand_in(&text, t, goto) {
                        Some(r) => {
                            lazy = true;
                            Some((id, r, chunks, text))
                        }
                        None => {
                            parse_body(family, kind, rr.chain, &text).map(|r| (id, r, chunks, text))
                        }
                    }
                }
                None => None,
            },
            _ => rebuild(
                family,
                kind,
                rr.chain,
                e.userdata.as_deref(),
                overflow_texts,
            ),
        };
        let Some((id, mut rule, chunks, text)) = rebuilt else {
            self.foreign
                .push(format!("element of set {} (no nfkeeper userdata)", rr.set));
            return;
        };
        let mut c = Counters::default();
        for x in &e.exprs {
            if let Expr::Counter { bytes, packets } = x {
                c = Counters {
                    packets: *packets,
                    bytes: *bytes,
                };
            }
        }
        if let Some(&used) = self.ports.as_ref().and_then(|p| p.get(&id)) {
            self.table.add_counters(used, c);
            return;
        }
        let t = match &e.data {
            Some(nft::Data::Verdict(Verdict::Jump(t) | Verdict::Goto(t))) => Some(t.as_str()),
            _ => rr.target,
        };
        let holds = partial && text_holds(&rule, t);
        let table = &mut self.table;
        follow_target(&mut rule, t, partial, |t| {
            table.ensure_chain(t);
        });
        let used = match self.table.stage(id, id, rule, c) {
            Ok(used) => used,
            Err(err) => {
                self.foreign
                    .push(format!("element of set {} ({err})", rr.set));
                return;
            }
        };
        self.ids.push(used);
        if let Some(p) = self.ports.as_mut() {
            p.insert(id, used);
        }
        if chunks > 0 {
            self.overflow.insert(used, chunks);
        }
        match (holds, self.texts.as_deref_mut()) {
            (true, Some(m)) if lazy => {
                self.lazy.insert(used, text.clone());
                m.insert(text, used);
            }
            (true, Some(m)) => {
                m.insert(text, used);
            }
            _ if lazy => {
                self.lazy.insert(used, text);
            }
            _ => {}
        }
    }
}

/// A run rule as dumped.
pub(super) struct RunRule<'a> {
    pub(super) chain: &'a str,
    pub(super) handle: u64,
    pub(super) key: u8,
    pub(super) set: &'a str,
    /// Its verdict's chain (set runs that jump).
    pub(super) target: Option<&'a str>,
    /// The shape text from its userdata (`None` when it did not fit).
    pub(super) shape: Option<&'a str>,
    /// Members whose text ends in their kernel jump are left unparsed
    /// ([`Snapshot::lazy`]).
    pub(super) lazy: bool,
}

/// A stand-in for a member left unparsed: only its jump to `t` (`goto`:
/// `-g`), when its canonical text `text` ends in exactly that jump (a
/// jump to a user chain takes no options, so it is the text's last
/// words). `None`: parse it.
pub(super) fn stand_in(text: &str, t: &str, goto: bool) -> Option<Rule> {
    let flag = if goto { "-g " } else { "-j " };
    let rest = text.strip_suffix(t)?;
    let before = rest.strip_suffix(flag)?;
    if !(before.is_empty() || before.ends_with(' ')) || t.is_empty() || t.contains(' ') {
        return None;
    }
    let target = if goto {
        iptables::Target::Goto(t.into())
    } else {
        iptables::Target::Jump(t.into())
    };
    Some(Rule {
        target,
        ..Rule::default()
    })
}

/// The run of rule `rr`, its members not yet read (`partial`, none): key
/// kind, map or set, and its members' shape (retargeted to the kernel's
/// verdict); `None`, noted as foreign, for a key kind this build does not
/// know.
fn head(snap: &mut Snapshot, kind: TableKind, rr: &RunRule<'_>) -> Option<RunSnap> {
    let Some((key, map)) = userdata::run_key(rr.key) else {
        snap.foreign.push(format!(
            "rule handle {} in chain {} (run of an unknown key kind {})",
            rr.handle, rr.chain, rr.key
        ));
        return None;
    };
    let family = snap.table.family();
    let mut shape = rr.shape.and_then(|t| parse_body(family, kind, rr.chain, t));
    if let (Some(s), Some(t)) = (shape.as_mut(), rr.target) {
        retarget(s, t);
    }
    Some(RunSnap {
        chain: rr.chain.to_string(),
        set: rr.set.to_string(),
        key,
        map,
        handle: rr.handle,
        members: Vec::new(),
        shape,
        partial: true,
        census: None,
    })
}

/// A run's rule without its members ([`super::read_scoped_without_members`]):
/// the run is known (its set, shape and rule handle), none of its members.
pub(super) fn run_unread(snap: &mut Snapshot, kind: TableKind, rr: RunRule<'_>) {
    if let Some(run) = head(snap, kind, &rr) {
        snap.runs.push(run);
    }
}

/// A run's members from its set's elements (one element dump), in id
/// order, into the model; each element's counter is its rule's.
pub(super) fn read_run(
    sock: &mut Socket,
    snap: &mut Snapshot,
    kind: TableKind,
    rr: RunRule<'_>,
    partial: bool,
    probe: Option<&Rule>,
    texts: &mut Texts,
) -> Result<(), nft::Error> {
    let family = snap.table.family();
    let fam = layout::nft_family(family);
    let tname = layout::table_name(kind);
    let Some(mut run) = head(snap, kind, &rr) else {
        return Ok(());
    };
    let (key, map) = (run.key, run.map);
    // With a probe and a known shape, only the element with the probe's
    // key can hold a member equal to it (keys are unique in a run).
    // A numgen run is read whole: deleting a member rewrites all of it.
    let probed = match (probe, run.shape.as_ref()) {
        (Some(p), Some(sh)) if key != compile::runs::KeyKind::Numgen => {
            Some(compile::runs::admits(key, map, sh, p, family))
        }
        _ => None,
    };
    // Members are built as the elements arrive: while the kernel walks
    // the set for the next reply (`Socket::set_elems_with`).
    let Snapshot {
        table,
        lazy,
        overflow,
        texts: all_texts,
        ..
    } = snap;
    let staging = match table.staging(rr.chain) {
        Ok(s) => s,
        Err(e) => {
            snap.foreign.push(format!("set {} ({e})", rr.set));
            return Ok(());
        }
    };
    let mut got = Gathered {
        kind,
        rr: &rr,
        partial,
        keep_seen: snap.run_elems.is_some(),
        ports: (key == compile::runs::KeyKind::Dports).then(FxMap::default),
        table: staging,
        lazy,
        overflow,
        texts: partial.then(|| all_texts.entry(rr.chain.to_string()).or_default()),
        ids: Vec::new(),
        foreign: Vec::new(),
        seen: Vec::new(),
    };
    match &probed {
        None => {
            let got = std::cell::RefCell::new(&mut got);
            sock.set_elems_with(
                fam,
                &tname,
                rr.set,
                |es| {
                    let mut g = got.borrow_mut();
                    for e in &es {
                        g.add(e, texts);
                    }
                    Ok(())
                },
                || got.borrow_mut().clear(),
            )?;
        }
        Some(None) => {}
        Some(Some((k, _))) => {
            let one = nft::SetElems::new(fam, &tname, rr.set, vec![nft::SetElem::key(k)]);
            for e in sock.get(&one)?.map(|l| l.elems).unwrap_or_default() {
                got.add(&e, texts);
            }
        }
    }
    let Gathered {
        table: staging,
        foreign,
        seen,
        ..
    } = got;
    run.members = staging.finish();
    snap.foreign.extend(foreign);
    if let Some(kept) = snap.run_elems.as_mut() {
        kept.insert(rr.set.to_string(), seen);
    }
    run.partial = probed.is_some();
    snap.runs.push(run);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::stand_in;

    #[test]
    fn a_stand_in_needs_the_kernel_jump_at_the_texts_end() {
        // (text, kernel target, goto, stands in)
        let cases: &[(&str, &str, bool, bool)] = &[
            (
                "-d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j SVC-1",
                "SVC-1",
                false,
                true,
            ),
            ("-j SVC-1", "SVC-1", false, true),
            ("-s 10.0.0.1/32 -g SVC-1", "SVC-1", true, true),
            // The kernel's verdict names another chain (a rename).
            ("-d 10.0.0.1/32 -j SVC-1", "SVC-2", false, false),
            ("-d 10.0.0.1/32 -j XSVC-1", "SVC-1", false, false),
            // Jump where the kernel has goto, and the other way round.
            ("-d 10.0.0.1/32 -j SVC-1", "SVC-1", true, false),
            ("-d 10.0.0.1/32 -g SVC-1", "SVC-1", false, false),
            // The chain's name not as the last word (a comment, options).
            (
                "-m comment --comment \"-j SVC-1\" -j ACCEPT",
                "SVC-1",
                false,
                false,
            ),
            ("-d 10.0.0.1/32 -j SVC-1 --x", "SVC-1", false, false),
        ];
        for &(text, t, goto, want) in cases {
            let got = stand_in(text, t, goto);
            assert_eq!(got.is_some(), want, "{text} / {t} / goto {goto}");
            if let Some(r) = got {
                assert_eq!(ruleset::RuleBody::jump_target(&r), Some(t), "{text}");
            }
        }
    }
}

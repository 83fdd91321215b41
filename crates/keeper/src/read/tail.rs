//! The end of a chain, read for an append that may join a compiled run.

use super::*;

/// The end of a chain, as an append needs it to join a run or start one
/// (see `crate::runs`).
#[derive(Clone, Debug)]
pub struct Tail {
    /// The chain's kernel rules after its last run (all, if none), oldest
    /// first, with their counters and handles.
    pub plain: Vec<(RuleId, Rule, Counters, crate::plan::Loc)>,
    /// The run that is the chain's last kernel rule, if it is one that
    /// appends can join (its shape is in its userdata).
    pub run: Option<TailRun>,
}

/// A run at the end of a chain.
#[derive(Clone, Debug)]
pub struct TailRun {
    /// Its index in [`crate::plan::KernelApply::runs`] when the apply
    /// knows it (a whole model), so joined rules are registered as members.
    pub index: Option<u32>,
    pub rule: crate::plan::Loc,
    pub set: String,
    pub key: compile::runs::KeyKind,
    pub map: bool,
    pub shape: Rule,
    /// The run's census, read with it (see [`RunSnap::census`]).
    pub census: Option<Census>,
}

/// Read the end of `chain`, whose kernel use count is `uses` (as a read
/// found it), when that is at most `max_rules`: one rule dump of the chain.
/// `None`: too long to read for an append (then appends stay plain rules).
/// Members of runs are not read.
pub fn tail(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
    chain: &str,
    uses: u32,
    max_rules: u32,
) -> Result<Option<Tail>, nft::Error> {
    let fam = layout::nft_family(family);
    let tname = layout::table_name(kind);
    let mut t = Tail {
        plain: Vec::new(),
        run: None,
    };
    if uses == 0 {
        return Ok(Some(t));
    }
    if uses > max_rules {
        return Ok(None);
    }
    let mut rules: Vec<KernelRule> = Vec::new();
    dump_rules(sock, fam, &tname, Some(chain), &mut rules)?;
    let mut texts = Texts::new();
    let n = rules.len();
    for (i, kr) in rules.into_iter().enumerate() {
        let d = kr
            .userdata
            .as_deref()
            .and_then(|u| userdata::decode(u).ok());
        if let Some((kb, set)) = d.as_ref().and_then(|d| d.run.clone()) {
            t.plain.clear();
            let last = i + 1 == n;
            // No shape in the userdata (it did not fit): appends can't join.
            let shape_text = d.filter(|d| d.has_text).map(|d| d.text);
            let key = userdata::run_key(kb);
            let shape = key
                .and(shape_text)
                .and_then(|t| parse_body(family, kind, chain, &t));
            t.run = match (last, key, shape) {
                (true, Some((key, map)), Some(mut shape)) => {
                    if let Some(tg) = kr.target.as_deref() {
                        retarget(&mut shape, tg);
                    }
                    Some(TailRun {
                        index: None,
                        rule: crate::plan::Loc::Handle(kr.handle),
                        census: read_census(sock, fam, &tname, &set)?,
                        set,
                        key,
                        map,
                        shape,
                    })
                }
                _ => None,
            };
            continue;
        }
        t.run = None;
        match rebuild(family, kind, chain, kr.userdata.as_deref(), &mut texts) {
            Some((id, mut rule, _, _)) => {
                if let Some(tg) = kr.target.as_deref() {
                    retarget(&mut rule, tg);
                }
                t.plain
                    .push((id, rule, kr.counters, crate::plan::Loc::Handle(kr.handle)));
            }
            // Not readable here (foreign, or text in the catalog): nothing
            // before it can join a run with what comes after.
            None => t.plain.clear(),
        }
    }
    Ok(Some(t))
}

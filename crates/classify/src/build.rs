//! What the compiler makes of a logical ruleset, as [`Kernel`] objects the
//! interpreter runs: every table of one family, each chain lowered rule by
//! rule (`runs: None`, what nfkeeper loads today) or with runs compiled into
//! sets and verdict maps (`Some(opts)`).

use crate::compiled::{BaseHook, KChain, KRule, KSet, KTable, Kernel};
use crate::{Hook, Unsupported};
use compile::layout::{self, hook};
use compile::runs::{compile_chain, Item, RunOpts};
use compile::{lower_rule, rebase_lookups, AnonSet};
use iptables::Rule;
use nft::{Data, SetElem};
use ruleset::{Family, Policy, RuleId, Ruleset, TableKind};

fn hook_of(n: u32) -> Hook {
    match n {
        hook::PRE_ROUTING => Hook::Prerouting,
        hook::LOCAL_IN => Hook::Input,
        hook::FORWARD => Hook::Forward,
        hook::LOCAL_OUT => Hook::Output,
        _ => Hook::Postrouting,
    }
}

/// The compiled form of every table of `family` in `rs`.
pub fn kernel_of(
    rs: &Ruleset<Rule>,
    family: Family,
    runs: Option<RunOpts>,
) -> Result<Kernel, Unsupported> {
    let mut k = Kernel::default();
    for kind in TableKind::ALL {
        k.tables.push(table_of(rs, family, kind, runs)?);
    }
    Ok(k)
}

fn table_of(
    rs: &Ruleset<Rule>,
    family: Family,
    kind: TableKind,
    runs: Option<RunOpts>,
) -> Result<KTable, Unsupported> {
    let t = rs.table(family, kind);
    let mut out = KTable::default();
    let mut next_anon = 1u32;
    let nft_family = layout::nft_family(family);
    let lower_err = |e: compile::LowerError| Unsupported(e.to_string());
    for c in t.chains() {
        let base = layout::base_chain(kind, c.name).map(|b| BaseHook {
            hook: hook_of(b.hook),
            priority: b.priority,
            nat: b.chain_type == "nat",
            policy_drop: c.policy == Some(Policy::Drop),
        });
        let members: Vec<(RuleId, &Rule)> = t
            .rules(c.name)
            .map_err(|e| Unsupported(e.to_string()))?
            .map(|r| (r.id, r.body))
            .collect();
        let items = match runs {
            Some(o) => compile_chain(&members, family, kind, c.name, o).map_err(lower_err)?,
            None => members.iter().map(|&(id, _)| Item::Plain { id }).collect(),
        };
        let bodies: std::collections::HashMap<RuleId, &Rule> = members.iter().copied().collect();
        let mut chain = KChain {
            base,
            rules: Vec::with_capacity(items.len()),
        };
        for item in items {
            let (mut lowered, id) = match item {
                Item::Plain { id } => (
                    lower_rule(bodies[&id], family, kind, c.name).map_err(lower_err)?,
                    Some(id),
                ),
                Item::Run { lowered, set } => {
                    let mut ks = KSet {
                        key_len: set.key_len as usize,
                        interval: set.interval,
                        elem_counter: true,
                        elems: Default::default(),
                    };
                    for e in &set.elems {
                        let mut se = SetElem::key(&e.key);
                        se.data = e.verdict.clone().map(Data::Verdict);
                        ks.add(&se, Some(e.id));
                    }
                    // End markers after every start: one that falls on the
                    // next range's start gives way to it (as in the kernel).
                    for end in set.elems.iter().filter_map(|e| e.end.as_ref()) {
                        let mut se = SetElem::key(end);
                        se.flags = Some(nft::setelem::F_INTERVAL_END);
                        ks.add(&se, None);
                    }
                    out.sets.insert(set.name.clone(), ks);
                    (lowered, None)
                }
            };
            // Anonymous sets (multiport ports, …) get batch-unique names as
            // the keeper gives them.
            rebase_lookups(&mut lowered.exprs, next_anon);
            for a in &lowered.sets {
                out.sets.insert(
                    format!("__nfk_set{}", next_anon + a.index),
                    anon(a, nft_family),
                );
            }
            next_anon += lowered.sets.len() as u32;
            chain.rules.push(KRule {
                exprs: lowered.exprs,
                id,
            });
        }
        out.chains.insert(c.name.to_string(), chain);
    }
    Ok(out)
}

fn anon(a: &AnonSet, family: nft::Family) -> KSet {
    let (_, elems) = a.to_nft(family, "t", 0);
    let mut ks = KSet {
        key_len: a.key_len as usize,
        interval: a.interval,
        elem_counter: false,
        elems: Default::default(),
    };
    for e in &elems.elems {
        ks.add(e, None);
    }
    ks
}

//! `NEWRULE` (append, insert, replace) and `DELRULE`/`DESTROYRULE`
//! (`nf_tables_newrule`, `nf_tables_delrule`), with what the expressions'
//! init does that a fake can check: verdicts name existing non-base
//! chains of the table, lookups name existing sets of the right kind, an
//! anonymous set binds to one rule.

use std::sync::Arc;

use nft::data::{Data, Verdict};
use nft::expr::{reg, Expr};
use nft::netlink::{NLM_F_APPEND, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE};
use nft::set::DATA_TYPE_VERDICT;

use super::{absent, check_len, table_of, Prep, Res};
use crate::errno::*;
use crate::model::{lookup_set, Rule, Slot, Table};
use crate::txn::{Ctx, Trans, Txn};
use crate::{exprs, validate};

/// `NFT_RULE_MAXEXPRS`.
const MAX_EXPRS: usize = 128;

pub fn new(p: &mut Prep, ctx: Ctx, r: nft::Rule) -> Res {
    let ti = table_of(p.rs, ctx.family, &r.table)?;
    let th = p.rs.tables[ti].handle;
    let ci = if !r.chain.is_empty() {
        p.rs.tables[ti].chain(&r.chain).ok_or(ENOENT)?
    } else if let Some(id) = r.chain_id {
        let ch = p.txn.chain_by_id(th, id).ok_or(ENOENT)?;
        p.rs.tables[ti].chain_by_handle(ch).ok_or(ENOENT)?
    } else {
        return Err(EINVAL);
    };
    let table = &p.rs.tables[ti];
    let chain = &table.chains[ci];
    let slot_of = |h: u64| chain.rules.iter().position(|s| s.rule.handle == h);
    // (handle of the new rule, slot it is placed against, replace it)
    let (handle, at, replace) = match r.handle {
        Some(h) => {
            let si = slot_of(h).ok_or(ENOENT)?;
            if ctx.flags & NLM_F_EXCL != 0 {
                return Err(EEXIST);
            }
            if ctx.flags & NLM_F_REPLACE == 0 {
                return Err(EOPNOTSUPP);
            }
            (h, Some(si), true)
        }
        None => {
            if ctx.flags & NLM_F_CREATE == 0 || ctx.flags & NLM_F_REPLACE != 0 {
                return Err(EINVAL);
            }
            let handle = table.alloc_handle();
            let at = if let Some(pos) = r.position {
                Some(slot_of(pos).ok_or(ENOENT)?)
            } else if let Some(pid) = r.position_id {
                let h = p.txn.rule_by_id(th, chain.handle, pid).ok_or(ENOENT)?;
                Some(slot_of(h).ok_or(ENOENT)?)
            } else {
                None
            };
            (handle, at, false)
        }
    };
    if r.exprs.len() > MAX_EXPRS {
        return Err(EINVAL);
    }
    check_len("", r.userdata.as_deref())?;
    let mut exprs = r.exprs;
    // Anonymous sets the rule binds (bound once every expression is fine).
    let mut binds = Vec::new();
    for i in 0..exprs.len() {
        let (before, rest) = exprs.split_at_mut(i);
        if let Some(si) = init_expr(table, p.txn, th, &mut rest[0], before)? {
            binds.push(si);
        }
        exprs::canon(&mut rest[0]);
    }
    let ch = chain.handle;
    let table = &mut p.rs.tables[ti];
    for si in binds {
        Arc::make_mut(&mut table.sets[si]).bound = true;
    }
    let mut at = at;
    if replace {
        let si = at.expect("replace has a slot");
        if table.chains[ci].rules[si].gone {
            return Err(ENOENT);
        }
        del_slot(table, p.txn, ctx, ci, si);
    }
    let obj = Arc::new(Rule {
        handle,
        exprs,
        userdata: r.userdata,
    });
    let slot = Slot {
        rule: obj.clone(),
        gone: false,
    };
    let rules = Arc::make_mut(&mut table.chains[ci].rules);
    let append = ctx.flags & NLM_F_APPEND != 0;
    match at.take() {
        // A replacement goes where the old rule was (before its slot).
        Some(si) if replace => rules.insert(si, slot),
        Some(si) if append => rules.insert(si + 1, slot),
        Some(si) => rules.insert(si, slot),
        None if append => rules.push(slot),
        None => rules.insert(0, slot),
    }
    p.txn.push(Trans::NewRule {
        ctx,
        table: th,
        chain: ch,
        rule: handle,
        obj,
        id: r.id,
    });
    if p.txn.validate_each {
        validate::table(&p.rs.tables[ti])?;
    }
    Ok(())
}

/// What an expression's init checks, and the kernel's form of it: a
/// lookup names its set (a batch-local set id is resolved). Returns the
/// anonymous set it binds, if any.
fn init_expr(
    table: &Table,
    txn: &mut Txn,
    th: u64,
    e: &mut Expr,
    before: &[Expr],
) -> Result<Option<usize>, i32> {
    match e {
        Expr::Immediate { dreg, data } => match (data, *dreg == reg::VERDICT) {
            (Data::Verdict(v), true) => {
                if let Verdict::Jump(c) | Verdict::Goto(c) = v {
                    let ci = table.chain(c).ok_or(ENOENT)?;
                    if table.chains[ci].base.is_some() {
                        return Err(EOPNOTSUPP);
                    }
                    txn.needs_validation = true;
                }
                Ok(None)
            }
            (Data::Verdict(_), false) | (Data::Value(_), true) => Err(EINVAL),
            (Data::Value(_), false) => Ok(None),
        },
        Expr::Lookup {
            set, set_id, dreg, ..
        } => {
            let si = match table.set(set) {
                Some(si) => si,
                None => {
                    let id = set_id.ok_or(ENOENT)?;
                    let h = txn.set_by_id(th, id).ok_or(ENOENT)?;
                    table.set_by_handle(h).ok_or(ENOENT)?
                }
            };
            let s = &table.sets[si];
            if let Some(d) = dreg {
                if !s.is_map() {
                    return Err(EINVAL);
                }
                let verdict = s.data_type == DATA_TYPE_VERDICT;
                if verdict != (*d == reg::VERDICT) {
                    return Err(EINVAL);
                }
                if verdict {
                    txn.needs_validation = true;
                }
            }
            let bound_here = before.iter().any(|x| lookup_set(x) == Some(&s.name));
            if s.is_anonymous() && (s.bound || bound_here) {
                return Err(EBUSY);
            }
            *set = s.name.clone();
            *set_id = None;
            Ok(s.is_anonymous().then_some(si))
        }
        _ => {
            if exprs::validates(e) {
                txn.needs_validation = true;
            }
            Ok(None)
        }
    }
}

/// Deletes the rule in slot `si` of chain `ci` (`nft_delrule`): marks it
/// deleted for the rest of the batch and records the transaction, with the
/// anonymous sets that go with it.
pub fn del_slot(table: &mut Table, txn: &mut Txn, ctx: Ctx, ci: usize, si: usize) {
    let (th, tname) = (table.handle, table.name.clone());
    let chain = &mut table.chains[ci];
    let slot = &mut Arc::make_mut(&mut chain.rules)[si];
    slot.gone = true;
    let rule = slot.rule.clone();
    let cname = chain.name.clone();
    let anon = rule
        .exprs
        .iter()
        .filter_map(lookup_set)
        .filter_map(|n| table.set(n).map(|i| &table.sets[i]))
        .filter(|s| s.is_anonymous())
        .cloned()
        .collect();
    txn.push(Trans::DelRule {
        ctx,
        table: th,
        tname,
        cname,
        rule,
        anon,
    });
}

/// Deletes every rule of chain `ci` (`nft_delrule_by_chain`).
pub fn flush_chain(table: &mut Table, txn: &mut Txn, ctx: Ctx, ci: usize) {
    for si in 0..table.chains[ci].rules.len() {
        if !table.chains[ci].rules[si].gone {
            del_slot(table, txn, ctx, ci, si);
        }
    }
}

pub fn del(p: &mut Prep, ctx: Ctx, r: nft::Rule, destroy: bool) -> Res {
    let ti = match table_of(p.rs, ctx.family, &r.table) {
        Err(ENOENT) => return absent(destroy),
        x => x?,
    };
    let th = p.rs.tables[ti].handle;
    let table = &mut p.rs.tables[ti];
    if r.chain.is_empty() {
        for ci in table.chains.indexes() {
            flush_chain(table, p.txn, ctx, ci);
        }
        return Ok(());
    }
    let Some(ci) = table.chain(&r.chain) else {
        return absent(destroy);
    };
    let find = |table: &Table, h: u64| {
        table.chains[ci]
            .rules
            .iter()
            .position(|s| s.rule.handle == h)
    };
    let si = if let Some(h) = r.handle {
        match find(table, h) {
            Some(si) => si,
            None => return absent(destroy),
        }
    } else if let Some(id) = r.id {
        let h = p
            .txn
            .rule_by_id(th, table.chains[ci].handle, id)
            .ok_or(ENOENT)?;
        find(table, h).ok_or(ENOENT)?
    } else {
        flush_chain(table, p.txn, ctx, ci);
        return Ok(());
    };
    if table.chains[ci].rules[si].gone {
        return Err(ENOENT);
    }
    del_slot(table, p.txn, ctx, ci, si);
    Ok(())
}

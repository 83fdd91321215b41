//! `NEWSETELEM` and `DELSETELEM`/`DESTROYSETELEM` (`nft_add_set_elem`,
//! `nft_del_setelem`, `nft_set_flush`), and the element lookup of a
//! single `GETSETELEM`.

use std::sync::Arc;

use nft::data::{Data, Verdict};
use nft::netlink::NLM_F_EXCL;
use nft::set::DATA_TYPE_VERDICT;
use nft::setelem::{F_CATCHALL, F_INTERVAL_END};

use super::{absent, set::stateful, table_of, Prep, Res, USERDATA_MAX};
use crate::errno::*;
use crate::model::{set_flags::*, Elem, ElemKey, Set, Table};
use crate::txn::{Ctx, Trans};
use crate::validate;

/// `NFT_SET_EXPR_MAX`.
const EXPR_MAX: usize = 2;

/// An element's flags (`nft_setelem_parse_flags`).
fn parse_flags(set: &Set, e: &nft::SetElem) -> Result<u32, i32> {
    let flags = e.flags.unwrap_or(0);
    if flags & !(F_INTERVAL_END | F_CATCHALL) != 0 {
        return Err(EOPNOTSUPP);
    }
    if !set.is_interval() && flags & F_INTERVAL_END != 0 {
        return Err(EINVAL);
    }
    Ok(flags)
}

/// The element's identity, its key checked against the set's key length.
fn key_of(set: &Set, e: &nft::SetElem, flags: u32) -> Result<ElemKey, i32> {
    if flags & F_CATCHALL != 0 {
        return Ok(ElemKey {
            catchall: true,
            key: Vec::new(),
            end: false,
        });
    }
    let key = e.key.as_ref().ok_or(EINVAL)?;
    if key.len() != set.key_len as usize {
        return Err(EINVAL);
    }
    if e.key_end
        .as_ref()
        .is_some_and(|k| k.len() != set.key_len as usize)
    {
        return Err(EINVAL);
    }
    Ok(ElemKey {
        catchall: false,
        key: key.clone(),
        end: flags & F_INTERVAL_END != 0,
    })
}

/// The set an element list names: by name, else (adds only) by the
/// batch-local set id.
fn set_of(table: &Table, txn_set: Option<usize>, l: &nft::SetElems) -> Result<usize, i32> {
    match table.set(&l.set) {
        Some(si) => Ok(si),
        None => txn_set.ok_or(ENOENT),
    }
}

pub fn new(p: &mut Prep, ctx: Ctx, l: nft::SetElems) -> Res {
    if l.elems.is_empty() {
        return Err(EINVAL);
    }
    let ti = table_of(p.rs, ctx.family, &l.table)?;
    let table = &p.rs.tables[ti];
    let by_id = l
        .set_id
        .and_then(|id| p.txn.set_by_id(table.handle, id))
        .and_then(|h| table.set_by_handle(h));
    let si = set_of(table, by_id, &l)?;
    let set = &table.sets[si];
    if set.flags & CONSTANT != 0 && table.is_bound(set) {
        return Err(EBUSY);
    }
    for e in l.elems {
        add(p, ctx, ti, si, e)?;
    }
    if p.txn.validate_each {
        validate::table(&p.rs.tables[ti])?;
    }
    Ok(())
}

/// `nft_add_set_elem`.
fn add(p: &mut Prep, ctx: Ctx, ti: usize, si: usize, e: nft::SetElem) -> Res {
    let table = &p.rs.tables[ti];
    let set = &table.sets[si];
    let flags = parse_flags(set, &e)?;
    if e.key.is_none() && flags & F_CATCHALL == 0 {
        return Err(EINVAL);
    }
    let end = flags & F_INTERVAL_END != 0;
    if set.is_map() {
        if e.data.is_none() && !end {
            return Err(EINVAL);
        }
    } else if e.data.is_some() {
        return Err(EINVAL);
    }
    if end
        && (e.data.is_some() || e.timeout.is_some() || e.userdata.is_some() || !e.exprs.is_empty())
    {
        return Err(EINVAL);
    }
    if e.timeout.is_some() && set.flags & TIMEOUT == 0 {
        return Err(EINVAL);
    }
    let exprs = if !e.exprs.is_empty() {
        if e.exprs.len() > EXPR_MAX || (!set.exprs.is_empty() && e.exprs.len() > set.exprs.len()) {
            return Err(E2BIG);
        }
        if !e.exprs.iter().all(stateful) {
            return Err(EOPNOTSUPP);
        }
        let same_kinds = e
            .exprs
            .iter()
            .zip(&set.exprs)
            .all(|(a, b)| a.name() == b.name());
        if !set.exprs.is_empty() && (!same_kinds || e.exprs.len() != set.exprs.len()) {
            return Err(EOPNOTSUPP);
        }
        e.exprs.clone()
    } else if end {
        // The end of a range gets none of the set's expressions.
        Vec::new()
    } else {
        set.exprs.clone()
    };
    let key = key_of(set, &e, flags)?;
    if let Some(d) = &e.data {
        check_data(table, set, d)?;
    }
    if e.userdata.as_ref().is_some_and(|u| u.len() > USERDATA_MAX) {
        return Err(ERANGE);
    }
    if let Some(old) = set.elems.get(&key) {
        let clash = old.data != e.data;
        if clash || ctx.flags & NLM_F_EXCL != 0 {
            return Err(EEXIST);
        }
        return Ok(());
    }
    if set.size > 0 && !key.catchall && !key.end && counted(set) >= set.size as usize {
        return Err(ENFILE);
    }
    if matches!(
        &e.data,
        Some(Data::Verdict(Verdict::Jump(_) | Verdict::Goto(_)))
    ) {
        p.txn.needs_validation = true;
    }
    let elem = Elem {
        key: e.key,
        key_end: e.key_end,
        data: e.data,
        flags,
        timeout: e.timeout,
        userdata: e.userdata,
        exprs,
    };
    let table = &mut p.rs.tables[ti];
    let (th, sh) = (table.handle, table.sets[si].handle);
    let set = Arc::make_mut(&mut table.sets[si]);
    Arc::make_mut(&mut set.elems).insert(key, elem.clone());
    p.txn.push(Trans::NewElem {
        ctx,
        table: th,
        set: sh,
        elem,
    });
    Ok(())
}

/// Elements that count against the set's size: all of them, but the ends
/// of ranges in an interval set (a range is one element of its size).
fn counted(set: &Set) -> usize {
    if !set.is_interval() {
        return set.elems.len();
    }
    set.elems.keys().filter(|k| !k.catchall && !k.end).count()
}

/// An element's data (`nft_setelem_parse_data`): a verdict for a verdict
/// map (jumps and gotos to existing non-base chains), else a value of the
/// map's data length.
fn check_data(table: &Table, set: &Set, d: &Data) -> Res {
    match d {
        Data::Verdict(v) => {
            if set.data_type != DATA_TYPE_VERDICT {
                return Err(EINVAL);
            }
            if let Verdict::Jump(c) | Verdict::Goto(c) = v {
                let ci = table.chain(c).ok_or(ENOENT)?;
                if table.chains[ci].base.is_some() {
                    return Err(EOPNOTSUPP);
                }
            }
            Ok(())
        }
        Data::Value(v) => {
            if set.data_type == DATA_TYPE_VERDICT || v.len() != set.data_len as usize {
                return Err(EINVAL);
            }
            Ok(())
        }
    }
}

pub fn del(p: &mut Prep, ctx: Ctx, l: nft::SetElems, destroy: bool) -> Res {
    let ti = match table_of(p.rs, ctx.family, &l.table) {
        Err(ENOENT) => return absent(destroy),
        x => x?,
    };
    let table = &mut p.rs.tables[ti];
    let Some(si) = table.set(&l.set) else {
        return absent(destroy);
    };
    if table.sets[si].flags & CONSTANT != 0 && table.is_bound(&table.sets[si]) {
        return Err(EBUSY);
    }
    let (tname, sname) = (table.name.clone(), table.sets[si].name.clone());
    if l.elems.is_empty() {
        // A flush: every element.
        let set = Arc::make_mut(&mut table.sets[si]);
        let all: Vec<Elem> = set.walk().into_iter().cloned().collect();
        Arc::make_mut(&mut set.elems).clear();
        for elem in all {
            p.txn.push(Trans::DelElem {
                ctx,
                tname: tname.clone(),
                sname: sname.clone(),
                elem,
            });
        }
        return Ok(());
    }
    for e in l.elems {
        let set = &table.sets[si];
        let flags = parse_flags(set, &e)?;
        if e.key.is_none() && flags & F_CATCHALL == 0 {
            return Err(EINVAL);
        }
        let key = key_of(set, &e, flags)?;
        let set = Arc::make_mut(&mut table.sets[si]);
        let Some(elem) = Arc::make_mut(&mut set.elems).remove(&key) else {
            return if destroy { Ok(()) } else { Err(ENOENT) };
        };
        p.txn.push(Trans::DelElem {
            ctx,
            tname: tname.clone(),
            sname: sname.clone(),
            elem,
        });
    }
    Ok(())
}

/// The element a single `GETSETELEM` asks for: by exact key (and end
/// flag); in an interval set, else the range holding the key (its start
/// element). `Err` is the errno of the reply.
pub fn find<'s>(set: &'s Set, e: &nft::SetElem) -> Result<&'s Elem, i32> {
    let flags = parse_flags(set, e)?;
    if e.key.is_none() && flags & F_CATCHALL == 0 {
        return Err(EINVAL);
    }
    let key = key_of(set, e, flags)?;
    if let Some(x) = set.elems.get(&key) {
        return Ok(x);
    }
    if !set.is_interval() || key.catchall {
        return Err(ENOENT);
    }
    // The last start at or below the key, unless a range end lies between.
    let below = set
        .elems
        .range(
            ..=ElemKey {
                end: true,
                ..key.clone()
            },
        )
        .next_back();
    match below {
        Some((k, x)) if !k.end && !k.catchall => Ok(x),
        _ => Err(ENOENT),
    }
}

//! `NEWSET` and `DELSET`/`DESTROYSET` (`nf_tables_newset`,
//! `nf_tables_delset`).

use std::collections::BTreeMap;
use std::sync::Arc;

use nft::expr::Expr;
use nft::netlink::{NLM_F_CREATE, NLM_F_EXCL, NLM_F_NONREC, NLM_F_REPLACE};
use nft::set::DATA_TYPE_VERDICT;
use nft::Family;

use super::{absent, check_len, table_of, Prep, Res};
use crate::errno::*;
use crate::model::{set_flags::*, Set, Table};
use crate::txn::{Ctx, Trans};

/// Flags a set may have.
const KNOWN: u32 = ANONYMOUS | CONSTANT | INTERVAL | TIMEOUT | MAP | EVAL | OBJECT | CONCAT | EXPR;
/// `NFT_DATA_RESERVED_MASK`.
const RESERVED: u32 = 0xffff_ff00;
/// `NFT_DATA_VALUE_MAXLEN`, bytes.
const VALUE_MAX: u32 = 64;
/// Data length of a verdict map (`sizeof(struct nft_verdict)`).
const VERDICT_LEN: u32 = 16;
/// `NFT_SET_EXPR_MAX`.
const EXPR_MAX: usize = 2;
/// `NFT_REG32_COUNT`.
const REG32_COUNT: u32 = 16;

/// Whether an expression keeps state per element (`NFT_EXPR_STATEFUL`).
pub fn stateful(e: &Expr) -> bool {
    matches!(
        e.name(),
        "counter" | "quota" | "limit" | "connlimit" | "last"
    )
}

pub fn new(p: &mut Prep, ctx: Ctx, s: nft::Set) -> Res {
    check_len(&s.table, None)?;
    check_len(&s.name, s.userdata.as_deref())?;
    if s.table.is_empty() || s.name.is_empty() || s.key_len.is_none() || s.id.is_none() {
        return Err(EINVAL);
    }
    let key_type = s.key_type.unwrap_or(0);
    if key_type & RESERVED == RESERVED {
        return Err(EINVAL);
    }
    let key_len = s.key_len.unwrap_or(0);
    if key_len == 0 || key_len > VALUE_MAX {
        return Err(EINVAL);
    }
    let flags = s.flags.unwrap_or(0);
    if flags & !KNOWN != 0
        || flags & (MAP | OBJECT) == MAP | OBJECT
        || flags & (EVAL | OBJECT) == EVAL | OBJECT
    {
        return Err(EOPNOTSUPP);
    }
    let (data_type, data_len) = match s.data_type {
        Some(d) => {
            if flags & MAP == 0 || (d & RESERVED == RESERVED && d != DATA_TYPE_VERDICT) {
                return Err(EINVAL);
            }
            if d == DATA_TYPE_VERDICT {
                (d, VERDICT_LEN)
            } else {
                match s.data_len {
                    Some(l) if l > 0 && l <= VALUE_MAX => (d, l),
                    _ => return Err(EINVAL),
                }
            }
        }
        None if flags & MAP != 0 => return Err(EINVAL),
        None => (0, 0),
    };
    if flags & OBJECT != 0 {
        // Object maps are not modelled (no NFTA_SET_OBJ_TYPE).
        return Err(EINVAL);
    }
    if (s.timeout.is_some() || s.gc_interval.is_some()) && flags & TIMEOUT == 0 {
        return Err(EINVAL);
    }
    if s.concat.iter().any(|l| l * 8 / 32 > REG32_COUNT) {
        return Err(E2BIG);
    }
    let ti = table_of(p.rs, ctx.family, &s.table)?;
    let table = &mut p.rs.tables[ti];
    if table.set(&s.name).is_some() {
        if ctx.flags & NLM_F_EXCL != 0 {
            return Err(EEXIST);
        }
        if ctx.flags & NLM_F_REPLACE != 0 {
            return Err(EOPNOTSUPP);
        }
        return Ok(());
    }
    if ctx.flags & NLM_F_CREATE == 0 {
        return Err(ENOENT);
    }
    let name = alloc_name(table, &s.name)?;
    if s.exprs.len() > 1 && flags & EXPR == 0 {
        return Err(EINVAL);
    }
    if s.exprs.len() > EXPR_MAX {
        return Err(E2BIG);
    }
    if !s.exprs.iter().all(stateful) {
        return Err(EOPNOTSUPP);
    }
    let handle = table.alloc_handle();
    table.sets.push(Arc::new(Set {
        name,
        handle,
        flags,
        key_type,
        key_len,
        data_type,
        data_len,
        policy: s.policy.unwrap_or(0),
        size: s.size.unwrap_or(0),
        concat: if s.concat.len() > 1 {
            s.concat
        } else {
            Vec::new()
        },
        timeout: s.timeout.unwrap_or(0),
        gc_interval: s.gc_interval.unwrap_or(0),
        userdata: s.userdata,
        exprs: s.exprs,
        elems: Arc::new(BTreeMap::new()),
        bound: false,
    }));
    p.txn.push(Trans::NewSet {
        ctx,
        table: table.handle,
        set: handle,
        id: s.id.unwrap_or(0),
    });
    Ok(())
}

/// The set's name (`nf_tables_set_alloc_name`): a `%d` in it becomes the
/// lowest number no set of the table has there.
fn alloc_name(table: &Table, pattern: &str) -> Result<String, i32> {
    let Some(at) = pattern.find('%') else {
        return Ok(pattern.to_string());
    };
    let (head, tail) = (&pattern[..at], &pattern[at + 1..]);
    let Some(tail) = tail.strip_prefix('d') else {
        return Err(EINVAL);
    };
    if tail.contains('%') {
        return Err(EINVAL);
    }
    let used: Vec<u64> = table
        .sets
        .iter()
        .filter_map(|s| {
            let n = s.name.strip_prefix(head)?.strip_suffix(tail)?;
            n.parse().ok()
        })
        .collect();
    let n = (0u64..).find(|n| !used.contains(n)).unwrap_or(0);
    let name = format!("{head}{n}{tail}");
    if table.set(&name).is_some() {
        return Err(ENFILE);
    }
    Ok(name)
}

pub fn del(p: &mut Prep, ctx: Ctx, s: nft::Set, destroy: bool) -> Res {
    if ctx.family == Family::Unspec {
        return Err(EAFNOSUPPORT);
    }
    let ti = match table_of(p.rs, ctx.family, &s.table) {
        Err(ENOENT) => return absent(destroy),
        x => x?,
    };
    let table = &mut p.rs.tables[ti];
    let found = match s.handle {
        Some(h) => table.set_by_handle(h),
        None if s.name.is_empty() => return Err(EINVAL),
        None => table.set(&s.name),
    };
    let Some(si) = found else {
        return absent(destroy);
    };
    let set = &table.sets[si];
    if table.set_use(&set.name) > 0 || (ctx.flags & NLM_F_NONREC != 0 && !set.elems.is_empty()) {
        return Err(EBUSY);
    }
    let snap = table.sets.remove(si);
    p.txn.push(Trans::DelSet {
        ctx,
        tname: table.name.clone(),
        snap,
    });
    Ok(())
}

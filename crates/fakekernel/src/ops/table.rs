//! `NEWTABLE`, `DELTABLE`/`DESTROYTABLE` (`nf_tables_newtable`,
//! `nf_tables_deltable`, `nft_flush_table`).

use nft::netlink::{NLM_F_EXCL, NLM_F_NONREC, NLM_F_REPLACE};
use nft::Family;

use super::{absent, check_len, Prep, Res};
use crate::errno::*;
use crate::model::Table;
use crate::txn::{Ctx, TableSnap, Trans};

/// `NFT_TABLE_F_MASK` (dormant, owner, persist).
const FLAGS_MASK: u32 = 0x7;
const F_OWNER: u32 = nft::table::F_OWNER;

fn supported(f: Family) -> bool {
    !matches!(f, Family::Unspec)
}

pub fn new(p: &mut Prep, ctx: Ctx, t: nft::Table) -> Res {
    if !supported(ctx.family) {
        return Err(EOPNOTSUPP);
    }
    if t.name.is_empty() {
        return Err(EINVAL);
    }
    check_len(&t.name, t.userdata.as_deref())?;
    if let Some(i) = p.rs.table(ctx.family, &t.name) {
        if ctx.flags & NLM_F_EXCL != 0 {
            return Err(EEXIST);
        }
        if ctx.flags & NLM_F_REPLACE != 0 {
            return Err(EOPNOTSUPP);
        }
        // nf_tables_updtable: only a change of flags is a transaction.
        let Some(flags) = t.flags else {
            return Ok(());
        };
        if flags & !FLAGS_MASK != 0 {
            return Err(EOPNOTSUPP);
        }
        let table = &mut p.rs.tables[i];
        if flags == table.flags {
            return Ok(());
        }
        if (table.flags ^ flags) & F_OWNER != 0 {
            return Err(EOPNOTSUPP);
        }
        table.flags = flags;
        let handle = table.handle;
        p.txn.push(Trans::UpdTable { ctx, table: handle });
        return Ok(());
    }
    let flags = t.flags.unwrap_or(0);
    if flags & !FLAGS_MASK != 0 {
        return Err(EOPNOTSUPP);
    }
    *p.table_handles += 1;
    let mut table = Table::new(ctx.family, &t.name, *p.table_handles, flags);
    table.userdata = t.userdata;
    p.txn.push(Trans::NewTable {
        ctx,
        table: table.handle,
    });
    p.rs.tables.push(table);
    Ok(())
}

pub fn del(p: &mut Prep, ctx: Ctx, t: nft::Table, destroy: bool) -> Res {
    if ctx.family == Family::Unspec || (t.name.is_empty() && t.handle.is_none()) {
        // nft_flush: every table of the family (or of every family), of
        // the given name if there is one.
        let picked: Vec<u64> =
            p.rs.tables
                .iter()
                .filter(|x| ctx.family == Family::Unspec || x.family == ctx.family)
                .filter(|x| t.name.is_empty() || x.name == t.name)
                .map(|x| x.handle)
                .collect();
        for h in picked {
            let i = p.rs.table_by_handle(h).expect("picked above");
            let family = p.rs.tables[i].family;
            flush(p, Ctx { family, ..ctx }, i);
        }
        return Ok(());
    }
    let found = match t.handle {
        Some(h) => p.rs.table_by_handle(h),
        None => p.rs.table(ctx.family, &t.name),
    };
    let Some(i) = found else {
        return absent(destroy);
    };
    if ctx.flags & NLM_F_NONREC != 0 && p.rs.tables[i].table_use() > 0 {
        return Err(EBUSY);
    }
    flush(p, ctx, i);
    Ok(())
}

/// Deletes table `i` with everything in it: its rules, its sets (but
/// anonymous ones still bound, which go with their rules), its chains,
/// itself — the transactions in that order.
pub fn flush(p: &mut Prep, ctx: Ctx, i: usize) {
    for ci in p.rs.tables[i].chains.indexes() {
        super::rule::flush_chain(&mut p.rs.tables[i], p.txn, ctx, ci);
    }
    let table = &mut p.rs.tables[i];
    let tname = table.name.clone();
    let (keep, del): (Vec<_>, Vec<_>) = table
        .sets
        .drain()
        .into_iter()
        .partition(|s| s.is_anonymous() && s.bound);
    for s in keep {
        table.sets.push(s);
    }
    for s in del {
        p.txn.push(Trans::DelSet {
            ctx,
            tname: tname.clone(),
            snap: s,
        });
    }
    for c in table.chains.drain() {
        p.txn.push(Trans::DelChain {
            ctx,
            tname: tname.clone(),
            snap: c,
        });
    }
    let table = p.rs.tables.remove(i);
    p.txn.push(Trans::DelTable {
        ctx,
        snap: TableSnap {
            name: table.name,
            handle: table.handle,
            flags: table.flags,
            userdata: table.userdata,
        },
    });
}

//! `NEWCHAIN` (create, update, rename) and `DELCHAIN`/`DESTROYCHAIN`
//! (`nf_tables_newchain`, `nf_tables_addchain`, `nf_tables_updchain`,
//! `nf_tables_delchain`).

use std::sync::Arc;

use nft::netlink::{NLM_F_EXCL, NLM_F_NONREC, NLM_F_REPLACE};
use nft::Family;

use super::{absent, check_len, table_of, Prep, Res};
use crate::errno::*;
use crate::model::{Base, Chain, CHAIN_BASE, CHAIN_BINDING, CHAIN_HW_OFFLOAD};
use crate::txn::{Ctx, Trans};

/// Chain flags a request may carry (`NFT_CHAIN_FLAGS`).
const FLAGS: u32 = CHAIN_BASE | CHAIN_HW_OFFLOAD | CHAIN_BINDING;
/// `NF_IP_PRI_CONNTRACK`: nat chains must run after conntrack.
const PRI_CONNTRACK: i32 = -200;

pub fn new(p: &mut Prep, ctx: Ctx, c: nft::Chain) -> Res {
    let ti = table_of(p.rs, ctx.family, &c.table)?;
    let table = &p.rs.tables[ti];
    let existing = if let Some(h) = c.handle {
        Some(table.chain_by_handle(h).ok_or(ENOENT)?)
    } else if !c.name.is_empty() {
        table.chain(&c.name)
    } else if c.id.is_none() {
        return Err(EINVAL);
    } else {
        None
    };
    let mut policy = nft::chain::POLICY_ACCEPT;
    if let Some(pol) = c.policy {
        match existing {
            Some(i) if table.chains[i].base.is_none() => return Err(EOPNOTSUPP),
            None if c.hook.is_none() => return Err(EOPNOTSUPP),
            _ => {}
        }
        if pol > 1 {
            return Err(EINVAL);
        }
        policy = pol;
    }
    let mut flags = c
        .flags
        .or(existing.map(|i| table.chains[i].flags))
        .unwrap_or(0);
    if flags & !FLAGS != 0 {
        return Err(EOPNOTSUPP);
    }
    match existing {
        Some(i) => {
            if ctx.flags & NLM_F_EXCL != 0 {
                return Err(EEXIST);
            }
            if ctx.flags & NLM_F_REPLACE != 0 {
                return Err(EOPNOTSUPP);
            }
            flags |= table.chains[i].flags & CHAIN_BASE;
            update(p, ctx, ti, i, flags, &c)
        }
        None => add(p, ctx, ti, policy, flags, c),
    }
}

/// Checks a base chain's hook (`nft_chain_parse_hook`): the type must
/// exist for the family, serve the hook, and (nat) run after conntrack.
fn check_hook(family: Family, ty: &str, num: u32, prio: i32, dev: bool) -> Res {
    use Family::*;
    let mask: u32 = match (ty, family) {
        ("filter", Ipv4 | Ipv6 | Bridge) => 0b1_1111,
        ("filter", Inet) => 0b11_1111,
        ("filter", Arp) => 0b111,
        ("filter", Netdev) => 0b11,
        ("nat", Ipv4 | Ipv6 | Inet) => 0b1_1011,
        ("route", Ipv4 | Ipv6 | Inet) => 0b1000,
        _ => return Err(ENOENT),
    };
    if num >= 32 || mask & (1 << num) == 0 {
        return Err(EOPNOTSUPP);
    }
    if ty == "nat" && prio <= PRI_CONNTRACK {
        return Err(EOPNOTSUPP);
    }
    let netdev = family == Netdev || (family == Inet && num == nft::chain::hook::INGRESS);
    if netdev {
        // Devices are not modelled: no device can be found.
        return Err(if dev { ENOENT } else { EINVAL });
    }
    if dev {
        return Err(EOPNOTSUPP);
    }
    Ok(())
}

fn add(p: &mut Prep, ctx: Ctx, ti: usize, policy: u32, flags: u32, c: nft::Chain) -> Res {
    let table = &mut p.rs.tables[ti];
    let base = match &c.hook {
        Some(h) => {
            if flags & CHAIN_BINDING != 0 {
                return Err(EOPNOTSUPP);
            }
            let ty = c.chain_type.clone().unwrap_or_else(|| "filter".to_string());
            check_hook(ctx.family, &ty, h.num, h.priority, h.dev.is_some())?;
            Some(Base {
                hooknum: h.num,
                priority: h.priority,
                ty,
                policy,
                counters: c.counters,
                dev: h.dev.clone(),
            })
        }
        None => {
            if flags & CHAIN_BASE != 0 {
                return Err(EINVAL);
            }
            if flags & CHAIN_HW_OFFLOAD != 0 {
                return Err(EOPNOTSUPP);
            }
            None
        }
    };
    let handle = table.alloc_handle();
    if c.name.is_empty() {
        // Only a binding chain may go unnamed; bindings are not modelled.
        return Err(EINVAL);
    }
    check_len(&c.name, c.userdata.as_deref())?;
    let flags = flags | if base.is_some() { CHAIN_BASE } else { 0 };
    table.chains.push(Chain {
        name: c.name,
        handle,
        base,
        flags,
        userdata: c.userdata,
        rules: Arc::new(Vec::new()),
    });
    let th = table.handle;
    if let Some(id) = c.id {
        p.txn.chain_ids.push((id, th, handle));
    }
    p.txn.push(Trans::NewChain {
        ctx,
        table: th,
        chain: handle,
    });
    Ok(())
}

fn update(p: &mut Prep, ctx: Ctx, ti: usize, ci: usize, flags: u32, c: &nft::Chain) -> Res {
    let table = &p.rs.tables[ti];
    let chain = &table.chains[ci];
    if chain.flags ^ flags != 0 {
        return Err(EOPNOTSUPP);
    }
    if let Some(h) = &c.hook {
        let Some(base) = &chain.base else {
            return Err(EEXIST);
        };
        let ty = c.chain_type.as_deref().unwrap_or("filter");
        check_hook(ctx.family, ty, h.num, h.priority, h.dev.is_some())?;
        if base.ty != ty || base.hooknum != h.num || base.priority != h.priority {
            return Err(EEXIST);
        }
    }
    let rename = c.handle.is_some() && !c.name.is_empty();
    if rename && table.chain(&c.name).is_some() {
        return Err(EEXIST);
    }
    if c.counters.is_some() && chain.base.is_none() {
        return Err(EOPNOTSUPP);
    }
    let th = table.handle;
    if rename {
        check_len(&c.name, None)?;
        if p.txn.renaming_to(th, &c.name) {
            return Err(EEXIST);
        }
    }
    let chain = &mut p.rs.tables[ti].chains[ci];
    if let Some(base) = &mut chain.base {
        if let Some(pol) = c.policy {
            base.policy = pol;
        }
        if let Some(ctr) = c.counters {
            base.counters = Some(ctr);
        }
    }
    let ch = chain.handle;
    p.txn.push(Trans::UpdChain {
        ctx,
        table: th,
        chain: ch,
        rename: rename.then(|| c.name.clone()),
    });
    Ok(())
}

pub fn del(p: &mut Prep, ctx: Ctx, c: nft::Chain, destroy: bool) -> Res {
    let ti = match table_of(p.rs, ctx.family, &c.table) {
        Err(ENOENT) => return absent(destroy),
        r => r?,
    };
    let table = &p.rs.tables[ti];
    let found = match c.handle {
        Some(h) => table.chain_by_handle(h),
        None if c.name.is_empty() => return Err(EINVAL),
        None => table.chain(&c.name),
    };
    let Some(ci) = found else {
        return absent(destroy);
    };
    let name = table.chains[ci].name.clone();
    if ctx.flags & NLM_F_NONREC != 0 && table.chain_use(&name) > 0 {
        return Err(EBUSY);
    }
    // Its rules go first; what still refers to it then forbids the delete
    // (the rules stay deleted for the rest of the batch, as in the kernel).
    super::rule::flush_chain(&mut p.rs.tables[ti], p.txn, ctx, ci);
    let table = &mut p.rs.tables[ti];
    if table.refs_to(&name) > 0 {
        return Err(EBUSY);
    }
    let snap = table.chains.remove(ci);
    p.txn.push(Trans::DelChain {
        ctx,
        tname: table.name.clone(),
        snap,
    });
    Ok(())
}

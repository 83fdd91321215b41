//! Reading one of our tables back from the kernel into the model.
//!
//! Chains come from one chain dump of the table, rules from one rule dump;
//! each rule is rebuilt from its userdata (id + canonical text), its counter
//! expression gives the counters. Cost: O(objects in the table) — the kernel
//! dump itself dominates (it restarts at the head of a chain for each 32 KiB
//! reply, so one long chain dumps in O(n²/70)).

use compile::layout;
use compile::userdata::{self, catalog};
use iptables::parse::{parse, restore::tokenize, ParseOpts};
use iptables::Rule;
use nft::{Expr, Socket};
use ruleset::{Counters, Family, Policy, RuleId, Table, TableKind};
use std::collections::HashMap;

/// One table as the kernel has it.
pub struct Snapshot {
    /// Does the nftables table exist at all?
    pub exists: bool,
    pub table: Table<Rule>,
    /// Kernel handle of each rule.
    pub handles: HashMap<RuleId, u64>,
    /// Kernel handle of each chain.
    pub chain_handles: HashMap<String, u64>,
    /// Catalog chunks of each rule whose text overflows its userdata.
    pub overflow: HashMap<RuleId, u32>,
    /// Objects in our table that nfkeeper did not write (or cannot read),
    /// described for a warning.
    pub foreign: Vec<String>,
}

/// How much of a table a command needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Everything (listings of all chains, -X, -E, -Z, restore).
    Table,
    /// Only the named chains, each fetched by name, no rules (-A, -I at the
    /// head, -N, -P): O(1) kernel requests, independent of the table size.
    Names(Vec<String>),
    /// The chains and the rules of one chain (-D, -R, -I N, -S CHAIN):
    /// O(chains + rules of that chain).
    Chain(String),
}

/// Read table `kind` of `family`, all of it.
pub fn read_table(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
) -> Result<Snapshot, nft::Error> {
    read_scoped(sock, family, kind, &Scope::Table)
}

/// Read what `scope` asks for. With a partial scope the model holds only
/// part of the table, so new rule ids start at a random 62-bit base: unique
/// against the ids of rules that were not read (collision odds ~n²/2⁶³).
pub fn read_scoped(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
    scope: &Scope,
) -> Result<Snapshot, nft::Error> {
    let fam = layout::nft_family(family);
    let tname = layout::table_name(kind);
    let mut snap = Snapshot {
        exists: false,
        table: Table::new(family, kind),
        handles: HashMap::new(),
        chain_handles: HashMap::new(),
        overflow: HashMap::new(),
        foreign: Vec::new(),
    };
    let exists = match scope {
        Scope::Names(_) => sock.get(&nft::Table::new(fam, &tname))?.is_some(),
        _ => sock.tables(fam)?.iter().any(|t| t.name == tname),
    };
    if !exists {
        return Ok(snap);
    }
    snap.exists = true;
    // Filter by table here too: a dump request's table filter is advisory.
    let chains = match scope {
        Scope::Names(names) => {
            let mut v = Vec::new();
            for n in names {
                if let Some(c) = sock.get(&nft::Chain::new(fam, &tname, n))? {
                    v.push(c);
                }
            }
            v
        }
        _ => sock.chains(fam, Some(&tname))?,
    };
    for c in chains.iter().filter(|c| c.table == tname) {
        if let Some(h) = c.handle {
            snap.chain_handles.insert(c.name.clone(), h);
        }
        if c.hook.is_some() {
            if layout::base_chain(kind, &c.name).is_none() {
                snap.foreign.push(format!(
                    "base chain {} (not an iptables chain of this table)",
                    c.name
                ));
                continue;
            }
            let policy = if c.policy == Some(nft::chain::POLICY_DROP) {
                Policy::Drop
            } else {
                Policy::Accept
            };
            let counters = c
                .counters
                .map(|(bytes, packets)| Counters { packets, bytes });
            let _ = snap.table.set_policy(&c.name, policy, counters);
        } else if snap.table.new_chain(&c.name).is_err() {
            snap.foreign.push(format!("chain {}", c.name));
        }
    }
    // Overflow texts: the catalog set, if the table has one.
    let mut texts: HashMap<RuleId, Vec<(u32, String)>> = HashMap::new();
    if sock
        .sets(fam, Some(&tname))?
        .iter()
        .any(|s| s.table == tname && s.name == catalog::SET)
    {
        for e in sock.set_elems(fam, &tname, catalog::SET)? {
            if let Some((id, n, t)) = e
                .key
                .as_deref()
                .zip(e.userdata.as_deref())
                .and_then(|(k, u)| catalog::parse(k, u))
            {
                texts.entry(id).or_default().push((n, t));
            }
        }
    }
    if *scope != Scope::Table {
        use std::hash::{BuildHasher, Hasher};
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        snap.table.set_next_id((random >> 2) | (1 << 61));
    }
    if let Scope::Names(_) = scope {
        return Ok(snap);
    }
    let only = match scope {
        Scope::Chain(c) => Some(c.as_str()),
        _ => None,
    };
    let mut rules: Vec<(String, u64, Option<Vec<u8>>, Counters)> = Vec::new();
    sock.rules(fam, Some(&tname), only, |r| {
        if r.table != tname || only.is_some_and(|c| c != r.chain) {
            return Ok(());
        }
        let mut counters = Counters::default();
        for e in r.exprs() {
            if let Ok(Expr::Counter { bytes, packets }) = e {
                counters = Counters { packets, bytes };
            }
        }
        rules.push((
            r.chain.to_string(),
            r.handle.unwrap_or(0),
            r.userdata.map(<[u8]>::to_vec),
            counters,
        ));
        Ok(())
    })?;
    for (chain, handle, ud, counters) in rules {
        match rebuild(family, kind, &chain, ud.as_deref(), &mut texts) {
            Some((id, rule, chunks)) => match snap.table.append_with_id(&chain, id, rule, counters)
            {
                Ok(id) => {
                    snap.handles.insert(id, handle);
                    if chunks > 0 {
                        snap.overflow.insert(id, chunks);
                    }
                }
                Err(e) => snap
                    .foreign
                    .push(format!("rule handle {handle} in chain {chain} ({e})")),
            },
            None => snap.foreign.push(format!(
                "rule handle {handle} in chain {chain} (no nfkeeper userdata)"
            )),
        }
    }
    Ok(snap)
}

/// The logical rule of a kernel rule from its userdata (and, for a long
/// rule, its catalog chunks); also the number of chunks used.
fn rebuild(
    family: Family,
    kind: TableKind,
    chain: &str,
    ud: Option<&[u8]>,
    texts: &mut HashMap<RuleId, Vec<(u32, String)>>,
) -> Option<(RuleId, Rule, u32)> {
    let d = userdata::decode(ud?).ok()?;
    let id = d.id?;
    let mut text = d.text;
    let mut chunks = 0;
    if let Some(total) = d.continued {
        let mut parts = texts.remove(&id)?;
        parts.sort_by_key(|p| p.0);
        chunks = parts.len() as u32;
        for (_, t) in parts {
            text.push_str(&t);
        }
        if text.len() != total as usize {
            return None;
        }
    }
    let words = tokenize(&text).ok()?;
    let mut argv: Vec<&str> = vec!["-A", chain];
    argv.extend(words.iter().map(String::as_str));
    let o = ParseOpts {
        family,
        restore: true,
        table: Some(kind),
        prog: "nfkeeper",
    };
    let mut p = parse(&argv, o).ok()?;
    (p.rules.len() == 1).then(|| (id, p.rules.remove(0), chunks))
}

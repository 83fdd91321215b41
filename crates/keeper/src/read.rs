//! Reading one of our tables back from the kernel into the model.
//!
//! Chains come from one chain dump of the table (or are fetched by name),
//! rules from one rule dump per chain that has any; each rule is rebuilt
//! from its userdata (id + canonical text), its counter expression gives
//! the counters. Cost: O(objects read) in user space; the kernel's dumps
//! dominate (a dump restarts at the head of its chain for each 32 KiB
//! reply, so a chain of n rules dumps in O(n²/~100)).

use compile::layout;
use compile::userdata::{self, catalog};
use iptables::parse::{parse, restore::tokenize, ParseOpts};
use iptables::Rule;
use nft::{Expr, Socket, Verdict};
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
    /// Everything (listings of all chains, -Z of all chains, restore).
    Table,
    /// Every chain, no rules (-F and -X of all chains: the kernel flushes
    /// without reading, and refuses a chain delete the model can't judge).
    Chains,
    /// Only `names`, each chain fetched by name (O(1) kernel requests,
    /// independent of the table size), and the rules of the chains in
    /// `rules_of` (one rule dump each, O(rules of that chain)). Chains that
    /// the read rules jump to are known to exist (the kernel holds the
    /// reference) and enter the model empty, unread.
    Part {
        names: Vec<String>,
        rules_of: Vec<String>,
    },
}

impl Scope {
    /// Only these chains, by name, without their rules.
    pub fn names(names: Vec<String>) -> Scope {
        Scope::Part {
            names,
            rules_of: Vec::new(),
        }
    }

    /// Widen `self` by what `other` needs.
    pub fn merge(&mut self, other: Scope) {
        let with_rules =
            |s: &Scope| matches!(s, Scope::Part { rules_of, .. } if !rules_of.is_empty());
        let merged = match (std::mem::replace(self, Scope::Table), other) {
            (Scope::Table, _) | (_, Scope::Table) => Scope::Table,
            // All chains without rules plus some chains' rules: only the
            // whole table covers both.
            (Scope::Chains, p) | (p, Scope::Chains) => {
                if with_rules(&p) {
                    Scope::Table
                } else {
                    Scope::Chains
                }
            }
            (
                Scope::Part {
                    mut names,
                    mut rules_of,
                },
                Scope::Part {
                    names: n2,
                    rules_of: r2,
                },
            ) => {
                for n in n2 {
                    if !names.contains(&n) {
                        names.push(n);
                    }
                }
                for n in r2 {
                    if !rules_of.contains(&n) {
                        rules_of.push(n);
                    }
                }
                Scope::Part { names, rules_of }
            }
        };
        *self = merged;
    }
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
    if sock.get(&nft::Table::new(fam, &tname))?.is_none() {
        return Ok(snap);
    }
    snap.exists = true;
    // Filter by table here too: a dump request's table filter is advisory.
    let chains = match scope {
        Scope::Part { names, rules_of } => {
            let mut v = Vec::new();
            for n in names
                .iter()
                .chain(rules_of.iter().filter(|r| !names.contains(r)))
            {
                if let Some(c) = sock.get(&nft::Chain::new(fam, &tname, n))? {
                    v.push(c);
                }
            }
            v
        }
        Scope::Table | Scope::Chains => sock.chains(fam, Some(&tname))?,
    };
    for c in chains.iter().filter(|c| c.table == tname) {
        add_chain(&mut snap, kind, c);
    }
    let only: Option<&[String]> = match scope {
        Scope::Part { rules_of, .. } => Some(rules_of),
        Scope::Chains => Some(&[]),
        Scope::Table => None,
    };
    if only.is_some() {
        use std::hash::{BuildHasher, Hasher};
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        snap.table.set_next_id((random >> 2) | (1 << 61));
    }
    if only.is_some_and(|o| o.is_empty()) {
        return Ok(snap);
    }
    let mut texts = read_catalog(sock, fam, &tname)?;
    let mut rules: Vec<KernelRule> = Vec::new();
    match only {
        Some(list) => {
            for c in list {
                if snap.table.chain(c).is_some() {
                    dump_rules(sock, fam, &tname, Some(c), &mut rules)?;
                }
            }
        }
        None => match per_chain_dumps(chains.iter().filter(|c| c.table == tname)) {
            Some(list) => {
                for c in list {
                    dump_rules(sock, fam, &tname, Some(c), &mut rules)?;
                }
            }
            None => dump_rules(sock, fam, &tname, None, &mut rules)?,
        },
    }
    // Exact room for what the dump returned: growing by doubling would
    // leave up to half of the rule slab unused for the model's lifetime.
    snap.table.reserve(rules.len());
    snap.handles.reserve(rules.len());
    for kr in rules {
        let KernelRule {
            chain,
            handle,
            userdata,
            counters,
            target,
        } = kr;
        let Some((id, mut rule, chunks)) =
            rebuild(family, kind, &chain, userdata.as_deref(), &mut texts)
        else {
            snap.foreign.push(format!(
                "rule handle {handle} in chain {chain} (no nfkeeper userdata)"
            ));
            continue;
        };
        // The kernel's verdict names the target chain as it is now (a
        // rename moves the jump, not our text), so it wins over the text.
        if let Some(t) = target {
            use ruleset::RuleBody;
            if rule.jump_target().is_some_and(|old| old != t) {
                rule.retarget(&t);
            }
            // With a partial read the target may not have been fetched; it
            // exists (the kernel holds the reference), so it enters empty.
            if only.is_some() && snap.table.chain(&t).is_none() {
                let _ = snap.table.new_chain(&t);
            }
        }
        match snap.table.append_with_id(&chain, id, rule, counters) {
            Ok(id) => {
                snap.handles.insert(id, handle);
                if chunks > 0 {
                    snap.overflow.insert(id, chunks);
                }
            }
            Err(e) => snap
                .foreign
                .push(format!("rule handle {handle} in chain {chain} ({e})")),
        }
    }
    Ok(snap)
}

/// How to dump all rules of a table: `Some(chains)`, one dump per chain
/// that has any, or `None`, one table-wide dump. The kernel resumes a dump
/// by skipping from the first rule of what is dumped for every 32 KiB reply
/// (~100 of our rules), so a dump of R rules costs ~R²/200 skip steps,
/// while each extra request costs about what ~250 steps do (a round trip of
/// ~10 µs against ~40 ns per step). The kernel's use count per chain (its
/// rules plus references to it) bounds each chain's rules; chains with a
/// use count of 0 have none. Choose the cheaper estimate: many small chains
/// favour one dump, a few long ones one dump each (1M rules in 1000 chains:
/// seconds instead of many minutes).
pub(crate) fn per_chain_dumps<'a>(
    chains: impl Iterator<Item = &'a nft::Chain>,
) -> Option<Vec<&'a str>> {
    let mut used: Vec<(&str, u64)> = Vec::new();
    for c in chains {
        match c.use_count {
            Some(0) => {}
            n => used.push((c.name.as_str(), u64::from(n.unwrap_or(u32::MAX / 2)))),
        }
    }
    let total: u64 = used.iter().map(|u| u.1).sum();
    let one = 250 + total.saturating_mul(total) / 200;
    let each = used.iter().fold(0u64, |acc, u| {
        acc.saturating_add(250)
            .saturating_add(u.1.saturating_mul(u.1) / 200)
    });
    (each <= one).then(|| used.into_iter().map(|u| u.0).collect())
}

/// One kernel rule as far as reading it back needs.
struct KernelRule {
    chain: String,
    handle: u64,
    userdata: Option<Vec<u8>>,
    counters: Counters,
    /// The chain of its jump/goto verdict, if any.
    target: Option<String>,
}

/// Rules of chain `chain` of our table `tname`, appended to `out`.
fn dump_rules(
    sock: &mut Socket,
    fam: nft::Family,
    tname: &str,
    chain: Option<&str>,
    out: &mut Vec<KernelRule>,
) -> Result<(), nft::Error> {
    sock.rules(fam, Some(tname), chain, |r| {
        if r.table != tname || chain.is_some_and(|c| c != r.chain) {
            return Ok(());
        }
        let (counters, target) = counters_and_target(&r);
        out.push(KernelRule {
            chain: r.chain.to_string(),
            handle: r.handle.unwrap_or(0),
            userdata: r.userdata.map(<[u8]>::to_vec),
            counters,
            target,
        });
        Ok(())
    })
}

/// A kernel rule's counters (its counter expression) and the chain its
/// jump/goto verdict names, if any.
pub(crate) fn counters_and_target(r: &nft::RuleRef<'_>) -> (Counters, Option<String>) {
    let mut counters = Counters::default();
    let mut target = None;
    for e in r.exprs() {
        match e {
            Ok(Expr::Counter { bytes, packets }) => counters = Counters { packets, bytes },
            Ok(Expr::Immediate {
                data: nft::Data::Verdict(Verdict::Jump(c) | Verdict::Goto(c)),
                ..
            }) => target = Some(c),
            _ => {}
        }
    }
    (counters, target)
}

/// A chain from the kernel into the snapshot's model.
fn add_chain(snap: &mut Snapshot, kind: TableKind, c: &nft::Chain) {
    if let Some(h) = c.handle {
        snap.chain_handles.insert(c.name.clone(), h);
    }
    if c.hook.is_some() {
        if layout::base_chain(kind, &c.name).is_none() {
            snap.foreign.push(format!(
                "base chain {} (not an iptables chain of this table)",
                c.name
            ));
            return;
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

/// Overflow texts of the table's rules: its catalog set's elements, by
/// rule id (chunk number, text). Empty without a catalog.
pub(crate) type Texts = HashMap<RuleId, Vec<(u32, String)>>;

pub(crate) fn read_catalog(
    sock: &mut Socket,
    fam: nft::Family,
    tname: &str,
) -> Result<Texts, nft::Error> {
    let mut texts: Texts = HashMap::new();
    if sock
        .get(&nft::Set::new(fam, tname, catalog::SET))?
        .is_some()
    {
        for e in sock.set_elems(fam, tname, catalog::SET)? {
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
    Ok(texts)
}

/// A kernel rule's id and canonical text (the part after `-A CHAIN`) from
/// its userdata and, for a long rule, its catalog chunks (taken out of
/// `texts`); also the number of chunks used. `None`: not ours.
pub(crate) fn rule_text(ud: Option<&[u8]>, texts: &mut Texts) -> Option<(RuleId, String, u32)> {
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
    Some((id, text, chunks))
}

/// The logical rule of a kernel rule from its userdata (and, for a long
/// rule, its catalog chunks); also the number of chunks used.
fn rebuild(
    family: Family,
    kind: TableKind,
    chain: &str,
    ud: Option<&[u8]>,
    texts: &mut Texts,
) -> Option<(RuleId, Rule, u32)> {
    let (id, text, chunks) = rule_text(ud, texts)?;
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

#[cfg(test)]
mod tests {
    use super::per_chain_dumps;

    fn chains(uses: &[(usize, u32)]) -> Vec<nft::Chain> {
        let mut v = Vec::new();
        for &(count, used) in uses {
            for _ in 0..count {
                let mut c = nft::Chain::new(nft::Family::Ipv4, "t", &format!("c{}", v.len()));
                c.use_count = Some(used);
                v.push(c);
            }
        }
        v
    }

    #[test]
    fn long_chains_are_dumped_one_by_one_many_short_ones_at_once() {
        // (count, use count) groups of chains -> chains dumped one by one.
        type Shape = &'static [(usize, u32)];
        let cases: &[(Shape, Option<usize>)] = &[
            // 1000 chains of 1000 rules: per chain (one dump would be O(R²)).
            (&[(1000, 1000)], Some(1000)),
            // One 50k-rule chain among 100k empty ones: just that chain.
            (&[(1, 50_000), (100_000, 0)], Some(1)),
            // 10k chains of one rule: one dump (10k requests cost more).
            (&[(10_000, 1)], None),
            // Nothing used: no dump at all.
            (&[(5, 0)], Some(0)),
        ];
        for (shape, want) in cases {
            let cs = chains(shape);
            let got = per_chain_dumps(cs.iter()).map(|v| v.len());
            assert_eq!(got, *want, "{shape:?}");
        }
    }
}

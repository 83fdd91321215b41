//! The kernel's ruleset validation as far as jumps go
//! (`nft_table_validate`, `nft_chain_validate`): from every base chain,
//! each jump or goto — of a rule, or of an element of a verdict map a rule
//! looks up — goes one level deeper, and a chain reached at level
//! `NFT_JUMP_STACK_SIZE` (16) fails the whole table with `EMLINK`. So a
//! jump cycle reachable from a base chain is `EMLINK` too (kernel 6.18
//! reports no `ELOOP` for either: checked against the kernel), while
//! cycles no base chain reaches are accepted.
//!
//! The expressions of every chain a base chain reaches must also suit its
//! hook and type (nat statements in nat chains of the right hooks, ...:
//! [`crate::exprs::constraint`]), else `EOPNOTSUPP`.
//!
//! Cost: O(chains + jumps) per table (each chain's height is computed
//! once); recursion at most 17 deep.

use std::collections::{HashMap, HashSet};

use nft::expr::{reg, Expr};

use nft::Family;

use crate::errno::{EMLINK, EOPNOTSUPP};
use crate::exprs::constraint;
use crate::model::{jump_target, verdict_chain, Table};

/// `NFT_JUMP_STACK_SIZE`.
pub const JUMP_STACK: u32 = 16;

/// Validates `t`: `Err(EMLINK)` when some base chain reaches a chain at
/// level 16.
pub fn table(t: &Table) -> Result<(), i32> {
    let edges = edges(t);
    let mut memo = HashMap::new();
    let mut visiting = HashSet::new();
    for c in t.chains.iter().filter(|c| c.base.is_some()) {
        height(&c.name, 0, &edges, &mut memo, &mut visiting).map_err(|()| EMLINK)?;
    }
    if matches!(t.family, Family::Ipv4 | Family::Ipv6 | Family::Inet) {
        for c in t.chains.iter() {
            if let Some(b) = &c.base {
                hooks(t, &c.name, 1 << b.hooknum, b.ty == "nat", &edges)?;
            }
        }
    }
    Ok(())
}

/// Checks the expressions of every chain `root` reaches against its hook
/// bit and type. O(reached chains' rules).
fn hooks(
    t: &Table,
    root: &str,
    hook: u32,
    nat: bool,
    edges: &HashMap<&str, Vec<&str>>,
) -> Result<(), i32> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut todo = vec![root];
    while let Some(name) = todo.pop() {
        if !seen.insert(name) {
            continue;
        }
        let Some(ci) = t.chain(name) else { continue };
        for e in t.chains[ci]
            .rules
            .iter()
            .filter(|s| !s.gone)
            .flat_map(|s| &s.rule.exprs)
        {
            if let Some((mask, needs_nat)) = constraint(e) {
                if mask & hook == 0 || (needs_nat && !nat) {
                    return Err(EOPNOTSUPP);
                }
            }
        }
        todo.extend(edges.get(name).into_iter().flatten());
    }
    Ok(())
}

/// Chain name → the chains its rules jump or go to (directly, or through
/// the elements of verdict maps they look up).
fn edges(t: &Table) -> HashMap<&str, Vec<&str>> {
    let mut out: HashMap<&str, Vec<&str>> = HashMap::new();
    for c in &t.chains {
        let v = out.entry(c.name.as_str()).or_default();
        for e in c
            .rules
            .iter()
            .filter(|s| !s.gone)
            .flat_map(|s| &s.rule.exprs)
        {
            if let Some(target) = jump_target(e) {
                v.push(target);
            }
            if let Expr::Lookup {
                set, dreg: Some(d), ..
            } = e
            {
                if *d != reg::VERDICT {
                    continue;
                }
                if let Some(si) = t.set(set) {
                    for el in t.sets[si].elems.values() {
                        if let Some(target) = verdict_chain(&el.data) {
                            v.push(target);
                        }
                    }
                }
            }
        }
    }
    out
}

/// The longest jump path below `name` (in jumps), reached at `level`;
/// `Err` when the path reaches level 16 (or never ends).
fn height<'a>(
    name: &'a str,
    level: u32,
    edges: &HashMap<&'a str, Vec<&'a str>>,
    memo: &mut HashMap<&'a str, u32>,
    visiting: &mut HashSet<&'a str>,
) -> Result<u32, ()> {
    if level >= JUMP_STACK {
        return Err(());
    }
    if let Some(h) = memo.get(name) {
        return if level + h >= JUMP_STACK {
            Err(())
        } else {
            Ok(*h)
        };
    }
    if !visiting.insert(name) {
        return Err(());
    }
    let mut h = 0;
    for target in edges.get(name).map(Vec::as_slice).unwrap_or_default() {
        h = h.max(1 + height(target, level + 1, edges, memo, visiting)?);
    }
    visiting.remove(name);
    memo.insert(name, h);
    Ok(h)
}

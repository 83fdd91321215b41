//! The replay table of `-j CT --helper` rules ([`compile::replay`]) in a
//! batch: rebuilt whole whenever a transaction changes a raw table that
//! has or had helper rules. Raw tables are small and the replay holds only
//! chains that reach a helper, so a rebuild is a handful of messages; it
//! keeps the replay a pure function of the raw table (nothing to diff,
//! nothing to read back but for `verify`).

use super::Pending;
use compile::layout::nft_family;
use compile::rebase_lookups;
use compile::replay;
use iptables::Rule;
use nft::Chain;
use ruleset::{Family, RuleId, Table};

/// Check raw table `t` before a transaction keeps it: the refusal names
/// the rule that cannot be replayed (see [`compile::replay::build`]).
pub fn check(t: &Table<Rule>, family: Family) -> Result<(), (RuleId, iptables::Error)> {
    replay::build(t, family)
        .map(|_| ())
        .map_err(|(id, e)| (id, super::emit::lower_error(e)))
}

/// Rewrite the replay table of `family` in `p` for raw table `t`. `had`:
/// the raw table had helper rules before this transaction (so the replay
/// table may exist). Nothing is sent when it neither had nor has any.
///
/// Contract: `t` is the whole raw table (callers read it whole) and was
/// checked with [`check`] (an error here means it changed since; then the
/// replay is only removed, and the caller's check refuses the write).
pub(crate) fn emit(p: &mut Pending, family: Family, t: &Table<Rule>, had: bool) {
    let now = replay::build(t, family).ok().flatten();
    if !had && now.is_none() {
        return;
    }
    let fam = nft_family(family);
    let tag = p.tag;
    let table = nft::Table::new(fam, replay::TABLE);
    // Adding first makes the delete valid whether or not it existed (a
    // user may have removed it).
    p.batch.add(&table, tag);
    p.batch.delete(&table, tag);
    let Some(r) = now else { return };
    p.batch.add(&table, tag);
    for o in &r.objects {
        p.batch.add(&o.to_nft(fam, replay::TABLE), tag);
    }
    for c in &r.chains {
        let chain = match c.hook {
            Some(hook) => Chain::base(
                fam,
                replay::TABLE,
                &c.name,
                "filter",
                hook,
                replay::PRIORITY,
                nft::chain::POLICY_ACCEPT,
            ),
            None => Chain::new(fam, replay::TABLE, &c.name),
        };
        p.batch.add(&chain, tag);
    }
    for c in &r.chains {
        for l in &c.rules {
            let mut exprs = l.exprs.clone();
            let first = p.next_set_id;
            rebase_lookups(&mut exprs, first);
            for (i, s) in l.sets.iter().enumerate() {
                let (set, elems) = s.to_nft(fam, replay::TABLE, first + i as u32);
                p.batch.add(&set, tag);
                p.batch.add(&elems, tag);
            }
            p.next_set_id += l.sets.len() as u32;
            let mut rule = nft::Rule::new(fam, replay::TABLE, &c.name, exprs);
            rule.compat = l.compat;
            p.batch
                .add_rule(&rule, nft::batch::Placement::Append, false, tag);
        }
    }
}

//! `verify` of the replay table of raw's `-j CT --helper` rules
//! ([`compile::replay`]): the table holds exactly what the raw table's
//! rules replay to — the same chains on the same hooks, the same rules,
//! the same ct helper objects — and does not exist when nothing is
//! replayed. Cost: one table, chain, object and rule dump of the family.

use super::{normalized, Report};
use compile::layout::nft_family;
use compile::replay::{self, Replay};
use iptables::Rule;
use nft::{Expr, Socket};
use ruleset::{Family, Table};
use std::collections::BTreeMap;

/// Add to `rep` how the kernel's replay table of `family` differs from
/// what raw table `t` (read from the kernel) replays to.
pub(super) fn check(
    sock: &mut Socket,
    family: Family,
    t: &Table<Rule>,
    rep: &mut Report,
) -> Result<(), nft::Error> {
    let fam = nft_family(family);
    let name = replay::TABLE;
    let want: Option<Replay> = match replay::build(t, family) {
        Ok(r) => r,
        Err((_, e)) => {
            rep.diffs.push(format!("table {name}: {e}"));
            return Ok(());
        }
    };
    let exists = sock.tables(fam)?.iter().any(|x| x.name == name);
    let Some(want) = want else {
        if exists {
            rep.diffs.push(format!(
                "table {name}: present, but no helper rule is replayed"
            ));
        }
        return Ok(());
    };
    if !exists {
        rep.diffs.push(format!("table {name}: missing"));
        return Ok(());
    }
    let mut chains = sock.chains(fam, Some(name))?;
    chains.retain(|c| c.table == name);
    let mut got: BTreeMap<String, Vec<Vec<Expr>>> = BTreeMap::new();
    sock.rules(fam, Some(name), None, |r| {
        if r.table == name {
            let exprs: Vec<Expr> = r.exprs().filter_map(Result::ok).collect();
            got.entry(r.chain.to_string())
                .or_default()
                .push(normalized(&exprs));
        }
        Ok(())
    })?;
    for c in &want.chains {
        let Some(k) = chains.iter().find(|k| k.name == c.name) else {
            rep.diffs
                .push(format!("table {name}: chain {} missing", c.name));
            continue;
        };
        let hook = k.hook.as_ref().map(|h| (h.num, h.priority));
        if hook != c.hook.map(|h| (h, replay::PRIORITY)) {
            rep.diffs.push(format!(
                "table {name}: chain {} has hook {hook:?}, expected {:?}",
                c.name,
                c.hook.map(|h| (h, replay::PRIORITY))
            ));
        }
        let want_rules: Vec<Vec<Expr>> = c.rules.iter().map(|l| normalized(&l.exprs)).collect();
        let got_rules = got.remove(&c.name).unwrap_or_default();
        if got_rules != want_rules {
            rep.diffs.push(format!(
                "table {name}: chain {}: {} rules differ from the replay of the raw table ({} expected)",
                c.name,
                got_rules.len(),
                want_rules.len()
            ));
        }
    }
    for k in chains
        .iter()
        .filter(|k| !want.chains.iter().any(|c| c.name == k.name))
    {
        rep.diffs
            .push(format!("table {name}: chain {}: not replayed", k.name));
    }
    let mut objs = sock.objects(fam, Some(name))?;
    objs.retain(|o| o.table == name);
    for o in &want.objects {
        if !objs.iter().any(|k| k.name == o.name && k.data == o.data) {
            rep.diffs.push(format!(
                "table {name}: ct helper {} missing or different",
                o.name
            ));
        }
    }
    for k in objs
        .iter()
        .filter(|k| !want.objects.iter().any(|o| o.name == k.name))
    {
        rep.diffs.push(format!(
            "table {name}: object {}: used by no replayed rule",
            k.name
        ));
    }
    Ok(())
}

//! Counters read into a model that does not follow them (the daemon's).

use super::*;

/// Bring the model's counters of `chains` (table `kind` of `family`) to
/// what the kernel counts now, for a caller whose model does not follow
/// the kernel's counters (the daemon): one rule dump per chain, and one
/// element dump per compiled run in it; rules are matched by the id in
/// their userdata, nothing is parsed. Marks the chains'
/// counters as read for the next plan ([`crate::plan::KernelView`]), so
/// that a `--noflush` rewrite resets only the kept rules whose counters
/// are not what the input says (as direct mode does), not every one.
pub fn refresh_counters(
    sock: &mut Socket,
    st: &mut crate::state::State,
    family: Family,
    kind: TableKind,
    chains: &[String],
) -> Result<(), nft::Error> {
    let (fam, tname) = (layout::nft_family(family), layout::table_name(kind));
    for c in chains {
        if st.model.table(family, kind).chain(c).is_none() {
            continue;
        }
        let mut rules = Vec::new();
        dump_rules(sock, fam, &tname, Some(c), &mut rules)?;
        let mut counts: Vec<(RuleId, Counters)> = Vec::with_capacity(rules.len());
        // A run of multiport members was read (its elements to be summed).
        let mut multi = false;
        for kr in rules {
            let Some(d) = kr
                .userdata
                .as_deref()
                .and_then(|u| userdata::decode(u).ok())
            else {
                continue;
            };
            match (d.run, d.id) {
                (Some((kb, set)), _) => {
                    multi |= userdata::run_key(kb)
                        .is_some_and(|(k, _)| k == compile::runs::KeyKind::Dports);
                    for e in sock.set_elems(fam, &tname, &set)? {
                        let id = e
                            .userdata
                            .as_deref()
                            .and_then(|u| userdata::decode(u).ok())
                            .and_then(|d| d.id);
                        let counter = e.exprs.iter().find_map(|x| match x {
                            Expr::Counter { bytes, packets } => Some(Counters {
                                packets: *packets,
                                bytes: *bytes,
                            }),
                            _ => None,
                        });
                        if let (Some(id), Some(k)) = (id, counter) {
                            counts.push((id, k));
                        }
                    }
                }
                (None, Some(id)) => counts.push((id, kr.counters)),
                (None, None) => {}
            }
        }
        // A multiport member is an element per port: its counter is their
        // sum (ids are unique otherwise; the sort is stable).
        if multi {
            counts.sort_by_key(|(id, _)| *id);
        }
        super::fold_members(&mut counts, |c| (c.0, &mut c.1));
        // Every rule read is one of chain `c`'s (dumped by chain), so its
        // position there is all the model needs: O(log n), no allocation.
        let t = st.model.table_mut(family, kind);
        for (id, k) in counts {
            let Some((cid, pos, _)) = t.rule_by_id(id) else {
                continue;
            };
            if t.chain_by_id(cid).is_some_and(|v| v.name == c.as_str()) {
                let _ = t.set_rule_counters(c, pos, k);
            }
        }
        st.view_mut(family).counters_read(kind, c);
    }
    Ok(())
}

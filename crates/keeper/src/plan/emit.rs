//! Kernel messages for tables, rules and their userdata: the building
//! blocks every command's plan is made of.

use super::{Created, Loc, Planner};
use compile::layout;
use compile::userdata::{self, catalog};
use compile::{lower_rule, lower_rule_with, rebase_lookups, LowerError};
use iptables::ext::Match;
use iptables::print::save::{save_rule_body, CounterStyle};
use iptables::{Error, Rule};
use nft::batch::Placement;
use nft::Chain;
use ruleset::{Counters, Policy, RuleId, Table, TableKind};
use std::collections::HashSet;

fn unsupported(e: impl std::fmt::Display) -> Error {
    Error::param(e.to_string())
}

/// A lowering refusal in iptables' words (a missing set as iptables-nft
/// says it).
pub(crate) fn lower_error(e: LowerError) -> Error {
    match e {
        LowerError::NoSet(name) => Error::param(format!("Set {name} doesn't exist.\n")),
        e => unsupported(e),
    }
}

/// The nftables policy of an iptables policy.
pub(crate) fn nft_policy(p: Policy) -> u32 {
    match p {
        Policy::Accept => nft::chain::POLICY_ACCEPT,
        Policy::Drop => nft::chain::POLICY_DROP,
    }
}

impl Planner<'_> {
    /// Create our table and its base chains (policy ACCEPT) if it isn't there.
    pub(crate) fn ensure_table(&mut self, kind: TableKind) {
        if self.view.present.insert(kind) {
            self.add_table(kind, None);
        }
    }

    /// NEWTABLE, the base chains and the catalog set of table `kind` (the
    /// chain registry comes with its first chain: see `super::registry`).
    /// With `model`, the base chains take its policies and policy counters
    /// (a table written whole); else ACCEPT.
    ///
    /// Exclusive creations: the view read at the batch's generation says
    /// the table is absent (or this batch deleted it), and the batch fails
    /// whole if the kernel moved on. A create that may update an existing
    /// object would leave the kernel a deferred destruction, and the
    /// command's exit a closer to start (`nft::linger`).
    pub(crate) fn add_table(&mut self, kind: TableKind, model: Option<&Table<Rule>>) {
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        let tag = self.p.tag;
        self.p.batch.create(&nft::Table::new(fam, &tname), tag);
        for bc in layout::base_chains(kind) {
            let (policy, counters) = model
                .and_then(|t| t.chain(bc.name))
                .and_then(|c| c.policy.map(|p| (p, c.counters)))
                .unwrap_or((Policy::Accept, Counters::default()));
            let mut c = Chain::base(
                fam,
                &tname,
                bc.name,
                bc.chain_type,
                bc.hook,
                bc.priority,
                nft_policy(policy),
            );
            // Always given: a base chain created with counters is one whose
            // policy the kernel counts (nft_base_chain stats), which
            // iptables shows as `:INPUT ACCEPT [p:b]`.
            c.counters = Some((counters.bytes, counters.packets));
            self.p.batch.create(&c, tag);
        }
        let mut set = nft::Set::new(fam, &tname, catalog::SET);
        set.key_type = Some(catalog::KEY_TYPE);
        set.key_len = Some(catalog::KEY_LEN);
        set.id = Some(self.p.alloc_set_id());
        self.p.batch.add(&set, tag);
    }

    /// Catalog elements of rule `id` (chunk numbers `0..n`).
    fn catalog_elems(&self, kind: TableKind, id: RuleId, n: u32) -> nft::SetElems {
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        let elems = (0..n)
            .map(|i| nft::SetElem::key(&catalog::key(id, i)))
            .collect();
        nft::SetElems::new(fam, &tname, catalog::SET, elems)
    }

    /// Forget a rule's overflow text (its catalog elements).
    pub(crate) fn drop_overflow(&mut self, kind: TableKind, id: RuleId) {
        if let Some(n) = self.view.overflow.remove(&(kind, id)) {
            self.p.side_effects.insert((self.family, kind));
            let es = self.catalog_elems(kind, id, n);
            let tag = self.p.tag;
            self.p.batch.delete(&es, tag);
        }
    }

    /// A rule the batch deletes: its location goes once the batch commits.
    pub(crate) fn forget_rule(&mut self, kind: TableKind, id: RuleId) {
        self.drop_overflow(kind, id);
        if self.opts.echo {
            self.p.forgotten.push((self.family, kind, id));
        }
    }

    /// NEWRULE for the model rule `id` (body `rule`) in `chain`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new_rule(
        &mut self,
        kind: TableKind,
        chain: &str,
        id: RuleId,
        rule: &Rule,
        counters: Counters,
        placement: Placement,
        at: Option<Loc>,
    ) -> Result<(), Error> {
        let (fam, tname) = (self.fam(), layout::table_name(kind));
        let lowered = match self.ipsets.as_deref() {
            Some(sets) => lower_rule_with(rule, self.family, kind, chain, sets),
            None => lower_rule(rule, self.family, kind, chain),
        }
        .map_err(lower_error)?;
        for name in &lowered.ipsets {
            self.ensure_ipset_copy(kind, name)?;
        }
        let mut exprs = lowered.exprs;
        // The rule's counters (-c, restore --counters) start its counter.
        for e in exprs.iter_mut() {
            if let nft::Expr::Counter { bytes, packets } = e {
                *bytes = counters.bytes;
                *packets = counters.packets;
            }
        }
        let tag = self.p.tag;
        let first_anon = self.p.next_set_id;
        rebase_lookups(&mut exprs, first_anon);
        for (i, set) in lowered.sets.iter().enumerate() {
            let (s, es) = set.to_nft(fam, &tname, first_anon + i as u32);
            self.p.batch.add(&s, tag);
            self.p.batch.add(&es, tag);
        }
        self.p.next_set_id += lowered.sets.len() as u32;
        let ud = self.rule_userdata(kind, id, rule);
        let mut r = self.rule_msg(kind, chain, exprs);
        r.userdata = Some(ud);
        r.compat = lowered.compat;
        let bid = self.p.alloc_rule_id();
        r.id = Some(bid);
        match (placement, at) {
            (Placement::Replace, Some(Loc::Handle(h))) => r.handle = Some(h),
            (Placement::Replace, _) => {
                return Err(Error::other(
                    "replacing a rule created earlier in the same batch is not supported yet",
                ))
            }
            (_, Some(Loc::Handle(h))) => r.position = Some(h),
            (_, Some(Loc::New(b))) => r.position_id = Some(b),
            (_, None) => {}
        }
        let seq = self.p.batch.add_rule(&r, placement, self.opts.echo, tag);
        if self.opts.echo {
            self.p
                .created
                .push((seq, self.family, Created::Rule(kind, id)));
        }
        self.view.locs.insert((kind, id), Loc::New(bid));
        Ok(())
    }

    /// The userdata that lets logical rule `id` be rebuilt from the kernel
    /// (id and canonical text; text beyond the kernel's limit goes to the
    /// catalog set in the same batch). Used for kernel rules and for run
    /// elements alike.
    pub(crate) fn rule_userdata(&mut self, kind: TableKind, id: RuleId, rule: &Rule) -> Vec<u8> {
        let (text, comment) = rule_text(self.family, rule);
        let ud = userdata::encode(id, &text, comment);
        if !ud.overflow.is_empty() {
            let parts = catalog::chunks(&ud.overflow);
            let mut es = self.catalog_elems(kind, id, parts.len() as u32);
            for (e, p) in es.elems.iter_mut().zip(&parts) {
                e.userdata = Some(catalog::value(p));
            }
            let tag = self.p.tag;
            self.p.batch.add(&es, tag);
            self.view.overflow.insert((kind, id), parts.len() as u32);
            // Undoing the command in the model does not undo this.
            self.p.side_effects.insert((self.family, kind));
        }
        ud.bytes
    }

    /// DELRULE of logical rule `id` in `chain`, wherever it is.
    pub(crate) fn del_rule(&mut self, kind: TableKind, chain: &str, id: Option<RuleId>) {
        let loc = id.and_then(|i| self.view.loc(kind, i));
        if let Some(i) = id {
            self.forget_rule(kind, i);
        }
        let mut r = self.rule_key(kind, chain);
        match loc {
            Some(Loc::Handle(h)) => r.handle = Some(h),
            Some(Loc::New(b)) => r.id = Some(b),
            None => return,
        }
        let tag = self.p.tag;
        self.p.batch.delete(&r, tag);
    }

    /// Deletes every rule of `chain`, or of every chain of the table when
    /// `chain` is empty (the kernel's rule delete without a chain).
    pub(crate) fn flush_chain(&mut self, kind: TableKind, chain: &str) {
        let tag = self.p.tag;
        self.p.bulk = true;
        let r = self.rule_key(kind, chain);
        self.p.batch.delete(&r, tag);
    }

    /// Zero counters in the kernel: rules are replaced by themselves with a
    /// fresh counter (nftables has no per-rule counter reset that keeps the
    /// handle otherwise); base-chain policy counters are set to zero.
    pub(crate) fn zero(
        &mut self,
        kind: TableKind,
        t: &Table<Rule>,
        chains: &[String],
        num: Option<usize>,
    ) -> Result<(), Error> {
        // A whole chain's runs are zeroed by one reset dump of each set
        // after the commit (kernel 6.5+), not by replacing every element in
        // the batch: 100k members cost 0.85 s that way. The runs of the
        // zeroed chains, found in one pass over the view's runs.
        let mut reset: HashSet<u32> = HashSet::new();
        if num.is_none() && kernel_resets_set_elems() {
            let zeroed: HashSet<&str> = chains.iter().map(String::as_str).collect();
            for (i, r) in self.view.runs.iter().enumerate() {
                if let Some(r) = r
                    .as_ref()
                    .filter(|r| r.kind == kind && zeroed.contains(r.chain.as_str()))
                {
                    reset.insert(i as u32);
                    self.p.resets.push((self.family, kind, r.set.clone()));
                }
            }
        }
        for c in chains {
            let ids = ids(t, c);
            let picked: Vec<RuleId> = match num {
                Some(n) => ids.get(n.wrapping_sub(1)).copied().into_iter().collect(),
                None => ids,
            };
            for id in picked {
                let run = self.view.run_of(kind, id);
                if run.is_some_and(|ri| reset.contains(&ri)) {
                    continue;
                }
                let Some(body) = t.rule_by_id(id).map(|(_, _, r)| r.body.clone()) else {
                    continue;
                };
                if run.is_some() {
                    self.zero_member(kind, id, &body, Counters::default());
                    continue;
                }
                let Some(at @ Loc::Handle(_)) = self.view.loc(kind, id) else {
                    continue;
                };
                self.new_rule(
                    kind,
                    c,
                    id,
                    &body,
                    Counters::default(),
                    Placement::Replace,
                    Some(at),
                )?;
            }
            if num.is_none() && t.is_builtin(c) {
                let mut ch = self.chain_key(kind, c);
                ch.counters = Some((0, 0));
                let tag = self.p.tag;
                self.p.batch.add(&ch, tag);
            }
        }
        Ok(())
    }
}

/// Whether the kernel can zero a set's element counters with a reset dump
/// (`NFT_MSG_GETSETELEM_RESET`, Linux 6.5+), by the release `uname`
/// reports; asked once per process.
pub fn kernel_resets_set_elems() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        let u = rustix::system::uname();
        let release = u.release().to_string_lossy();
        let mut v = release
            .split(|c: char| !c.is_ascii_digit())
            .map(|n| n.parse::<u32>().unwrap_or(0));
        (v.next().unwrap_or(0), v.next().unwrap_or(0)) >= (6, 5)
    })
}

/// A rule's canonical text (what follows `-A CHAIN`) and its comment.
pub(crate) fn rule_text(family: ruleset::Family, rule: &Rule) -> (String, Option<&str>) {
    let mut text = String::new();
    save_rule_body(
        &mut text,
        family,
        rule,
        Counters::default(),
        CounterStyle::None,
    );
    let comment = rule.matches.iter().find_map(|m| match m {
        Match::Comment(c) => Some(c.text.as_str()),
        _ => None,
    });
    (text, comment)
}

/// Rules of `chain` with ids, in order.
pub(crate) fn ids(t: &Table<Rule>, chain: &str) -> Vec<RuleId> {
    t.rules(chain)
        .map(|it| it.map(|r| r.id).collect())
        .unwrap_or_default()
}

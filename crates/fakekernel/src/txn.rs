//! What a batch under way has done so far: its transactions, in order (the
//! kernel's commit list, which the commit walks to apply what is deferred
//! and to notify), and the batch-local ids that later messages of the same
//! batch may name objects by.

use std::collections::HashMap;
use std::sync::Arc;

use nft::netlink::NLM_F_ECHO;
use nft::Family;

use crate::model::{Chain, Elem, Rule, Set};

/// The request a transaction came from.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    pub seq: u32,
    /// `nlmsg_flags` of the request.
    pub flags: u16,
    pub family: Family,
    pub portid: u32,
}

impl Ctx {
    /// The request asked for its notifications to be echoed
    /// (`nlmsg_report`).
    pub fn report(&self) -> bool {
        self.flags & NLM_F_ECHO != 0
    }
}

/// One transaction. Objects are named by handle (tables by their global
/// handle); deletions carry what the notification needs, as the object is
/// gone from the working ruleset by the time the commit walks the list.
pub enum Trans {
    NewTable {
        ctx: Ctx,
        table: u64,
    },
    UpdTable {
        ctx: Ctx,
        table: u64,
    },
    DelTable {
        ctx: Ctx,
        snap: TableSnap,
    },
    NewChain {
        ctx: Ctx,
        table: u64,
        chain: u64,
    },
    /// A `NEWCHAIN` on an existing chain; a rename takes effect at commit.
    UpdChain {
        ctx: Ctx,
        table: u64,
        chain: u64,
        rename: Option<String>,
    },
    DelChain {
        ctx: Ctx,
        tname: String,
        snap: Chain,
    },
    NewRule {
        ctx: Ctx,
        table: u64,
        chain: u64,
        /// Its handle (a replacement shares it with the rule it replaces).
        rule: u64,
        /// The rule itself, to tell it from others of its handle.
        obj: Arc<Rule>,
        /// `NFTA_RULE_ID`.
        id: Option<u32>,
    },
    DelRule {
        ctx: Ctx,
        table: u64,
        tname: String,
        cname: String,
        rule: Arc<Rule>,
        /// Anonymous sets this rule was bound to: they go with it.
        anon: Vec<Arc<Set>>,
    },
    NewSet {
        ctx: Ctx,
        table: u64,
        set: u64,
        /// `NFTA_SET_ID`.
        id: u32,
    },
    DelSet {
        ctx: Ctx,
        tname: String,
        snap: Arc<Set>,
    },
    NewElem {
        ctx: Ctx,
        table: u64,
        set: u64,
        elem: Elem,
    },
    DelElem {
        ctx: Ctx,
        tname: String,
        sname: String,
        elem: Elem,
    },
}

impl Trans {
    /// The request it came from.
    pub fn ctx(&self) -> &Ctx {
        match self {
            Trans::NewTable { ctx, .. }
            | Trans::UpdTable { ctx, .. }
            | Trans::DelTable { ctx, .. }
            | Trans::NewChain { ctx, .. }
            | Trans::UpdChain { ctx, .. }
            | Trans::DelChain { ctx, .. }
            | Trans::NewRule { ctx, .. }
            | Trans::DelRule { ctx, .. }
            | Trans::NewSet { ctx, .. }
            | Trans::DelSet { ctx, .. }
            | Trans::NewElem { ctx, .. }
            | Trans::DelElem { ctx, .. } => ctx,
        }
    }
}

/// A deleted table as its notification shows it.
pub struct TableSnap {
    pub name: String,
    pub handle: u64,
    pub flags: u32,
    pub userdata: Option<Vec<u8>>,
}

/// The batch under way.
#[derive(Default)]
pub struct Txn {
    pub list: Vec<Trans>,
    /// `NFTA_CHAIN_ID`s of chains created by this batch: (id, table, chain).
    pub chain_ids: Vec<(u32, u64, u64)>,
    /// `NFTA_RULE_ID` of rules created by this batch: (table, chain, id) →
    /// rule handle, the first rule of an id (the kernel walks its commit
    /// list from the start).
    pub rule_ids: HashMap<(u64, u64, u32), u64>,
    /// `NFTA_SET_ID` of sets created by this batch: (table, id) → handle.
    pub set_ids: HashMap<(u64, u32), u64>,
    /// Re-validate the message's table after every rule or element
    /// (the kernel's replay of a batch whose commit-time validation
    /// failed, so that the failing message gets the error).
    pub validate_each: bool,
    /// A rule or element that needs validation was added.
    pub needs_validation: bool,
}

impl Txn {
    /// The chain created by this batch with `NFTA_CHAIN_ID` `id` in table
    /// `table`.
    pub fn chain_by_id(&self, table: u64, id: u32) -> Option<u64> {
        self.chain_ids
            .iter()
            .find(|(i, t, _)| *i == id && *t == table)
            .map(|(_, _, c)| *c)
    }

    /// The rule created by this batch with `NFTA_RULE_ID` `id` in chain
    /// `chain` (the first one, as the kernel walks its commit list).
    pub fn rule_by_id(&self, table: u64, chain: u64, id: u32) -> Option<u64> {
        self.rule_ids.get(&(table, chain, id)).copied()
    }

    /// The set created by this batch with `NFTA_SET_ID` `id` in table
    /// `table`.
    pub fn set_by_id(&self, table: u64, id: u32) -> Option<u64> {
        self.set_ids.get(&(table, id)).copied()
    }

    /// Records a transaction, indexing the ids it defines.
    pub fn push(&mut self, t: Trans) {
        match &t {
            Trans::NewRule {
                table,
                chain,
                rule,
                id: Some(id),
                ..
            } => {
                self.rule_ids.entry((*table, *chain, *id)).or_insert(*rule);
            }
            Trans::NewSet { table, set, id, .. } => {
                self.set_ids.entry((*table, *id)).or_insert(*set);
            }
            _ => {}
        }
        self.list.push(t);
    }

    /// A rename of a chain of `table` to `name` is already pending.
    pub fn renaming_to(&self, table: u64, name: &str) -> bool {
        self.list.iter().any(|t| {
            matches!(t, Trans::UpdChain { table: tt, rename: Some(n), .. }
                if *tt == table && n == name)
        })
    }
}

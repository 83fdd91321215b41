//! `-j CT --helper`: the raw table replayed after conntrack.
//!
//! xt_CT attaches a conntrack *template* carrying the helper to a packet in
//! the raw table (priority -300); conntrack (-200) then makes the packet's
//! new conntrack from it. nftables has no template: `ct helper set` (an
//! `objref` of a `ct helper` object) only changes a packet's own, still
//! unconfirmed conntrack, which exists from -200 on
//! (crates/nfkeeper/tests/packets_ct_helper.rs checks both facts). So a
//! helper rule lowers to nothing in the raw chain (its counter and place
//! stay there, for listings, counters and rule numbers), and a second table
//! [`TABLE`] holds base chains on the raw chains' hooks at [`PRIORITY`]
//! (just after conntrack) that *replay* the raw table's decisions for new
//! connections:
//!
//! - first, `ct state` without `new` accepts: expected connections (whose
//!   first packet is `related`; conntrack ignores a template's helper for
//!   them), established ones and untracked packets never take a template's
//!   helper;
//! - a `-j CT --helper H` rule becomes its matches, `ct helper set` of the
//!   object for (H, the rule's protocol) and `accept`, which ends only the
//!   replay: the first CT target a packet meets gives its template, so the
//!   replay stops there;
//! - every other CT or NOTRACK rule, and ACCEPT, DROP and REJECT, become
//!   their matches and `accept` (the packet did not reach a later helper
//!   rule, or got its template already); RETURN returns, jumps and gotos go
//!   to the replay of the user chain (same name in [`TABLE`]);
//! - LOG, NFLOG, TRACE and rules without a target change nothing a later
//!   rule reads and are left out.
//!
//! That is exact only while every replayed match gives the same answer
//! after conntrack as in the raw table, so [`build`] refuses (naming the
//! rule) when a replayed rule has a match that reads the conntrack or keeps
//! state of its own (`conntrack`, `limit`, `statistic`, `recent` …, see
//! [`replayable`]) or when a reachable rule has any other target (MARK,
//! SET …: they change what later matches read). Nothing else in nfkeeper's
//! tables runs between -300 and -199.
//!
//! Cost: O(rules of the raw table) per build; the keeper rebuilds [`TABLE`]
//! whole in the transaction of every change to a raw table that has (or
//! had) helper rules.

use crate::layout;
use crate::lower::{lower_rule, LowerError, Lowered, RuleObject};
use iptables::ext::{Match, TargetExt};
use iptables::rule::inv;
use iptables::{Rule, Target};
use nft::expr::objref::ObjData;
use nft::expr::{ct, reg, CmpOp};
use nft::{Data, Expr, Verdict};
use ruleset::{Family, RuleId, Table, TableKind};
use std::collections::HashSet;

/// The table of the replay chains and their ct helper objects (one per
/// family, `ip` / `ip6`). Never a name of an iptables table, so listings,
/// saves and the daemon's event filter leave it alone.
pub const TABLE: &str = "nfkeeper_raw_helpers";

/// Right after conntrack (-200), before mangle (-150).
pub const PRIORITY: i32 = -199;

/// `ct state` bit of a new connection's packets (`NF_CT_STATE_BIT(IP_CT_NEW)`).
const CT_STATE_NEW: u32 = 8;

/// One chain of the replay table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayChain {
    /// The raw chain it replays (same name).
    pub name: String,
    /// (hook, priority) for the replays of built-in chains.
    pub hook: Option<u32>,
    /// Its rules, in order (anonymous sets numbered per rule, see
    /// [`crate::AnonSet`]).
    pub rules: Vec<Lowered>,
}

/// What [`TABLE`] holds for one raw table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// The `ct helper` objects the rules refer to, each once.
    pub objects: Vec<RuleObject>,
    /// Built-in chains first, then user chains in the order first reached.
    pub chains: Vec<ReplayChain>,
}

/// Whether a rule of `t` has a `-j CT --helper` target (the cheap test for
/// whether [`TABLE`] may exist). O(rules).
pub fn has_helpers(t: &Table<Rule>) -> bool {
    t.chains().iter().any(|c| {
        t.rules(c.name)
            .map(|mut it| it.any(|r| helper_of(r.body).is_some()))
            .unwrap_or(false)
    })
}

fn helper_of(r: &Rule) -> Option<&str> {
    match &r.target {
        Target::Ext(t) => match t.as_ref() {
            TargetExt::Ct(c) if !c.notrack && !c.helper.is_empty() => Some(&c.helper),
            _ => None,
        },
        _ => None,
    }
}

/// Whether match `m` answers the same after conntrack as in the raw table:
/// it reads only the packet, its route/socket metadata or constant state,
/// and keeps no state of its own.
pub fn replayable(m: &Match) -> bool {
    matches!(
        m,
        Match::Tcp(_)
            | Match::Udp(_)
            | Match::Icmp(_)
            | Match::Icmp6(_)
            | Match::Sctp(_)
            | Match::Dccp(_)
            | Match::Multiport(_)
            | Match::Comment(_)
            | Match::Addrtype(_)
            | Match::Iprange(_)
            | Match::Mac(_)
            | Match::Mark(_)
            | Match::Ttl(_)
            | Match::Hl(_)
            | Match::Length(_)
            | Match::Pkttype(_)
            | Match::Owner(_)
            | Match::Tos(_)
            | Match::Dscp(_)
            | Match::Ah(_)
            | Match::Esp(_)
            | Match::Frag(_)
            | Match::Ipcomp(_)
            | Match::Tcpmss(_)
            | Match::Ecn(_)
            | Match::Devgroup(_)
            | Match::Hbh(_)
            | Match::Dst(_)
            | Match::Rt(_)
            | Match::Mh(_)
            | Match::Ipv6header(_)
            | Match::Eui64(_)
            | Match::Rpfilter(_)
            | Match::Physdev(_)
            | Match::String(_)
            | Match::U32(_)
            | Match::Cgroup(_)
            | Match::Cpu(_)
    )
}

/// What a raw rule becomes in the replay.
enum Step<'a> {
    Omit,
    Stop,
    Return,
    Jump(&'a str),
    Goto(&'a str),
    Helper(&'a str),
}

fn step(r: &Rule) -> Result<Step<'_>, String> {
    Ok(match &r.target {
        Target::None => Step::Omit,
        Target::Accept | Target::Drop => Step::Stop,
        Target::Return => Step::Return,
        Target::Jump(c) => Step::Jump(c),
        Target::Goto(c) => Step::Goto(c),
        Target::Ext(t) => match t.as_ref() {
            TargetExt::Ct(c) if !c.notrack && !c.helper.is_empty() => Step::Helper(&c.helper),
            TargetExt::Ct(_) | TargetExt::Notrack(_) | TargetExt::Reject(_) => Step::Stop,
            TargetExt::Log(_) | TargetExt::Nflog(_) | TargetExt::Trace(_) => Step::Omit,
            other => return Err(format!("-j {}", other.name())),
        },
    })
}

/// Why a rule's own form keeps a helper from being replayed (checked when
/// the helper rule is lowered, so a refusal names its line).
pub fn helper_rule_refusal(r: &Rule) -> Option<String> {
    if r.proto == 0 || r.inverted(inv::PROTO) {
        return Some(
            "the helper's protocol comes from the rule: xt_CT needs -p PROTO without !".into(),
        );
    }
    r.matches
        .iter()
        .find(|m| !replayable(m))
        .map(refusal_of_match)
}

fn refusal_of_match(m: &Match) -> String {
    format!(
        "-m {} reads the conntrack or keeps state, so it would not answer the same \
         after conntrack, where nftables' ct helper set must run",
        m.name()
    )
}

/// The replay of raw table `t` (`family`), or `None` when no helper rule is
/// reachable from a built-in chain. Errors name the first reachable rule
/// that cannot be replayed (and give its id).
pub fn build(t: &Table<Rule>, family: Family) -> Result<Option<Replay>, (RuleId, LowerError)> {
    if !has_helpers(t) {
        return Ok(None);
    }
    let mut chains: Vec<ReplayChain> = Vec::new();
    let mut objects: Vec<RuleObject> = Vec::new();
    let mut queued: HashSet<String> = HashSet::new();
    let mut todo: Vec<String> = Vec::new();
    for bc in layout::base_chains(TableKind::Raw) {
        queued.insert(bc.name.to_string());
        todo.push(bc.name.to_string());
    }
    let mut helpers = 0usize;
    let mut i = 0;
    while i < todo.len() {
        let name = todo[i].clone();
        i += 1;
        let Ok(rules) = t.rules(&name) else { continue };
        let hook = layout::base_chain(TableKind::Raw, &name).map(|b| b.hook);
        let mut out: Vec<Lowered> = Vec::new();
        if hook.is_some() {
            out.push(new_only());
        }
        for (n, r) in rules.enumerate() {
            let body = r.body;
            let at = |why: String| {
                let e = LowerError::not_native(
                    "-j CT --helper",
                    format!(
                        "the helper is given after conntrack by replaying the raw \
                         table there, and rule {} of chain {name} cannot be \
                         replayed: {why}",
                        n + 1
                    ),
                );
                (r.id, e)
            };
            let s = step(body).map_err(|t| at(format!("{t} changes what later rules read")))?;
            if matches!(s, Step::Omit) {
                continue;
            }
            if let Some(m) = body.matches.iter().find(|m| !replayable(m)) {
                return Err(at(refusal_of_match(m)));
            }
            let plain = Rule {
                target: Target::None,
                ..body.clone()
            };
            let mut l = lower_rule(&plain, family, TableKind::Raw, &name).map_err(|e| (r.id, e))?;
            l.exprs.retain(|e| !matches!(e, Expr::Counter { .. }));
            match s {
                Step::Omit => {}
                Step::Stop => verdict(&mut l, Verdict::Accept),
                Step::Return => verdict(&mut l, Verdict::Return),
                Step::Jump(c) | Step::Goto(c) => {
                    if queued.insert(c.to_string()) {
                        todo.push(c.to_string());
                    }
                    let v = if matches!(s, Step::Jump(_)) {
                        Verdict::Jump(c.to_string())
                    } else {
                        Verdict::Goto(c.to_string())
                    };
                    verdict(&mut l, v);
                }
                Step::Helper(h) => {
                    if let Some(why) = helper_rule_refusal(body) {
                        return Err(at(why));
                    }
                    helpers += 1;
                    let obj = helper_object(h, family, body.proto);
                    l.exprs.push(Expr::Objref(nft::expr::Objref {
                        ty: obj.data.ty(),
                        name: obj.name.clone(),
                    }));
                    if !objects.contains(&obj) {
                        objects.push(obj);
                    }
                    verdict(&mut l, Verdict::Accept);
                }
            }
            out.push(l);
        }
        chains.push(ReplayChain {
            name,
            hook,
            rules: out,
        });
    }
    Ok((helpers > 0).then_some(Replay { objects, chains }))
}

/// The `ct helper` object of kernel helper `name` for `family` and layer-4
/// protocol `proto`; named after both, so rules with the same pair share it.
pub fn helper_object(name: &str, family: Family, proto: u8) -> RuleObject {
    let l3 = match family {
        Family::Ipv4 => 2,
        Family::Ipv6 => 10,
    };
    RuleObject {
        name: format!("{name}-{proto}"),
        data: ObjData::CtHelper {
            name: name.to_string(),
            l3proto: Some(l3),
            l4proto: proto,
        },
    }
}

fn verdict(l: &mut Lowered, v: Verdict) {
    l.exprs.push(Expr::Immediate {
        dreg: reg::VERDICT,
        data: Data::Verdict(v),
    });
}

/// `ct state & new == 0 accept`: only new connections take a helper.
fn new_only() -> Lowered {
    let mut l = Lowered::default();
    l.exprs.push(Expr::Ct {
        key: ct::STATE,
        dreg: reg::R1,
        dir: None,
    });
    l.exprs.push(Expr::Bitwise {
        sreg: reg::R1,
        dreg: reg::R1,
        len: 4,
        mask: CT_STATE_NEW.to_ne_bytes().to_vec(),
        xor: vec![0; 4],
    });
    l.exprs.push(Expr::Cmp {
        sreg: reg::R1,
        op: CmpOp::Eq,
        data: vec![0; 4],
    });
    verdict(&mut l, Verdict::Accept);
    l
}

#[cfg(test)]
mod tests;

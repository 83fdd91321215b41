//! Evaluation of the logical ruleset with iptables' semantics: tables of a
//! hook in priority order, rules in order, counters of every matching rule,
//! jump/goto/RETURN, built-in chain policies.
//!
//! Contract: a rule counts a packet when all its matches match (before its
//! target runs, as x_tables does). `ACCEPT` ends the table and the packet
//! goes on to the next table of the hook; `DROP` and `REJECT` end the hook.
//! Chains of the nat table are consulted only for the first packet of a
//! connection (`ct` state NEW), as the kernel does.

use crate::{Choices, CtState, Hook, Outcome, Packet, Unsupported, Verdict, L4};
use iptables::ext::matches::{self as m, multiport};
use iptables::ext::{Match, TargetExt};
use iptables::rule::{inv, Addr, Iface};
use iptables::{Rule, Target};
use ruleset::{Family, Policy, RuleId, Ruleset, Table, TableKind};

/// The tables that have a chain at `hook`, in the order the kernel runs
/// them (iptables' priorities: raw −300, mangle −150, dnat −100, filter 0,
/// security 50, snat 100).
pub fn hook_tables(hook: Hook) -> &'static [TableKind] {
    use TableKind::*;
    match hook {
        Hook::Prerouting => &[Raw, Mangle, Nat],
        Hook::Input => &[Mangle, Filter, Security, Nat],
        Hook::Forward => &[Mangle, Filter, Security],
        Hook::Output => &[Raw, Mangle, Nat, Filter, Security],
        Hook::Postrouting => &[Mangle, Nat],
    }
}

/// What the packet gets at `hook` from the whole logical ruleset.
pub fn eval_hook(
    rs: &Ruleset<Rule>,
    hook: Hook,
    pkt: &Packet,
    ch: Choices,
) -> Result<Outcome, Unsupported> {
    let mut st = State::new(pkt.mark, false);
    eval_tables(rs, hook, pkt, ch, &mut st)
}

/// One step of a packet's way through the tables (see [`trace_hook`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Rule `num` (1-based) of `chain` matched.
    Rule {
        table: TableKind,
        chain: String,
        num: usize,
        id: RuleId,
    },
    /// The end of built-in chain `chain` was reached: its policy.
    Policy {
        table: TableKind,
        chain: String,
        verdict: Verdict,
    },
}

/// [`eval_hook`], also returning every matching rule and policy on the way.
pub fn trace_hook(
    rs: &Ruleset<Rule>,
    hook: Hook,
    pkt: &Packet,
    ch: Choices,
) -> Result<(Outcome, Vec<Step>), Unsupported> {
    let mut st = State::new(pkt.mark, true);
    let o = eval_tables(rs, hook, pkt, ch, &mut st)?;
    Ok((o, st.trace.unwrap_or_default()))
}

fn eval_tables(
    rs: &Ruleset<Rule>,
    hook: Hook,
    pkt: &Packet,
    ch: Choices,
    st: &mut State,
) -> Result<Outcome, Unsupported> {
    for &kind in hook_tables(hook) {
        if kind == TableKind::Nat && pkt.ct != CtState::New {
            continue;
        }
        let t = rs.table(pkt.family, kind);
        match eval_chain(t, hook.chain(), pkt, ch, st)? {
            Verdict::Accept => {}
            v => return Ok(st.outcome(v)),
        }
    }
    Ok(st.outcome(Verdict::Accept))
}

/// What the packet gets from built-in chain `chain` of one table (its
/// rules, then its policy). An unknown chain is an empty one with policy
/// ACCEPT.
pub fn eval_table(
    t: &Table<Rule>,
    chain: &str,
    pkt: &Packet,
    ch: Choices,
) -> Result<Outcome, Unsupported> {
    let mut st = State::new(pkt.mark, false);
    let v = eval_chain(t, chain, pkt, ch, &mut st)?;
    Ok(st.outcome(v))
}

struct State {
    mark: u32,
    counted: Vec<RuleId>,
    /// Steps, when tracing.
    trace: Option<Vec<Step>>,
}

impl State {
    fn new(mark: u32, trace: bool) -> State {
        State {
            mark,
            counted: Vec::new(),
            trace: trace.then(Vec::new),
        }
    }

    fn outcome(&mut self, verdict: Verdict) -> Outcome {
        Outcome {
            verdict,
            counted: std::mem::take(&mut self.counted),
            mark: self.mark,
        }
    }
}

/// Jumps deeper than this are a loop the kernel would have refused.
const MAX_DEPTH: usize = 64;

fn eval_chain(
    t: &Table<Rule>,
    base: &str,
    pkt: &Packet,
    ch: Choices,
    st: &mut State,
) -> Result<Verdict, Unsupported> {
    let Some(bc) = t.chain(base) else {
        return Ok(Verdict::Accept);
    };
    let policy = match bc.policy {
        Some(Policy::Drop) => Verdict::Drop,
        _ => Verdict::Accept,
    };
    // (chain, index of the next rule) to come back to.
    let mut stack: Vec<(String, usize)> = Vec::new();
    let mut chain = base.to_string();
    let mut pos = 0usize;
    'chains: loop {
        let rules: Vec<_> = t
            .rules(&chain)
            .map_err(|e| Unsupported(format!("chain {chain}: {e}")))?
            .skip(pos)
            .collect();
        for (i, r) in rules.iter().enumerate() {
            if !rule_matches(r.body, r.id, pkt, st.mark, ch)? {
                continue;
            }
            st.counted.push(r.id);
            let next = pos + i + 1;
            if let Some(tr) = st.trace.as_mut() {
                tr.push(Step::Rule {
                    table: t.kind(),
                    chain: chain.clone(),
                    num: next,
                    id: r.id,
                });
            }
            match &r.body.target {
                Target::None => {}
                Target::Accept => return Ok(Verdict::Accept),
                Target::Drop => return Ok(Verdict::Drop),
                Target::Return => match stack.pop() {
                    Some((c, p)) => {
                        chain = c;
                        pos = p;
                        continue 'chains;
                    }
                    None => return Ok(at_policy(st, t, base, policy)),
                },
                Target::Jump(c) | Target::Goto(c) => {
                    if matches!(r.body.target, Target::Jump(_)) {
                        stack.push((chain.clone(), next));
                    }
                    if stack.len() > MAX_DEPTH {
                        return Err(Unsupported(format!("jumps deeper than {MAX_DEPTH}")));
                    }
                    chain = c.to_string();
                    pos = 0;
                    continue 'chains;
                }
                Target::Ext(x) => match &**x {
                    TargetExt::Log(_) | TargetExt::Nflog(_) | TargetExt::Trace(_) => {}
                    TargetExt::Mark(x) => st.mark = (st.mark & !x.mask) ^ x.mark,
                    TargetExt::Reject(_) => return Ok(Verdict::Reject),
                    other => return Err(Unsupported(format!("target {}", other.name()))),
                },
            }
        }
        // End of the chain: a user chain returns, a built-in one applies
        // its policy.
        match stack.pop() {
            Some((c, p)) => {
                chain = c;
                pos = p;
            }
            None => return Ok(at_policy(st, t, base, policy)),
        }
    }
}

fn at_policy(st: &mut State, t: &Table<Rule>, base: &str, policy: Verdict) -> Verdict {
    if let Some(tr) = st.trace.as_mut() {
        tr.push(Step::Policy {
            table: t.kind(),
            chain: base.to_string(),
            verdict: policy.clone(),
        });
    }
    policy
}

fn addr_match(a: &Addr, have: &[u8], invert: bool) -> bool {
    let n = have.len();
    let hit = (0..n).all(|i| have[i] & a.mask[i] == a.addr[i] & a.mask[i]);
    hit != invert
}

/// xt's interface test: exact name, or the prefix before a trailing `+`.
fn iface_match(rule: &Iface, have: &Iface, invert: bool) -> bool {
    let want = rule.as_str();
    if want.is_empty() {
        return true;
    }
    let have = have.as_str();
    let hit = match want.strip_suffix('+') {
        Some(prefix) => have.starts_with(prefix),
        None => have == want,
    };
    hit != invert
}

fn in_range(v: u16, (lo, hi): (u16, u16), invert: bool) -> bool {
    (lo <= v && v <= hi) != invert
}

/// Whether every part of `r` matches `pkt` (with the mark as targets
/// earlier in the traversal left it).
pub fn rule_matches(
    r: &Rule,
    id: RuleId,
    pkt: &Packet,
    mark: u32,
    ch: Choices,
) -> Result<bool, Unsupported> {
    if !iface_match(&r.iniface, &pkt.iif, r.inverted(inv::IN))
        || !iface_match(&r.outiface, &pkt.oif, r.inverted(inv::OUT))
    {
        return Ok(false);
    }
    let fragment = pkt.frag_off != 0;
    if r.frag && (fragment == r.inverted(inv::FRAG)) {
        return Ok(false);
    }
    if !addr_match(&r.src, pkt.src(), r.inverted(inv::SRC))
        || !addr_match(&r.dst, pkt.dst(), r.inverted(inv::DST))
    {
        return Ok(false);
    }
    if r.proto != 0 && ((pkt.proto() == r.proto) == r.inverted(inv::PROTO)) {
        return Ok(false);
    }
    let mut stateful = 0u32;
    for x in &r.matches {
        if !match_one(x, id, pkt, mark, ch, &mut stateful)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn match_one(
    x: &Match,
    id: RuleId,
    pkt: &Packet,
    mark: u32,
    ch: Choices,
    stateful: &mut u32,
) -> Result<bool, Unsupported> {
    // tcp, udp, icmp and multiport never match a non-first fragment, even
    // inverted (x_tables returns false before testing anything).
    let transport = pkt.has_transport();
    Ok(match x {
        Match::Tcp(t) => {
            let L4::Tcp {
                sport,
                dport,
                flags,
            } = pkt.l4
            else {
                return Ok(false);
            };
            if t.option != 0 || t.inv_option {
                return Err(Unsupported("--tcp-option".into()));
            }
            transport
                && in_range(sport, t.spts, t.inv_sport)
                && in_range(dport, t.dpts, t.inv_dport)
                && ((flags & t.flg_mask == t.flg_cmp) != t.inv_flags)
        }
        Match::Udp(u) => {
            let L4::Udp { sport, dport } = pkt.l4 else {
                return Ok(false);
            };
            transport
                && in_range(sport, u.spts, u.inv_sport)
                && in_range(dport, u.dpts, u.inv_dport)
        }
        Match::Icmp(i) => icmp(pkt, Family::Ipv4, i.typ, i.code_min, i.code_max, i.inv),
        Match::Icmp6(i) => icmp(pkt, Family::Ipv6, i.typ, i.code_min, i.code_max, i.inv),
        Match::Multiport(mp) => {
            let Some((sport, dport)) = pkt.l4.ports() else {
                return Ok(false);
            };
            if !transport {
                return Ok(false);
            }
            let hit = |p: u16| mp.ports.iter().any(|&(lo, hi)| lo <= p && p <= hi);
            let h = match mp.kind {
                multiport::SOURCE => hit(sport),
                multiport::DESTINATION => hit(dport),
                _ => hit(sport) || hit(dport),
            };
            h != mp.inv
        }
        Match::Mark(k) => ((mark & k.mask) == k.mark) != k.inv,
        Match::State(s) => (pkt.ct.xt_bit() & s.mask != 0) != s.inv,
        Match::Conntrack(c) => conntrack(c, pkt)?,
        Match::Comment(_) => true,
        Match::Length(l) => (l.min <= pkt.len && pkt.len <= l.max) != l.inv,
        Match::Ttl(t) => ttl(t.mode, pkt.ttl, t.ttl),
        Match::Hl(h) => ttl(h.mode, pkt.ttl, h.hop_limit),
        Match::Iprange(r) => {
            let n = pkt.src().len();
            let within =
                |r: &m::iprange::Range, a: &[u8]| (r.lo[..n] <= *a && *a <= r.hi[..n]) != r.inv;
            r.src.as_ref().is_none_or(|s| within(s, pkt.src()))
                && r.dst.as_ref().is_none_or(|d| within(d, pkt.dst()))
        }
        // Both outcomes are possible for any packet (an inversion only
        // swaps which one is which), so the choice decides.
        Match::Statistic(st) if !st.nth => {
            *stateful += 1;
            ch.below(id, *stateful - 1, st.val, st.inv)
        }
        Match::Limit(_) | Match::Statistic(_) => {
            *stateful += 1;
            ch.pass(id, *stateful - 1)
        }
        other => return Err(Unsupported(format!("match {other:?}"))),
    })
}

fn icmp(pkt: &Packet, fam: Family, typ: u8, lo: u8, hi: u8, invert: bool) -> bool {
    let L4::Icmp { typ: t, code } = pkt.l4 else {
        return false;
    };
    if pkt.family != fam || !pkt.has_transport() {
        return false;
    }
    // Type 255 is "any" (ICMP only; ip6tables has no such type).
    let hit = (fam == Family::Ipv4 && typ == 0xff) || (t == typ && lo <= code && code <= hi);
    hit != invert
}

fn ttl(mode: u8, have: u8, want: u8) -> bool {
    use iptables::ext::matches::ttl::{EQ, GT, LT, NE};
    match mode {
        EQ => have == want,
        NE => have != want,
        LT => have < want,
        GT => have > want,
        _ => false,
    }
}

fn conntrack(c: &m::conntrack::Conntrack, pkt: &Packet) -> Result<bool, Unsupported> {
    use m::conntrack::{ST_DNAT, ST_SNAT};
    let others = c.tests_beyond_state();
    match c.state {
        Some((mask, invert)) if !others && mask & (ST_SNAT | ST_DNAT) == 0 => {
            Ok((pkt.ct.xt_bit() & mask != 0) != invert)
        }
        _ => Err(Unsupported(
            "-m conntrack beyond --ctstate of plain states".into(),
        )),
    }
}

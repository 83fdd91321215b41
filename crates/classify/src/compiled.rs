//! An interpreter of the nftables objects nfkeeper puts in the kernel:
//! tables of base and regular chains holding native expressions, and sets,
//! maps and verdict maps with per-element counters.
//!
//! It follows the kernel's evaluation (net/netfilter/nf_tables_core.c and
//! the expression sources): registers are one 80-byte file (the verdict,
//! then four 16-byte registers that alias sixteen 4-byte ones), a load that
//! cannot read its field or a failed comparison ends the rule (`break`),
//! base chains run in priority order per hook, `accept` ends the table and
//! `drop` the hook, nat-type chains see only a connection's first packet.
//!
//! Counters are attributed to logical rules through ids the caller gives:
//! a rule's `counter` counts for the rule's id, a set element with a
//! counter for the element's id, when a lookup hits it.

use crate::{Choices, CtState, Hook, Outcome, Packet, Unsupported, Verdict};
use nft::expr::{base, meta, reg, CmpOp};
use nft::{Data, Expr};
use ruleset::RuleId;
use std::collections::{BTreeMap, HashMap};

/// One compiled rule: its expressions and the logical rule it stands for
/// (`None` for rules that count for none, e.g. a set lookup whose elements
/// carry the counters).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KRule {
    pub exprs: Vec<Expr>,
    pub id: Option<RuleId>,
}

/// Where a base chain hangs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaseHook {
    pub hook: Hook,
    pub priority: i32,
    /// nat-type chains run for the first packet of a connection only.
    pub nat: bool,
    pub policy_drop: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KChain {
    pub base: Option<BaseHook>,
    pub rules: Vec<KRule>,
}

/// One element: its value (map data or verdict), the logical rule its
/// counter counts for, and whether it has a counter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KElem {
    pub data: Option<Data>,
    pub id: Option<RuleId>,
    pub counter: bool,
    /// Interval sets: this key ends the previous range (exclusive end).
    pub interval_end: bool,
}

/// A set or map. Keys are register bytes (big-endian fields, each field of
/// a concatenation padded to 4 bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KSet {
    pub key_len: usize,
    pub interval: bool,
    /// Elements get a counter each (the set's element expressions hold one).
    pub elem_counter: bool,
    pub elems: BTreeMap<Vec<u8>, KElem>,
}

impl KSet {
    /// The element `key` falls on: exact for hash sets; for interval sets
    /// the range starting at or below `key`, unless an end marker comes
    /// first (the kernel's rbtree semantics).
    pub fn find(&self, key: &[u8]) -> Option<&KElem> {
        if !self.interval {
            return self.elems.get(key);
        }
        let (_, e) = self.elems.range(..=key.to_vec()).next_back()?;
        (!e.interval_end).then_some(e)
    }

    /// Add element `e` (counting for logical rule `id`) the way a
    /// `NEWSETELEM` would (`counter` from the set's element expressions or
    /// the element's own). An interval end marker on the key where another
    /// range starts is implied by that start and not stored over it.
    pub fn add(&mut self, e: &nft::SetElem, id: Option<RuleId>) {
        let Some(key) = &e.key else { return };
        let end = e
            .flags
            .is_some_and(|f| f & nft::setelem::F_INTERVAL_END != 0);
        if end && self.elems.get(key).is_some_and(|x| !x.interval_end) {
            return;
        }
        let counter =
            self.elem_counter || e.exprs.iter().any(|x| matches!(x, Expr::Counter { .. }));
        self.elems.insert(
            key.clone(),
            KElem {
                data: e.data.clone(),
                id,
                counter,
                interval_end: e
                    .flags
                    .is_some_and(|f| f & nft::setelem::F_INTERVAL_END != 0),
            },
        );
    }
}

/// One table of one family.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KTable {
    pub chains: HashMap<String, KChain>,
    pub sets: HashMap<String, KSet>,
}

/// All tables of one family that take part in a hook.
#[derive(Clone, Debug, Default)]
pub struct Kernel {
    pub tables: Vec<KTable>,
}

const REGS: usize = 80;

struct Eval<'a> {
    pkt: &'a Packet,
    net: Vec<u8>,
    th: Option<Vec<u8>>,
    mark: u32,
    counted: Vec<RuleId>,
    ch: Choices,
}

/// What ends one rule.
enum Flow {
    /// No verdict: on to the next rule.
    Next,
    Verdict(nft::Verdict),
    Reject,
}

impl Kernel {
    /// What the packet gets at `hook`: every base chain on it, lowest
    /// priority first.
    pub fn eval_hook(&self, hook: Hook, pkt: &Packet, ch: Choices) -> Result<Outcome, Unsupported> {
        let mut bases: Vec<(i32, &KTable, &str, BaseHook)> = Vec::new();
        for t in &self.tables {
            for (name, c) in &t.chains {
                if let Some(b) = c.base {
                    if b.hook == hook {
                        bases.push((b.priority, t, name, b));
                    }
                }
            }
        }
        bases.sort_by_key(|b| b.0);
        let mut ev = Eval {
            pkt,
            net: pkt.network_header(),
            th: pkt.transport_header(),
            mark: pkt.mark,
            counted: Vec::new(),
            ch,
        };
        for (_, t, name, b) in bases {
            if b.nat && pkt.ct != CtState::New {
                continue;
            }
            match ev.chain(t, name, b)? {
                Verdict::Accept => {}
                v => return Ok(ev.outcome(v)),
            }
        }
        Ok(ev.outcome(Verdict::Accept))
    }
}

const MAX_DEPTH: usize = 64;

impl Eval<'_> {
    fn outcome(self, verdict: Verdict) -> Outcome {
        Outcome {
            verdict,
            counted: self.counted,
            mark: self.mark,
        }
    }

    fn chain(&mut self, t: &KTable, base: &str, b: BaseHook) -> Result<Verdict, Unsupported> {
        let policy = if b.policy_drop {
            Verdict::Drop
        } else {
            Verdict::Accept
        };
        let mut stack: Vec<(&str, usize)> = Vec::new();
        let mut chain: &str = base;
        let mut pos = 0usize;
        loop {
            let c = t
                .chains
                .get(chain)
                .ok_or_else(|| Unsupported(format!("jump to missing chain {chain}")))?;
            let mut jumped = false;
            while pos < c.rules.len() {
                let r = &c.rules[pos];
                pos += 1;
                let v = match self.rule(t, r)? {
                    Flow::Next => continue,
                    Flow::Reject => return Ok(Verdict::Reject),
                    Flow::Verdict(v) => v,
                };
                match v {
                    nft::Verdict::Accept => return Ok(Verdict::Accept),
                    nft::Verdict::Drop => return Ok(Verdict::Drop),
                    nft::Verdict::Continue | nft::Verdict::Break => {}
                    nft::Verdict::Return => {
                        match stack.pop() {
                            Some((c, p)) => {
                                chain = c;
                                pos = p;
                            }
                            None => return Ok(policy.clone()),
                        }
                        jumped = true;
                        break;
                    }
                    nft::Verdict::Jump(ref to) | nft::Verdict::Goto(ref to) => {
                        if matches!(v, nft::Verdict::Jump(_)) {
                            stack.push((chain, pos));
                        }
                        if stack.len() > MAX_DEPTH {
                            return Err(Unsupported(format!("jumps deeper than {MAX_DEPTH}")));
                        }
                        chain = t
                            .chains
                            .get_key_value(to.as_str())
                            .map(|(k, _)| k.as_str())
                            .ok_or_else(|| Unsupported(format!("jump to missing chain {to}")))?;
                        pos = 0;
                        jumped = true;
                        break;
                    }
                    nft::Verdict::Other(c) => return Err(Unsupported(format!("verdict code {c}"))),
                }
            }
            if jumped {
                continue;
            }
            match stack.pop() {
                Some((c, p)) => {
                    chain = c;
                    pos = p;
                }
                None => return Ok(policy),
            }
        }
    }

    /// Run one rule's expressions.
    fn rule(&mut self, t: &KTable, r: &KRule) -> Result<Flow, Unsupported> {
        let mut regs = [0u8; REGS];
        let mut stateful = 0u32;
        // A numgen/random load followed by its comparison is a stateful
        // test: the comparison's outcome is the choice's.
        let mut chosen = false;
        let need_id = |what: &str| {
            r.id.ok_or_else(|| Unsupported(format!("{what} in a rule of no logical rule")))
        };
        for e in &r.exprs {
            match e {
                Expr::Immediate { dreg, data } => match data {
                    Data::Verdict(v) if *dreg == reg::VERDICT => {
                        return Ok(Flow::Verdict(v.clone()));
                    }
                    Data::Value(v) => put(&mut regs, *dreg, v)?,
                    Data::Verdict(_) => {
                        return Err(Unsupported("verdict into a data register".into()))
                    }
                },
                Expr::Payload {
                    dreg,
                    base: b,
                    offset,
                    len,
                } => {
                    let hdr = match *b {
                        base::NETWORK => Some(&self.net),
                        base::TRANSPORT => self.th.as_ref(),
                        _ => return Err(Unsupported(format!("payload base {b}"))),
                    };
                    let (o, l) = (*offset as usize, *len as usize);
                    match hdr {
                        Some(h) if o + l <= h.len() => {
                            let v = h[o..o + l].to_vec();
                            put(&mut regs, *dreg, &v)?;
                        }
                        _ => return Ok(Flow::Next),
                    }
                }
                Expr::Cmp { sreg, op, data } => {
                    let have = get(&regs, *sreg, data.len())?;
                    let pass = if std::mem::take(&mut chosen) {
                        let id = need_id("a stateful test")?;
                        stateful += 1;
                        self.ch.pass(id, stateful - 1)
                    } else {
                        let o = have.cmp(data.as_slice());
                        match op {
                            CmpOp::Eq => o.is_eq(),
                            CmpOp::Neq => o.is_ne(),
                            CmpOp::Lt => o.is_lt(),
                            CmpOp::Lte => o.is_le(),
                            CmpOp::Gt => o.is_gt(),
                            CmpOp::Gte => o.is_ge(),
                        }
                    };
                    if !pass {
                        return Ok(Flow::Next);
                    }
                }
                Expr::Range {
                    sreg,
                    neq,
                    from,
                    to,
                } => {
                    let have = get(&regs, *sreg, from.len())?;
                    let inside = from.as_slice() <= have && have <= to.as_slice();
                    if inside == *neq {
                        return Ok(Flow::Next);
                    }
                }
                Expr::Bitwise {
                    sreg,
                    dreg,
                    len,
                    mask,
                    xor,
                } => {
                    let l = *len as usize;
                    let v: Vec<u8> = get(&regs, *sreg, l)?
                        .iter()
                        .zip(mask)
                        .zip(xor)
                        .map(|((v, m), x)| (v & m) ^ x)
                        .collect();
                    put(&mut regs, *dreg, &v)?;
                }
                Expr::Byteorder(b) => {
                    let v = get(&regs, b.sreg, b.len as usize)?.to_vec();
                    let size = b.size as usize;
                    if !matches!(size, 2 | 4 | 8) || v.len() % size != 0 {
                        return Err(Unsupported(format!("byteorder size {size}")));
                    }
                    // HTON and NTOH both swap each unit on a little-endian
                    // host, and are the identity on a big-endian one.
                    let mut out = v.clone();
                    if cfg!(target_endian = "little") {
                        for c in out.chunks_mut(size) {
                            c.reverse();
                        }
                    }
                    put(&mut regs, b.dreg, &out)?;
                }
                Expr::Meta { key, dreg } if *key == META_PRANDOM => {
                    // The draw itself, masked and compared by the rule's
                    // next expressions; fixed outcomes decide the compare.
                    let id = need_id("meta random")?;
                    stateful += 1;
                    match self.ch.random31(id, stateful - 1) {
                        Some(r) => put(&mut regs, *dreg, &r.to_be_bytes())?,
                        None => {
                            stateful -= 1;
                            chosen = true;
                        }
                    }
                }
                Expr::Meta { key, dreg } => {
                    let v = self.meta(*key)?;
                    put(&mut regs, *dreg, &v)?;
                }
                Expr::MetaSet { key, sreg } if *key == meta::MARK => {
                    let v = get(&regs, *sreg, 4)?;
                    self.mark = u32::from_ne_bytes([v[0], v[1], v[2], v[3]]);
                }
                Expr::Ct { key, dreg, dir: _ } if *key == nft::expr::ct::STATE => {
                    put(&mut regs, *dreg, &self.pkt.ct.nft_bits().to_ne_bytes())?;
                }
                Expr::Lookup {
                    set,
                    sreg,
                    dreg,
                    flags,
                    ..
                } => {
                    let s = t
                        .sets
                        .get(set)
                        .ok_or_else(|| Unsupported(format!("lookup in missing set {set}")))?;
                    let key = get(&regs, *sreg, s.key_len)?;
                    let hit = s.find(key);
                    let invert = flags.is_some_and(|f| f & nft::expr::LOOKUP_F_INV != 0);
                    if hit.is_some() == invert {
                        return Ok(Flow::Next);
                    }
                    if let Some(el) = hit {
                        if el.counter {
                            if let Some(id) = el.id {
                                self.counted.push(id);
                            }
                        }
                        if let Some(d) = dreg {
                            match &el.data {
                                Some(Data::Verdict(v)) if *d == reg::VERDICT => {
                                    return Ok(Flow::Verdict(v.clone()));
                                }
                                Some(Data::Value(v)) => put(&mut regs, *d, v)?,
                                _ => return Err(Unsupported(format!("map {set} without data"))),
                            }
                        }
                    }
                }
                Expr::Counter { .. } => {
                    if let Some(id) = r.id {
                        self.counted.push(id);
                    }
                }
                Expr::Log { .. } => {}
                Expr::Reject { .. } => return Ok(Flow::Reject),
                Expr::Limit { .. } => {
                    let id = need_id("limit")?;
                    stateful += 1;
                    if !self.ch.pass(id, stateful - 1) {
                        return Ok(Flow::Next);
                    }
                }
                Expr::Numgen {
                    dreg,
                    modulus,
                    ty: NG_RANDOM,
                    ..
                } => {
                    let v = self.numgen_random(t, r, *dreg, *modulus)?;
                    put(&mut regs, *dreg, &v.to_ne_bytes())?;
                }
                Expr::Numgen { dreg, .. } => {
                    put(&mut regs, *dreg, &[0; 4])?;
                    chosen = true;
                }
                other => return Err(Unsupported(format!("expression {other:?}"))),
            }
        }
        Ok(Flow::Next)
    }

    /// The value `numgen random mod modulus` (into `dreg`) gives, drawn as
    /// the logical rules of the verdict map it feeds would draw (see
    /// `compile::runs::numgen`): the member of key j ≥ 1 (probability
    /// 1/(j+1)) asked first from the top, key 0 when none passes. Uniform
    /// over the seeds, up to xt_statistic's 2^-31 steps. A map whose
    /// elements carry no logical rule is not modelled.
    fn numgen_random(
        &self,
        t: &KTable,
        r: &KRule,
        dreg: u32,
        modulus: u32,
    ) -> Result<u32, Unsupported> {
        let set = r
            .exprs
            .iter()
            .find_map(|e| match e {
                Expr::Lookup { set, sreg, .. } if *sreg == dreg => Some(set),
                _ => None,
            })
            .and_then(|n| t.sets.get(n))
            .ok_or_else(|| Unsupported("numgen random without a map lookup".into()))?;
        for j in (1..modulus).rev() {
            let Some(el) = set.find(&j.to_ne_bytes()) else {
                continue;
            };
            let id = el
                .id
                .ok_or_else(|| Unsupported("a numgen map element of no logical rule".into()))?;
            let val = iptables::ext::matches::statistic::to_fixed(1.0 / f64::from(j + 1));
            if self.ch.below(id, 0, val, false) {
                return Ok(j);
            }
        }
        Ok(0)
    }

    fn meta(&self, key: u32) -> Result<Vec<u8>, Unsupported> {
        let p = self.pkt;
        Ok(match key {
            meta::LEN => u32::from(p.len).to_ne_bytes().to_vec(),
            meta::PROTOCOL => match p.family {
                ruleset::Family::Ipv4 => 0x0800u16.to_be_bytes().to_vec(),
                ruleset::Family::Ipv6 => 0x86ddu16.to_be_bytes().to_vec(),
            },
            meta::MARK => self.mark.to_ne_bytes().to_vec(),
            meta::IIFNAME => ifname(&p.iif),
            meta::OIFNAME => ifname(&p.oif),
            meta::NFPROTO => vec![match p.family {
                ruleset::Family::Ipv4 => 2,
                ruleset::Family::Ipv6 => 10,
            }],
            meta::L4PROTO => vec![p.proto()],
            k => return Err(Unsupported(format!("meta key {k}"))),
        })
    }
}

/// `NFT_META_PRANDOM`.
const META_PRANDOM: u32 = 24;
/// `NFT_NG_RANDOM`.
const NG_RANDOM: u32 = 1;

fn ifname(i: &iptables::rule::Iface) -> Vec<u8> {
    let mut v = vec![0u8; 16];
    let s = i.as_str().as_bytes();
    v[..s.len()].copy_from_slice(s);
    v
}

/// Byte offset of register `r` in the register file (16-byte registers
/// 1–4 and 4-byte registers 8–23 alias the same bytes).
fn reg_off(r: u32) -> Result<usize, Unsupported> {
    match r {
        reg::R1..=reg::R4 => Ok(r as usize * 16),
        8..=23 => Ok(16 + (r as usize - 8) * 4),
        _ => Err(Unsupported(format!("register {r}"))),
    }
}

/// Store `v` at register `r`, zeroing the rest of its last 4-byte word (as
/// the kernel's loads do).
fn put(regs: &mut [u8; REGS], r: u32, v: &[u8]) -> Result<(), Unsupported> {
    let o = reg_off(r)?;
    let padded = v.len().div_ceil(4) * 4;
    if o + padded > REGS {
        return Err(Unsupported(format!("{} bytes into register {r}", v.len())));
    }
    regs[o..o + padded].fill(0);
    regs[o..o + v.len()].copy_from_slice(v);
    Ok(())
}

fn get(regs: &[u8; REGS], r: u32, len: usize) -> Result<&[u8], Unsupported> {
    let o = reg_off(r)?;
    regs.get(o..o + len)
        .ok_or_else(|| Unsupported(format!("{len} bytes from register {r}")))
}

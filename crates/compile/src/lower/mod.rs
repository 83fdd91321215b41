//! Lowering: one logical rule to the native nftables expressions that make the
//! kernel do exactly what iptables would.
//!
//! Order of a lowered rule: header matches (`-i -o -p -s -d -f`), each match
//! in rule order, one `counter` (so `-L -v` has per-rule counters), then the
//! target. Every load goes to register 1 and is consumed by the next
//! expression, so no register allocation is needed; targets that take
//! several inputs (NAT ranges) use registers 1–4 explicitly.
//!
//! Cost: O(rule size); no allocation beyond the output vector and the byte
//! strings of compared values.

mod header;
pub mod matches;
pub mod targets;
#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod testutil;

use crate::compat::tables;
use iptables::ext::{Match, TargetExt};
use iptables::{Rule, Target};
use nft::expr::{base, reg, CmpOp};
use nft::{Data, Expr, Verdict};
use ruleset::{Family, TableKind};
use std::fmt;

/// Why a rule could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LowerError {
    /// The match/target (or this use of it) has no native nftables form.
    NotNative { what: String, why: String },
    /// A rule names an ipset that is not one of nfkeeper's (iptables:
    /// "Set NAME doesn't exist.").
    NoSet(String),
}

impl LowerError {
    pub fn not_native(what: impl Into<String>, why: impl Into<String>) -> Self {
        LowerError::NotNative {
            what: what.into(),
            why: why.into(),
        }
    }
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LowerError::NotNative { what, why } => {
                write!(f, "{what} has no native nftables form in nfkeeper: {why}")
            }
            LowerError::NoSet(name) => write!(f, "Set {name} doesn't exist."),
        }
    }
}

impl std::error::Error for LowerError {}

pub type Result<T> = std::result::Result<T, LowerError>;

/// An anonymous, constant set (or map) a rule needs (e.g. `multiport`
/// ports, the TTL a decrement makes of each TTL): the caller creates it in
/// the same batch, before the rule, as `__nfk_set<id>` with batch-local id
/// `id` (see [`AnonSet::to_nft`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnonSet {
    /// Index of the set within this rule (0, 1, …); the caller maps it to a
    /// batch-unique id.
    pub index: u32,
    /// nftables data type of the key (e.g. 13 `inet_service`, 7 `ipv4_addr`).
    pub key_type: u32,
    pub key_len: u32,
    /// Interval set: elements are ranges (`key` .. `key_end`).
    pub interval: bool,
    /// (key, key_end) in network byte order; key_end only for intervals.
    pub elems: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// A map: the value of each element; `None` for a plain set.
    pub map: Option<AnonMap>,
}

/// The values of an anonymous map: `values[i]` is the data of
/// `elems[i]` (so both have the same length), `data_len` bytes of
/// nftables data type `data_type` each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnonMap {
    pub data_type: u32,
    pub data_len: u32,
    pub values: Vec<Vec<u8>>,
}

/// A stateful object a rule refers to by name (`objref`), e.g. the secmark
/// object of `-j SECMARK`.
///
/// Contract for the caller: the object lives in the rule's table under
/// `name`. Names are derived from the content only (same name ⇔ same
/// data; e.g. [`targets::secmark::object`]), so rules needing the same
/// object share one. Before (or in the same batch as, ahead of) the rule that
/// needs it, the caller creates the object unless the table already has
/// one of that name; it deletes the object once no rule of the table
/// refers to it any more (the kernel refuses, EBUSY, while one does, and
/// counts the references in the object's use). Objects are never changed
/// in place: new content is a new name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RuleObject {
    pub name: String,
    pub data: nft::expr::objref::ObjData,
}

/// What the lowering knows of an ipset a rule names.
#[derive(Clone, Copy, Debug)]
pub enum IpsetInfo<'a> {
    /// The caller keeps no catalog of ipsets: `-m set` and `-j SET` have
    /// no native form.
    Unknown,
    /// Not one of nfkeeper's ipsets.
    Missing,
    /// A set of the kernel's own ipset module (made by the real `ipset`),
    /// by its index: the rule reaches it through nft_compat's xtables
    /// `set` match / `SET` target.
    Kernel(u16),
    /// nfkeeper's ipset of this header.
    Ours(&'a ipset::model::Header),
}

/// nfkeeper's ipsets as the lowering sees them (the keeper's, read from
/// the kernel).
pub trait Ipsets {
    fn info(&self, name: &str) -> IpsetInfo<'_>;
}

/// No catalog: every ipset is [`IpsetInfo::Unknown`].
pub struct NoIpsets;

impl Ipsets for NoIpsets {
    fn info(&self, _: &str) -> IpsetInfo<'_> {
        IpsetInfo::Unknown
    }
}

/// A lowered rule: its expressions, the anonymous sets they look up, the
/// named objects they refer to (see [`RuleObject`] for what the caller
/// must do with them), and the protocol its xtables extensions are
/// checked against (`Some` when any expression is nft_compat's
/// `match`/`target`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lowered {
    pub exprs: Vec<Expr>,
    pub sets: Vec<AnonSet>,
    pub objects: Vec<RuleObject>,
    pub compat: Option<nft::RuleCompat>,
    /// nfkeeper's ipsets the expressions look up or update by name
    /// (`-m set`, `-j SET`), each once. Contract for the caller: the
    /// rule's table holds a copy of each (same name, the set's nftables
    /// form, its members) before the rule, in the same batch at the
    /// latest (see docs/ipset.md).
    pub ipsets: Vec<String>,
}

/// The lowering context of one rule: where it goes and the expressions so far.
pub struct Cx<'a> {
    pub family: Family,
    pub table: TableKind,
    pub chain: &'a str,
    pub rule: &'a Rule,
    pub out: Vec<Expr>,
    pub sets: Vec<AnonSet>,
    pub objects: Vec<RuleObject>,
    /// The ipsets the rule may name.
    pub ipsets: &'a dyn Ipsets,
    /// The ipsets it names (see [`Lowered::ipsets`]).
    pub ipset_refs: Vec<String>,
}

impl<'a> Cx<'a> {
    /// A fresh context for `rule` in `chain` of `table`, without ipsets.
    pub fn new(family: Family, table: TableKind, chain: &'a str, rule: &'a Rule) -> Cx<'a> {
        Cx {
            family,
            table,
            chain,
            rule,
            out: Vec::with_capacity(8),
            sets: Vec::new(),
            objects: Vec::new(),
            ipsets: &NoIpsets,
            ipset_refs: Vec::new(),
        }
    }
}

impl Cx<'_> {
    /// Note that the rule names nfkeeper's ipset `name`.
    pub fn use_ipset(&mut self, name: &str) {
        if !self.ipset_refs.iter().any(|n| n == name) {
            self.ipset_refs.push(name.to_string());
        }
    }

    pub fn is_v6(&self) -> bool {
        self.family == Family::Ipv6
    }

    pub fn push(&mut self, e: Expr) {
        self.out.push(e);
    }

    /// Load `len` bytes at `offset` of header `base` into register 1.
    pub fn payload(&mut self, base: u32, offset: u32, len: u32) {
        self.push(Expr::Payload {
            dreg: reg::R1,
            base,
            offset,
            len,
        });
    }

    /// Load a transport-header field (ports, flags …) into register 1.
    pub fn th(&mut self, offset: u32, len: u32) {
        self.payload(base::TRANSPORT, offset, len);
    }

    /// Load a network-header field into register 1.
    pub fn nh(&mut self, offset: u32, len: u32) {
        self.payload(base::NETWORK, offset, len);
    }

    /// Load a meta key into register 1.
    pub fn meta(&mut self, key: u32) {
        self.push(Expr::Meta { key, dreg: reg::R1 });
    }

    /// Load a conntrack key (of one direction, if given) into register 1.
    pub fn ct(&mut self, key: u32, dir: Option<u8>) {
        self.push(Expr::Ct {
            key,
            dreg: reg::R1,
            dir,
        });
    }

    /// Load `len` bytes at `offset` of extension header / TCP option `ty`
    /// (in the space `op`, see [`nft::expr::exthdr`]) into register 1; the
    /// rule stops when it is missing.
    pub fn exthdr(&mut self, op: u32, ty: u8, offset: u32, len: u32) {
        self.push(Expr::Exthdr(nft::expr::Exthdr {
            dreg: reg::R1,
            op,
            ty,
            offset,
            len,
            flags: 0,
        }));
    }

    /// Whether extension header / TCP option `ty` exists (`invert`: it
    /// does not).
    pub fn exthdr_exists(&mut self, op: u32, ty: u8, invert: bool) {
        self.push(Expr::Exthdr(nft::expr::Exthdr {
            dreg: reg::R1,
            op,
            ty,
            offset: 0,
            len: 1,
            flags: nft::expr::exthdr::F_PRESENT,
        }));
        self.cmp(CmpOp::Eq, &[u8::from(!invert)]);
    }

    /// Compare register 1 with `data`.
    pub fn cmp(&mut self, op: CmpOp, data: &[u8]) {
        self.push(Expr::Cmp {
            sreg: reg::R1,
            op,
            data: data.to_vec(),
        });
    }

    /// `== data`, or `!= data` when `invert`.
    pub fn eq(&mut self, data: &[u8], invert: bool) {
        self.cmp(if invert { CmpOp::Neq } else { CmpOp::Eq }, data);
    }

    /// `lo <= reg1 <= hi` (inclusive, big-endian bytes), negated if `invert`.
    /// Equal bounds become a plain comparison.
    pub fn range(&mut self, lo: &[u8], hi: &[u8], invert: bool) {
        if lo == hi {
            self.eq(lo, invert);
        } else {
            self.push(Expr::Range {
                sreg: reg::R1,
                neq: invert,
                from: lo.to_vec(),
                to: hi.to_vec(),
            });
        }
    }

    /// `reg1 = reg1 & mask` over `mask.len()` bytes.
    pub fn mask(&mut self, mask: &[u8]) {
        self.push(Expr::Bitwise {
            sreg: reg::R1,
            dreg: reg::R1,
            len: mask.len() as u32,
            mask: mask.to_vec(),
            xor: vec![0; mask.len()],
        });
    }

    /// `(reg1 & mask) == value` (or `!=`), skipping the mask when it is all
    /// ones, and the whole test when the mask is zero and not inverted.
    pub fn masked_eq(&mut self, value: &[u8], mask: &[u8], invert: bool) {
        if mask.iter().all(|&b| b == 0xff) {
            self.eq(value, invert);
        } else {
            self.mask(mask);
            let v: Vec<u8> = value.iter().zip(mask).map(|(v, m)| v & m).collect();
            self.eq(&v, invert);
        }
    }

    /// Add an anonymous constant set and a `lookup` of register 1 in it
    /// (`invert`: match when NOT in the set). Lookups name the set
    /// `__nfk_set<index>`; [`AnonSet`] says how the caller creates it.
    pub fn lookup_anon(&mut self, mut set: AnonSet, invert: bool) {
        let index = self.sets.len() as u32;
        set.index = index;
        self.sets.push(set);
        self.push(Expr::Lookup {
            set: format!("__nfk_set{index}"),
            set_id: Some(index),
            sreg: reg::R1,
            dreg: None,
            flags: invert.then_some(nft::expr::LOOKUP_F_INV),
        });
    }

    /// Add an anonymous constant map and a `lookup` of register 1 in it
    /// that loads the value into register 1 (the rule ends when the key
    /// is not in the map). Named as in [`Cx::lookup_anon`].
    pub fn map_anon(&mut self, mut set: AnonSet) {
        let index = self.sets.len() as u32;
        set.index = index;
        self.sets.push(set);
        self.push(Expr::Lookup {
            set: format!("__nfk_set{index}"),
            set_id: Some(index),
            sreg: reg::R1,
            dreg: Some(reg::R1),
            flags: None,
        });
    }

    /// Refer to the stateful object `obj` (`objref` by name), listing it
    /// once among the rule's objects.
    pub fn objref(&mut self, obj: RuleObject) {
        self.push(Expr::Objref(nft::expr::Objref {
            ty: obj.data.ty(),
            name: obj.name.clone(),
        }));
        if !self.objects.contains(&obj) {
            self.objects.push(obj);
        }
    }

    pub fn verdict(&mut self, v: Verdict) {
        self.push(Expr::Immediate {
            dreg: reg::VERDICT,
            data: Data::Verdict(v),
        });
    }
}

/// Lower `rule`, which goes into `chain` of `table` (`family`), knowing
/// no ipsets (`-m set` and `-j SET` have no native form).
pub fn lower_rule(rule: &Rule, family: Family, table: TableKind, chain: &str) -> Result<Lowered> {
    lower_rule_with(rule, family, table, chain, &NoIpsets)
}

/// Lower `rule` as [`lower_rule`] does, with nfkeeper's `ipsets`.
pub fn lower_rule_with(
    rule: &Rule,
    family: Family,
    table: TableKind,
    chain: &str,
    ipsets: &dyn Ipsets,
) -> Result<Lowered> {
    let mut cx = Cx::new(family, table, chain, rule);
    cx.ipsets = ipsets;
    header::lower(&mut cx);
    let mut compat = false;
    for m in &rule.matches {
        compat |= native_or_compat(
            &mut cx,
            |cx| lower_match(m, cx),
            || {
                let Some(c) = crate::compat::matches::info(m, family) else {
                    return Err(None);
                };
                if let Some(why) = tables::refusal(tables::Kind::Match, c.name, table) {
                    return Err(Some(why));
                }
                Ok(Expr::Match {
                    name: c.name.to_string(),
                    rev: c.rev,
                    info: c.info,
                })
            },
        )?;
    }
    cx.push(Expr::Counter {
        bytes: 0,
        packets: 0,
    });
    match &rule.target {
        Target::None => {}
        Target::Accept => cx.verdict(Verdict::Accept),
        Target::Drop => cx.verdict(Verdict::Drop),
        Target::Return => cx.verdict(Verdict::Return),
        Target::Jump(c) => cx.verdict(Verdict::Jump(c.to_string())),
        Target::Goto(c) => cx.verdict(Verdict::Goto(c.to_string())),
        Target::Ext(t) => {
            compat |= native_or_compat(
                &mut cx,
                |cx| lower_target(t, cx),
                || match crate::compat::targets::info(t, family) {
                    Some(c) => Ok(Expr::Target {
                        name: c.name.to_string(),
                        rev: c.rev,
                        info: c.info,
                    }),
                    None => Err(tables::refusal(tables::Kind::Target, t.name(), table)),
                },
            )?
        }
    }
    // The kernel's xtables checks of a compat extension see the rule's
    // protocol (and its inversion) only through NFTA_RULE_COMPAT.
    let compat = compat.then(|| {
        nft::RuleCompat::new(
            u32::from(rule.proto),
            rule.inverted(iptables::rule::inv::PROTO),
        )
    });
    Ok(Lowered {
        exprs: cx.out,
        sets: cx.sets,
        objects: cx.objects,
        compat,
        ipsets: cx.ipset_refs,
    })
}

/// Lower natively with `native`; when that has no form for it, put the
/// xtables extension's nft_compat expression from `compat` in its place
/// instead (whatever `native` left behind is dropped). `compat` fails with
/// `None` when the extension has no compat form, and with the reason when
/// the kernel would refuse it (that reason then joins the native one).
/// Returns whether the compat form was used.
fn native_or_compat(
    cx: &mut Cx,
    native: impl FnOnce(&mut Cx) -> Result<()>,
    compat: impl FnOnce() -> std::result::Result<Expr, Option<String>>,
) -> Result<bool> {
    let (out, sets, objects) = (cx.out.len(), cx.sets.len(), cx.objects.len());
    match native(cx) {
        Ok(()) => Ok(false),
        Err(LowerError::NotNative { what, why }) => {
            cx.out.truncate(out);
            cx.sets.truncate(sets);
            cx.objects.truncate(objects);
            match compat() {
                Ok(x) => {
                    cx.push(x);
                    Ok(true)
                }
                Err(None) => Err(LowerError::NotNative { what, why }),
                Err(Some(refused)) => Err(LowerError::NotNative {
                    what,
                    why: format!("{why}; and {refused}"),
                }),
            }
        }
        Err(e @ LowerError::NoSet(_)) => Err(e),
    }
}

impl RuleObject {
    /// The object for a batch, in `table` of `family`.
    pub fn to_nft(&self, family: nft::Family, table: &str) -> nft::expr::objref::Obj {
        nft::expr::objref::Obj::new(family, table, &self.name, self.data.clone())
    }
}

impl AnonSet {
    /// The set and its elements for a batch: name `__nfk_set<index>`, the
    /// given batch-unique `id`, anonymous and constant. Lookups emitted by
    /// [`Cx::lookup_anon`] carry `set_id = index`; the caller rewrites them
    /// with [`rebase_lookups`] when it numbers sets across a batch.
    pub fn to_nft(&self, family: nft::Family, table: &str, id: u32) -> (nft::Set, nft::SetElems) {
        use nft::set::flags;
        let name = format!("__nfk_set{id}");
        let mut s = nft::Set::new(family, table, &name);
        let mut f = flags::ANONYMOUS | flags::CONSTANT;
        if self.interval {
            f |= flags::INTERVAL;
        }
        s.key_type = Some(self.key_type);
        s.key_len = Some(self.key_len);
        if let Some(m) = &self.map {
            f |= flags::MAP;
            s.data_type = Some(m.data_type);
            s.data_len = Some(m.data_len);
        }
        s.flags = Some(f);
        s.id = Some(id);
        s.size = Some(self.elems.len() as u32);
        // Interval sets take each range as two elements: its start, and an
        // end marker (flag INTERVAL_END) one past its last value; a range
        // that runs to the top of the key space has no end marker.
        let mut elems = Vec::with_capacity(self.elems.len() * 2);
        for (i, (k, end)) in self.elems.iter().enumerate() {
            let mut e = nft::SetElem::key(k);
            if let Some(m) = &self.map {
                e.data = Some(Data::Value(m.values[i].clone()));
            }
            elems.push(e);
            if self.interval {
                let hi = end.as_ref().unwrap_or(k);
                if let Some(next) = be_increment(hi) {
                    let mut e = nft::SetElem::key(&next);
                    e.flags = Some(nft::setelem::F_INTERVAL_END);
                    elems.push(e);
                }
            }
        }
        let mut es = nft::SetElems::new(family, table, &name, elems);
        es.set_id = Some(id);
        (s, es)
    }
}

/// `v + 1` for a big-endian number, `None` on overflow (all ones).
fn be_increment(v: &[u8]) -> Option<Vec<u8>> {
    let mut out = v.to_vec();
    for b in out.iter_mut().rev() {
        if *b == 0xff {
            *b = 0;
        } else {
            *b += 1;
            return Some(out);
        }
    }
    None
}

/// Renumber a rule's anonymous-set lookups: set index `i` becomes batch id
/// `first_id + i` (name `__nfk_set<first_id + i>`).
pub fn rebase_lookups(exprs: &mut [Expr], first_id: u32) {
    for e in exprs {
        if let Expr::Lookup {
            set,
            set_id: Some(i),
            ..
        } = e
        {
            if set.starts_with("__nfk_set") {
                *i += first_id;
                *set = format!("__nfk_set{i}");
            }
        }
    }
}

fn lower_match(m: &Match, cx: &mut Cx) -> Result<()> {
    use matches as l;
    match m {
        Match::Tcp(x) => l::tcp::lower(x, cx),
        Match::Udp(x) => l::udp::lower(x, cx),
        Match::Icmp(x) => l::icmp::lower(x, cx),
        Match::Icmp6(x) => l::icmp6::lower(x, cx),
        Match::Sctp(x) => l::sctp::lower(x, cx),
        Match::Multiport(x) => l::multiport::lower(x, cx),
        Match::Conntrack(x) => l::conntrack::lower(x, cx),
        Match::State(x) => l::state::lower(x, cx),
        Match::Comment(x) => l::comment::lower(x, cx),
        Match::Limit(x) => l::limit::lower(x, cx),
        Match::Recent(x) => l::recent::lower(x, cx),
        Match::Addrtype(x) => l::addrtype::lower(x, cx),
        Match::Iprange(x) => l::iprange::lower(x, cx),
        Match::Mac(x) => l::mac::lower(x, cx),
        Match::Mark(x) => l::mark::lower(x, cx),
        Match::Connmark(x) => l::connmark::lower(x, cx),
        Match::Set(x) => l::set::lower(x, cx),
        Match::Statistic(x) => l::statistic::lower(x, cx),
        Match::Nfacct(x) => l::nfacct::lower(x, cx),
        Match::Rpfilter(x) => l::rpfilter::lower(x, cx),
        Match::Ttl(x) => l::ttl::lower(x, cx),
        Match::Hl(x) => l::hl::lower(x, cx),
        Match::Length(x) => l::length::lower(x, cx),
        Match::Pkttype(x) => l::pkttype::lower(x, cx),
        Match::Owner(x) => l::owner::lower(x, cx),
        Match::Physdev(x) => l::physdev::lower(x, cx),
        Match::Tos(x) => l::tos::lower(x, cx),
        Match::Dscp(x) => l::dscp::lower(x, cx),
        Match::Ah(x) => l::ah::lower(x, cx),
        Match::Esp(x) => l::esp::lower(x, cx),
        Match::Frag(x) => l::frag::lower(x, cx),
        // The matches nfkeeper runs only through nft_compat (crate::compat),
        // which the lowering does not use yet.
        other => Err(LowerError::not_native(
            format!("-m {}", other.name()),
            "it runs through nft_compat, which is not wired into the lowering yet",
        )),
    }
}

fn lower_target(t: &TargetExt, cx: &mut Cx) -> Result<()> {
    use targets as l;
    match t {
        TargetExt::Trace(x) => l::trace::lower(x, cx),
        TargetExt::Reject(x) => l::reject::lower(x, cx),
        TargetExt::Log(x) => l::log::lower(x, cx),
        TargetExt::Nflog(x) => l::nflog::lower(x, cx),
        TargetExt::Masquerade(x) => l::masquerade::lower(x, cx),
        TargetExt::Snat(x) => l::snat::lower(x, cx),
        TargetExt::Dnat(x) => l::dnat::lower(x, cx),
        TargetExt::Redirect(x) => l::redirect::lower(x, cx),
        TargetExt::Mark(x) => l::mark::lower(x, cx),
        TargetExt::Connmark(x) => l::connmark::lower(x, cx),
        TargetExt::Ct(x) => l::ct::lower(x, cx),
        TargetExt::Notrack(x) => l::notrack::lower(x, cx),
        TargetExt::Tcpmss(x) => l::tcpmss::lower(x, cx),
        TargetExt::Checksum(x) => l::checksum::lower(x, cx),
        TargetExt::Tos(x) => l::tos::lower(x, cx),
        TargetExt::Dscp(x) => l::dscp::lower(x, cx),
        TargetExt::Ttl(x) => l::ttl::lower_ttl(x, cx),
        TargetExt::Hl(x) => l::ttl::lower_hl(x, cx),
        TargetExt::Ecn(x) => l::ecn::lower(x, cx),
        TargetExt::Tee(x) => l::tee::lower(x, cx),
        TargetExt::Netmap(x) => l::netmap::lower(x, cx),
        TargetExt::Secmark(x) => l::secmark::lower(x, cx),
        TargetExt::Connsecmark(x) => l::connsecmark::lower(x, cx),
        TargetExt::Tcpoptstrip(x) => l::tcpoptstrip::lower(x, cx),
        TargetExt::Tproxy(x) => l::tproxy::lower(x, cx),
        TargetExt::Synproxy(x) => l::synproxy::lower(x, cx),
        TargetExt::Snpt(x) => l::npt::lower_snpt(x, cx),
        TargetExt::Dnpt(x) => l::npt::lower_dnpt(x, cx),
        TargetExt::Set(x) => l::set::lower(x, cx),
        // The targets nfkeeper runs only through nft_compat (crate::compat).
        other => Err(LowerError::not_native(
            other.name(),
            "the kernel's xtables target runs it (nft_compat)",
        )),
    }
}

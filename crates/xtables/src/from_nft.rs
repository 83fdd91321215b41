//! iptables-nft's tables (nf_tables tables `filter`, `nat`, `mangle`,
//! `raw`, `security` of families ip and ip6) read back into nfkeeper's
//! iptables model, the way iptables-nft 1.8.x writes its rules: a few
//! native expression shapes (interfaces, `-p`, addresses, `-f`, tcp/udp
//! ports and flags, `-m mark`, `-m limit`, counter, verdicts), the rule
//! comment in the rule's user data, and nft_compat `match`/`target`
//! expressions, whose infos have the legacy layout and go through
//! [`crate::decode`]. Any other shape refuses the whole table with where
//! it is and why; nothing is approximated.
//!
//! [`read`] is the only I/O (dumps over an [`nft::Socket`]); [`rule`]
//! decodes one rule's expressions and is pure.

use crate::decode::{matches, targets, Chain, Table, Undecodable};
use iptables::ext::matches as m;
use iptables::ext::targets as t;
use iptables::ext::{Match, TargetExt};
use iptables::rule::{inv, Addr, Iface, Rule, Target};
use nft::expr::{base, meta, CmpOp};
use nft::{Data, Expr, Verdict};
use ruleset::{Counters, Family, TableKind};

/// The table names iptables-nft creates.
pub const TABLES: &[&str] = &["filter", "nat", "mangle", "raw", "security"];

/// nf_tables' family of `family`.
pub fn nft_family(family: Family) -> nft::Family {
    match family {
        Family::Ipv4 => nft::Family::Ipv4,
        Family::Ipv6 => nft::Family::Ipv6,
    }
}

/// A table as read: its decoded rules and what identifies its content
/// (chains and rules without counters), to tell later whether it changed.
pub struct Read {
    pub name: String,
    pub table: Table,
    pub print: Fingerprint,
}

/// Chains (name, hook, policy) and rules (chain, handle, expressions with
/// counters zeroed, user data) of one table, in dump order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    chains: Vec<(String, Option<u32>, Option<u32>)>,
    rules: Vec<nft::Rule>,
}

/// The iptables-nft tables of `family` this namespace has (names from
/// [`TABLES`] only, in that order).
pub fn table_names(sock: &mut nft::Socket, family: Family) -> Result<Vec<String>, String> {
    let have = sock
        .tables(nft_family(family))
        .map_err(|e| format!("cannot list the nf_tables tables: {e}"))?;
    Ok(TABLES
        .iter()
        .filter(|n| have.iter().any(|t| t.name == **n))
        .map(|n| n.to_string())
        .collect())
}

/// What table `name` holds now, undecoded (for the check before deleting).
pub fn fingerprint(
    sock: &mut nft::Socket,
    family: Family,
    name: &str,
) -> Result<Fingerprint, String> {
    let (chains, rules) = dump(sock, family, name)?;
    Ok(print_of(&chains, &rules))
}

fn dump(
    sock: &mut nft::Socket,
    family: Family,
    name: &str,
) -> Result<(Vec<nft::Chain>, Vec<nft::Rule>), String> {
    let fam = nft_family(family);
    // Filtered here too: not every kernel filters a chain dump by table.
    let mut chains = sock
        .chains(fam, Some(name))
        .map_err(|e| format!("cannot read the chains of table {name}: {e}"))?;
    chains.retain(|c| c.table == name);
    let mut rules = Vec::new();
    sock.rules(fam, Some(name), None, |r| {
        if r.table == name {
            rules.push(r.to_rule()?);
        }
        Ok(())
    })
    .map_err(|e| format!("cannot read the rules of table {name}: {e}"))?;
    Ok((chains, rules))
}

fn print_of(chains: &[nft::Chain], rules: &[nft::Rule]) -> Fingerprint {
    let zero = |e: &Expr| match e {
        Expr::Counter { .. } => Expr::Counter {
            bytes: 0,
            packets: 0,
        },
        e => e.clone(),
    };
    Fingerprint {
        chains: chains
            .iter()
            .map(|c| (c.name.clone(), c.hook.as_ref().map(|h| h.num), c.policy))
            .collect(),
        rules: rules
            .iter()
            .map(|r| nft::Rule {
                exprs: r.exprs.iter().map(zero).collect(),
                ..r.clone()
            })
            .collect(),
    }
}

/// Read table `name` of `family` and decode it: built-in chains in hook
/// order, then user chains in dump order.
pub fn read(sock: &mut nft::Socket, family: Family, name: &str) -> Result<Read, Undecodable> {
    let at = |chain: &str, rule: usize, what: &str, why: String| Undecodable {
        table: name.to_string(),
        chain: chain.to_string(),
        rule,
        what: what.to_string(),
        why,
    };
    let kind = TableKind::from_name(name)
        .ok_or_else(|| at("-", 0, "table", "not a table iptables-nft creates".into()))?;
    let (raw_chains, raw_rules) = dump(sock, family, name).map_err(|e| at("-", 0, "table", e))?;
    let print = print_of(&raw_chains, &raw_rules);
    let mut base_chains = Vec::new();
    let mut user = Vec::new();
    for c in &raw_chains {
        match &c.hook {
            Some(h) => {
                if !kind.builtin_chains().contains(&c.name.as_str()) {
                    return Err(at(
                        &c.name,
                        0,
                        "chain",
                        "a base chain iptables-nft does not create".into(),
                    ));
                }
                let policy = match c.policy {
                    Some(nft::chain::POLICY_DROP) => Target::Drop,
                    None | Some(nft::chain::POLICY_ACCEPT) => Target::Accept,
                    Some(p) => return Err(at(&c.name, 0, "policy", format!("verdict {p}"))),
                };
                let (packets, bytes) = c.counters.unwrap_or((0, 0));
                base_chains.push((
                    h.num,
                    Chain {
                        name: c.name.clone(),
                        policy: Some((policy, Counters { packets, bytes })),
                        rules: Vec::new(),
                    },
                ));
            }
            None => user.push(Chain {
                name: c.name.clone(),
                policy: None,
                rules: Vec::new(),
            }),
        }
    }
    base_chains.sort_by_key(|(n, _)| *n);
    let mut chains: Vec<Chain> = base_chains.into_iter().map(|(_, c)| c).collect();
    chains.extend(user);
    for r in &raw_rules {
        let Some(c) = chains.iter_mut().find(|c| c.name == r.chain) else {
            return Err(at(&r.chain, 0, "rule", "its chain was not listed".into()));
        };
        let n = c.rules.len() + 1;
        let decoded = rule(family, &r.exprs, r.userdata.as_deref())
            .map_err(|(what, why)| at(&r.chain, n, &what, why))?;
        crate::decode::reads_back(family, kind, &r.chain, &decoded.0)
            .map_err(|why| at(&r.chain, n, "rule", why))?;
        c.rules.push(decoded);
    }
    Ok(Read {
        name: name.to_string(),
        table: Table { kind, chains },
        print,
    })
}

/// What register 1 holds, loaded and not yet compared.
#[derive(Clone, Debug)]
enum Load {
    Meta(u32),
    Payload { base: u32, offset: u32, len: u32 },
}

/// Why a rule is not decoded: (`rule`, `match NAME` or `target NAME`; why).
type Why = (String, String);

/// `NFT_META_NFTRACE`.
const NFTRACE: u32 = 12;

fn shape_why(e: &Expr, why: String) -> Why {
    ("rule".into(), format!("expression {e:?}: {why}"))
}

fn shape(e: &Expr) -> Why {
    ("rule".into(), format!("expression {e:?} is not decoded"))
}

/// One rule's expressions (and user data) as iptables-nft 1.8.x writes
/// them, into the model with its counters. O(expressions).
pub fn rule(family: Family, exprs: &[Expr], udata: Option<&[u8]>) -> Result<(Rule, Counters), Why> {
    let v6 = family == Family::Ipv6;
    let (src_at, dst_at, alen) = if v6 { (8, 24, 16) } else { (12, 16, 4) };
    let mut r = Rule::default();
    let mut n = Counters::default();
    let mut load: Option<Load> = None;
    let mut mask: Option<Vec<u8>> = None;
    // Index in `r.matches` of the tcp/udp match native port loads fill.
    let mut l4: Option<usize> = None;
    let mut verdict = false;
    // The register `-j TRACE`'s value was loaded into.
    let mut trace: Option<u32> = None;
    for e in exprs {
        if verdict {
            return Err(("rule".into(), "an expression after the verdict".into()));
        }
        match e {
            Expr::Meta { key, dreg: 1 } => {
                // A name load nothing compares is `-i +` (any interface).
                load = Some(Load::Meta(*key));
                mask = None;
            }
            Expr::Payload {
                dreg: 1,
                base,
                offset,
                len,
            } => {
                load = Some(Load::Payload {
                    base: *base,
                    offset: *offset,
                    len: *len,
                });
                mask = None;
            }
            Expr::Bitwise {
                sreg: 1,
                dreg: 1,
                len,
                mask: m,
                xor,
            } if load.is_some() && xor.iter().all(|b| *b == 0) && m.len() == *len as usize => {
                mask = Some(m.clone());
            }
            Expr::Cmp { sreg: 1, op, data } => {
                let l = load.take().ok_or_else(|| shape(e))?;
                let mk = mask.take();
                compare(
                    &mut r,
                    &mut l4,
                    &l,
                    mk.as_deref(),
                    *op,
                    data,
                    (src_at, dst_at, alen),
                )
                .ok_or_else(|| shape(e))?;
            }
            Expr::Range {
                sreg: 1,
                neq,
                from,
                to,
            } => {
                let l = load.take().ok_or_else(|| shape(e))?;
                if mask.take().is_some() {
                    return Err(shape(e));
                }
                let (Some(a), Some(b)) = (port(from), port(to)) else {
                    return Err(shape(e));
                };
                set_port(&mut r, &mut l4, &l, (a, b), *neq).ok_or_else(|| shape(e))?;
            }
            Expr::Counter { bytes, packets } => {
                n = Counters {
                    packets: *packets,
                    bytes: *bytes,
                }
            }
            Expr::Limit {
                rate,
                unit,
                burst,
                ty: 0,
                flags: 0,
            } if *rate > 0 => {
                // iptables-nft writes `rate` per `unit` seconds from the
                // info's `avg` (1/10000 s per packet) and reads it back as
                // 10000 * unit / rate.
                let avg = u32::try_from(10_000 * unit / rate).map_err(|_| shape(e))?;
                r.matches
                    .push(Match::Limit(m::limit::Limit { avg, burst: *burst }));
            }
            Expr::Match { name, rev, info } => {
                let what = format!("match {name}");
                let rev =
                    u8::try_from(*rev).map_err(|_| (what.clone(), format!("revision {rev}")))?;
                let d = matches::decode(family, name, rev, info).map_err(|x| (what, x.0))?;
                r.matches.push(d);
            }
            Expr::Target { name, rev, info } => {
                let what = format!("target {name}");
                let rev =
                    u8::try_from(*rev).map_err(|_| (what.clone(), format!("revision {rev}")))?;
                let t = targets::decode(family, name, rev, info).map_err(|x| (what, x.0))?;
                r.target = Target::Ext(Box::new(t));
                verdict = true;
            }
            // `-j TRACE`, which iptables-nft writes as `meta nftrace set 1`:
            // the value into a register, then the set.
            Expr::Immediate {
                dreg,
                data: Data::Value(v),
            } if *dreg != 0 && v.as_slice() == [1] => trace = Some(*dreg),
            Expr::MetaSet { key: NFTRACE, sreg } if trace == Some(*sreg) => {
                trace = None;
                let t = targets::decode(family, "TRACE", 0, &[]).map_err(|x| shape_why(e, x.0))?;
                r.target = Target::Ext(Box::new(t));
                verdict = true;
            }
            // `-j NFLOG`, which iptables-nft writes as a native log.
            Expr::Log {
                group: Some(group),
                prefix,
                snaplen,
                qthreshold,
                level: None,
                flags: None,
            } => {
                r.target = Target::Ext(Box::new(TargetExt::Nflog(t::nflog::Nflog {
                    group: *group,
                    prefix: prefix.clone().unwrap_or_default(),
                    size: *snaplen,
                    threshold: qthreshold.unwrap_or(0),
                })));
                verdict = true;
            }
            Expr::Immediate {
                dreg: 0,
                data: Data::Verdict(v),
            } => {
                r.target = match v {
                    Verdict::Accept => Target::Accept,
                    Verdict::Drop => Target::Drop,
                    Verdict::Return => Target::Return,
                    Verdict::Jump(c) => Target::Jump(c.as_str().into()),
                    Verdict::Goto(c) => Target::Goto(c.as_str().into()),
                    _ => return Err(shape(e)),
                };
                verdict = true;
            }
            _ => return Err(shape(e)),
        }
    }
    if trace.is_some() {
        return Err(("rule".into(), "an immediate value nothing uses".into()));
    }
    match load {
        None | Some(Load::Meta(meta::IIFNAME | meta::OIFNAME)) => {}
        Some(l) => return Err(("rule".into(), format!("a load of {l:?} nothing compares"))),
    }
    if let Some(text) = udata.map(comment).transpose()?.flatten() {
        r.matches.push(Match::Comment(m::comment::Comment { text }));
    }
    Ok((r, n))
}

/// The comment of the rule's user data (`NFTNL_UDATA_RULE_COMMENT`, type
/// 0, a NUL-terminated string); other types are refused.
fn comment(u: &[u8]) -> Result<Option<String>, Why> {
    let bad = |why: &str| ("rule".to_string(), format!("user data: {why}"));
    let mut text = None;
    let mut i = 0;
    while i < u.len() {
        let (ty, len) = (
            u[i],
            *u.get(i + 1).ok_or_else(|| bad("truncated"))? as usize,
        );
        let v = u.get(i + 2..i + 2 + len).ok_or_else(|| bad("truncated"))?;
        if ty != 0 {
            return Err(bad(&format!("type {ty}")));
        }
        let s = v.split(|b| *b == 0).next().unwrap_or(&[]);
        text = Some(String::from_utf8(s.to_vec()).map_err(|_| bad("not UTF-8"))?);
        i += 2 + len;
    }
    Ok(text)
}

fn port(b: &[u8]) -> Option<u16> {
    Some(u16::from_be_bytes(b.try_into().ok()?))
}

/// A comparison of what `l` loaded. `None`: not a shape iptables-nft writes.
fn compare(
    r: &mut Rule,
    l4: &mut Option<usize>,
    l: &Load,
    mk: Option<&[u8]>,
    op: CmpOp,
    data: &[u8],
    (src_at, dst_at, alen): (u32, u32, usize),
) -> Option<()> {
    let neq = match op {
        CmpOp::Eq => false,
        CmpOp::Neq => true,
        CmpOp::Lte | CmpOp::Gte
            if matches!(
                l,
                Load::Payload {
                    base: base::TRANSPORT,
                    len: 2,
                    ..
                }
            ) =>
        {
            let p = port(data)?;
            let range = if op == CmpOp::Lte {
                (0, p)
            } else {
                (p, u16::MAX)
            };
            return set_port(r, l4, l, range, false);
        }
        _ => return None,
    };
    match *l {
        Load::Meta(k @ (meta::IIFNAME | meta::OIFNAME)) if mk.is_none() => {
            let name = data.split(|b| *b == 0).next()?;
            let exact = name.len() < data.len();
            let mut s = String::from_utf8(name.to_vec()).ok()?;
            if !exact {
                s.push('+');
            }
            let (f, bit) = if k == meta::IIFNAME {
                (&mut r.iniface, inv::IN)
            } else {
                (&mut r.outiface, inv::OUT)
            };
            if !f.is_empty() {
                return None;
            }
            *f = Iface::new(&s)?;
            if neq {
                r.inv |= bit;
            }
        }
        Load::Meta(meta::L4PROTO) if mk.is_none() && data.len() == 1 && r.proto == 0 => {
            r.proto = data[0];
            if neq {
                r.inv |= inv::PROTO;
            }
        }
        Load::Meta(meta::MARK) if data.len() == 4 => {
            let mask = match mk {
                Some(b) => u32::from_ne_bytes(b.try_into().ok()?),
                None => u32::MAX,
            };
            r.matches.push(Match::Mark(m::mark::Mark {
                mark: u32::from_ne_bytes(data.try_into().ok()?),
                mask,
                inv: neq,
            }));
        }
        Load::Payload {
            base: base::NETWORK,
            offset,
            len,
        } if (offset == src_at || offset == dst_at) && len as usize <= alen => {
            let len = len as usize;
            if data.len() != len {
                return None;
            }
            let mut a = Addr::default();
            a.addr[..len].copy_from_slice(data);
            match mk {
                Some(b) if b.len() == len => a.mask[..len].copy_from_slice(b),
                Some(_) => return None,
                None => a.mask[..len].fill(0xff),
            }
            let (f, bit) = if offset == src_at {
                (&mut r.src, inv::SRC)
            } else {
                (&mut r.dst, inv::DST)
            };
            if !f.is_any() {
                return None;
            }
            *f = a;
            if neq {
                r.inv |= bit;
            }
        }
        // `-f`: the fragment offset (13 bits at +6) is not zero.
        Load::Payload {
            base: base::NETWORK,
            offset: 6,
            len: 2,
        } if alen == 4 && mk == Some(&[0x1f, 0xff]) && data == [0, 0] && !r.frag => {
            r.frag = true;
            if !neq {
                r.inv |= inv::FRAG;
            }
        }
        Load::Payload {
            base: base::TRANSPORT,
            offset: 0,
            len: 4,
        } if mk.is_none() && !neq && data.len() == 4 => {
            let (s, d) = (port(&data[..2])?, port(&data[2..])?);
            let sl = Load::Payload {
                base: base::TRANSPORT,
                offset: 0,
                len: 2,
            };
            set_port(r, l4, &sl, (s, s), false)?;
            let dl = Load::Payload {
                base: base::TRANSPORT,
                offset: 2,
                len: 2,
            };
            set_port(r, l4, &dl, (d, d), false)?;
        }
        Load::Payload {
            base: base::TRANSPORT,
            offset: 2 | 0,
            len: 2,
        } if mk.is_none() => {
            let p = port(data)?;
            set_port(r, l4, l, (p, p), neq)?;
        }
        // tcp `--tcp-flags MASK COMP` (`--syn`): the flags byte at +13.
        Load::Payload {
            base: base::TRANSPORT,
            offset: 13,
            len: 1,
        } if r.proto == 6 && data.len() == 1 => {
            let mask = mk?;
            let i = l4_match(r, l4)?;
            let Match::Tcp(t) = &mut r.matches[i] else {
                return None;
            };
            (t.flg_mask, t.flg_cmp, t.inv_flags) = (mask[0], data[0], neq);
        }
        _ => return None,
    }
    Some(())
}

/// The rule's native tcp/udp match (made at the first port or flag load,
/// where iptables-nft's `-m tcp`/`-m udp` sits among the matches).
fn l4_match(r: &mut Rule, l4: &mut Option<usize>) -> Option<usize> {
    if let Some(i) = *l4 {
        return Some(i);
    }
    if r.inv & inv::PROTO != 0 {
        return None;
    }
    let any = (0, u16::MAX);
    let mt = match r.proto {
        6 => Match::Tcp(m::tcp::Tcp {
            spts: any,
            dpts: any,
            option: 0,
            flg_mask: 0,
            flg_cmp: 0,
            inv_sport: false,
            inv_dport: false,
            inv_flags: false,
            inv_option: false,
        }),
        17 => Match::Udp(m::udp::Udp {
            spts: any,
            dpts: any,
            inv_sport: false,
            inv_dport: false,
        }),
        _ => return None,
    };
    r.matches.push(mt);
    *l4 = Some(r.matches.len() - 1);
    *l4
}

/// Port range `range` (inverted if `neq`) of the source (+0) or
/// destination (+2) port.
fn set_port(
    r: &mut Rule,
    l4: &mut Option<usize>,
    l: &Load,
    range: (u16, u16),
    neq: bool,
) -> Option<()> {
    let Load::Payload {
        base: base::TRANSPORT,
        offset,
        len: 2,
    } = *l
    else {
        return None;
    };
    let src = match offset {
        0 => true,
        2 => false,
        _ => return None,
    };
    let i = l4_match(r, l4)?;
    let any = (0, u16::MAX);
    let (pts, inv) = match &mut r.matches[i] {
        Match::Tcp(t) if src => (&mut t.spts, &mut t.inv_sport),
        Match::Tcp(t) => (&mut t.dpts, &mut t.inv_dport),
        Match::Udp(u) if src => (&mut u.spts, &mut u.inv_sport),
        Match::Udp(u) => (&mut u.dpts, &mut u.inv_dport),
        _ => return None,
    };
    if *pts != any || *inv {
        return None;
    }
    (*pts, *inv) = (range, neq);
    Some(())
}

/// The tables deleted, and those left with why.
pub type Deleted = (Vec<String>, Vec<(String, String)>);

/// Delete the tables of `family` in `read` that still hold what was read
/// (counters aside), in one transaction bound to the generation seen at
/// the re-read (a commit by anyone in between refuses it, `ERESTART`).
/// Returns the names deleted and, for each left, why.
pub fn delete_unchanged(
    sock: &mut nft::Socket,
    family: Family,
    read: &[(&str, &Fingerprint)],
) -> Result<Deleted, String> {
    let genid = sock
        .gen()
        .map_err(|e| format!("cannot read the ruleset generation: {e}"))?
        .id;
    let mut gone = Vec::new();
    let mut left = Vec::new();
    for &(name, print) in read {
        if fingerprint(sock, family, name)? == *print {
            gone.push(name.to_string());
        } else {
            left.push((name.to_string(), "it changed since it was read".to_string()));
        }
    }
    if gone.is_empty() {
        return Ok((gone, left));
    }
    let mut b = sock.batch(Some(genid));
    for (i, n) in gone.iter().enumerate() {
        b.delete(&nft::Table::new(nft_family(family), n), i as nft::Tag);
    }
    let rep = sock
        .commit(&mut b)
        .map_err(|e| format!("deleting the tables failed: {e}"))?;
    if !rep.outcome.is_ok() {
        let why = match rep.outcome.errors.first() {
            Some(e) if e.code.abs() == libc::ERESTART => {
                "the ruleset changed since it was read".to_string()
            }
            Some(e) => format!(
                "deleting it failed: {}",
                std::io::Error::from_raw_os_error(e.code.abs())
            ),
            None => "the kernel did not confirm the deletion".to_string(),
        };
        left.extend(gone.drain(..).map(|n| (n, why.clone())));
    }
    Ok((gone, left))
}

#[cfg(test)]
#[path = "from_nft_tests.rs"]
mod tests;

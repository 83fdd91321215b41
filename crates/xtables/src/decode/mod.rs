//! A table read from the kernel (see [`crate::table`]) into nfkeeper's
//! iptables model: the address part into `iptables::Rule`, each match and
//! target info through [`matches`] and [`targets`]. Anything not decoded
//! refuses the whole table with where it is (table, chain, rule number,
//! extension) and why; nothing is approximated.

pub mod matches;
pub mod more_matches;
pub mod more_targets;
pub mod targets;

use crate::entry::{cstr, flags, IpPart};
use crate::table::{RawChain, RawTarget, Verdict};
use iptables::rule::{inv, Addr, Iface, Rule, Target};
use ruleset::{Counters, Family, TableKind};
use std::fmt;

/// Why an extension's info is not decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal(pub String);

impl Refusal {
    pub fn new(s: impl Into<String>) -> Refusal {
        Refusal(s.into())
    }

    /// An info whose values the model has no form for.
    pub fn info(s: impl fmt::Display) -> Refusal {
        Refusal(format!("unexpected info ({s})"))
    }
}

/// An info read at fixed offsets. Callers check the length once with
/// [`Reader::need`]; reads past it panic (a decoder bug, not bad input).
pub struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8]) -> Reader<'a> {
        Reader(b)
    }

    pub fn need(&self, n: usize) -> Result<(), Refusal> {
        if self.0.len() < n {
            return Err(Refusal::info(format!(
                "{} bytes, {n} expected",
                self.0.len()
            )));
        }
        Ok(())
    }

    pub fn u8(&self, at: usize) -> u8 {
        self.0[at]
    }

    pub fn u16(&self, at: usize) -> u16 {
        u16::from_ne_bytes([self.0[at], self.0[at + 1]])
    }

    pub fn be16(&self, at: usize) -> u16 {
        u16::from_be_bytes([self.0[at], self.0[at + 1]])
    }

    pub fn u32(&self, at: usize) -> u32 {
        let b = &self.0[at..at + 4];
        u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
    }

    pub fn u64(&self, at: usize) -> u64 {
        let mut b = [0; 8];
        b.copy_from_slice(&self.0[at..at + 8]);
        u64::from_ne_bytes(b)
    }

    pub fn bytes(&self, at: usize, n: usize) -> &'a [u8] {
        &self.0[at..at + n]
    }

    /// An address of `alen` bytes (4 or 16) at `at`, in the model's
    /// 16-byte form (IPv4 in the first 4 bytes, the rest zero).
    pub fn addr(&self, at: usize, alen: usize) -> [u8; 16] {
        let mut a = [0; 16];
        a[..alen].copy_from_slice(&self.0[at..at + alen]);
        a
    }

    /// A `char[cap]` string field.
    pub fn cstr(&self, at: usize, cap: usize) -> Result<String, Refusal> {
        self.need(at + cap)?;
        Ok(cstr(&self.0[at..at + cap]))
    }
}

/// A rule, chain or table that cannot be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undecodable {
    pub table: String,
    pub chain: String,
    /// 1-based, as `iptables -L --line-numbers` counts.
    pub rule: usize,
    /// `match NAME`, `target NAME` or `rule`.
    pub what: String,
    pub why: String,
}

impl fmt::Display for Undecodable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "table {}, chain {}, rule {}: {}: {}",
            self.table, self.chain, self.rule, self.what, self.why
        )
    }
}

/// A chain in the model's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    pub name: String,
    /// Built-in chains' policy.
    pub policy: Option<(Target, Counters)>,
    pub rules: Vec<(Rule, Counters)>,
}

/// A legacy table in the model's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub kind: TableKind,
    pub chains: Vec<Chain>,
}

impl Table {
    /// Nothing to move: no rule, no user chain, every policy ACCEPT.
    pub fn is_empty(&self) -> bool {
        self.chains
            .iter()
            .all(|c| c.rules.is_empty() && matches!(c.policy, Some((Target::Accept, _))))
    }

    pub fn rule_count(&self) -> usize {
        self.chains.iter().map(|c| c.rules.len()).sum()
    }

    /// The table in iptables-save form (`*table`, chains with counters,
    /// `[P:B] -A ...` rules, `COMMIT`), as `iptables-save -c` prints it.
    pub fn save(&self, family: Family, out: &mut String) {
        use iptables::print::save::{save_rule, CounterStyle};
        use std::fmt::Write;
        let _ = writeln!(out, "*{}", self.kind.name());
        for c in &self.chains {
            let (p, n) = match &c.policy {
                Some((t, n)) => (t.name(), *n),
                None => ("-", Counters::default()),
            };
            let _ = writeln!(out, ":{} {p} [{}:{}]", c.name, n.packets, n.bytes);
        }
        for c in &self.chains {
            for (r, n) in &c.rules {
                save_rule(out, family, &c.name, r, *n, CounterStyle::Prefix);
                out.push('\n');
            }
        }
        out.push_str("COMMIT\n");
    }
}

fn counters(c: (u64, u64)) -> Counters {
    Counters {
        packets: c.0,
        bytes: c.1,
    }
}

/// Table `name`'s chains (from [`crate::table::chains`]) in the model.
pub fn table(family: Family, name: &str, raw: &[RawChain]) -> Result<Table, Undecodable> {
    let at = |chain: &str, rule: usize, what: &str, why: String| Undecodable {
        table: name.to_string(),
        chain: chain.to_string(),
        rule,
        what: what.to_string(),
        why,
    };
    let Some(kind) = TableKind::from_name(name) else {
        return Err(at("-", 0, "table", "not a table nfkeeper keeps".into()));
    };
    let mut chains = Vec::with_capacity(raw.len());
    for c in raw {
        let policy = match c.policy {
            None => None,
            Some((v, n)) => Some((
                verdict(v).ok_or_else(|| at(&c.name, 0, "policy", "QUEUE".into()))?,
                counters(n),
            )),
        };
        let mut rules = Vec::with_capacity(c.rules.len());
        for (i, r) in c.rules.iter().enumerate() {
            let mut rule =
                ip_part(family, &r.entry.ip).map_err(|why| at(&c.name, i + 1, "rule", why))?;
            for m in &r.entry.matches {
                let d = matches::decode(family, &m.name, m.rev, &m.data)
                    .map_err(|e| at(&c.name, i + 1, &format!("match {}", m.name), e.0))?;
                rule.matches.push(d);
            }
            rule.target = match &r.target {
                RawTarget::None => Target::None,
                RawTarget::Verdict(v) => verdict(*v).ok_or_else(|| {
                    at(
                        &c.name,
                        i + 1,
                        "target QUEUE",
                        "not supported by nfkeeper".into(),
                    )
                })?,
                RawTarget::Jump(n) => Target::Jump(n.as_str().into()),
                RawTarget::Goto(n) => Target::Goto(n.as_str().into()),
                RawTarget::Ext(t) => Target::Ext(Box::new(
                    targets::decode(family, &t.name, t.rev, &t.data)
                        .map_err(|e| at(&c.name, i + 1, &format!("target {}", t.name), e.0))?,
                )),
            };
            reads_back(family, kind, &c.name, &rule)
                .map_err(|why| at(&c.name, i + 1, "rule", why))?;
            rules.push((rule, counters(r.entry.counters)));
        }
        chains.push(Chain {
            name: c.name.clone(),
            policy,
            rules,
        });
    }
    Ok(Table { kind, chains })
}

/// Whether `rule`'s iptables-save form parses back to `rule` (migrate
/// loads that text; a form that reads back as another rule — iptables'
/// own `-m ipcomp` without `--ipcompspi` is one — would move a different
/// rule). O(rule size).
fn reads_back(family: Family, kind: TableKind, chain: &str, rule: &Rule) -> Result<(), String> {
    use iptables::print::save::{save_rule_body, CounterStyle};
    let mut text = String::new();
    save_rule_body(
        &mut text,
        family,
        rule,
        Counters::default(),
        CounterStyle::None,
    );
    let words = iptables::parse::restore::tokenize(&text).map_err(|e| e.msg)?;
    let mut argv = vec!["-A", chain];
    argv.extend(words.iter().map(String::as_str));
    let o = iptables::parse::ParseOpts {
        family,
        restore: true,
        table: Some(kind),
        prog: "iptables-restore",
    };
    let parsed = iptables::parse::parse(&argv, o).map_err(|e| {
        format!(
            "its save form `{}` does not parse: {}",
            text.trim(),
            e.msg.trim()
        )
    })?;
    match parsed.rules.first() {
        Some(back) if back == rule => Ok(()),
        Some(back) => {
            let mut other = String::new();
            save_rule_body(
                &mut other,
                family,
                back,
                Counters::default(),
                CounterStyle::None,
            );
            Err(format!(
                "its save form `{}` reads back as another rule (`{}`)",
                text.trim(),
                other.trim()
            ))
        }
        None => Err(format!(
            "its save form `{}` reads back as no rule",
            text.trim()
        )),
    }
}

fn verdict(v: Verdict) -> Option<Target> {
    Some(match v {
        Verdict::Accept => Target::Accept,
        Verdict::Drop => Target::Drop,
        Verdict::Return => Target::Return,
        Verdict::Queue => return None,
    })
}

/// The address part (`-s -d -i -o -p -f` and their `!`).
pub fn ip_part(family: Family, ip: &IpPart) -> Result<Rule, String> {
    let alen = if family == Family::Ipv6 { 16 } else { 4 };
    let addr = |a: &[u8; 16], m: &[u8; 16]| {
        let mut x = Addr::default();
        x.addr[..alen].copy_from_slice(&a[..alen]);
        x.mask[..alen].copy_from_slice(&m[..alen]);
        x
    };
    // A mask of all zeros matches every interface (`-i +`), which the
    // model keeps as no interface.
    let iface = |name: &[u8; 16], mask: &[u8; 16]| {
        if *mask == [0; 16] {
            return Ok(Iface::default());
        }
        let s = cstr(name);
        Iface::new(&s).ok_or_else(|| format!("interface name {s:?}"))
    };
    let (proto, frag) = match family {
        Family::Ipv4 => (ip.proto, ip.flags & flags::V4_FRAG != 0),
        Family::Ipv6 => {
            if ip.flags & flags::V6_TOS != 0 {
                return Err("an IPv6 TOS match (ip6tables writes none)".into());
            }
            let given = ip.flags & flags::V6_PROTO != 0;
            (if given { ip.proto } else { 0 }, false)
        }
    };
    let proto = u8::try_from(proto).map_err(|_| format!("protocol {proto}"))?;
    let mut bits = 0;
    for (k, m) in [
        (flags::INV_SRCIP, inv::SRC),
        (flags::INV_DSTIP, inv::DST),
        (flags::INV_VIA_IN, inv::IN),
        (flags::INV_VIA_OUT, inv::OUT),
        (flags::INV_PROTO, inv::PROTO),
        (flags::INV_FRAG, inv::FRAG),
    ] {
        if ip.invflags & k != 0 {
            bits |= m;
        }
    }
    Ok(Rule {
        src: addr(&ip.src, &ip.smsk),
        dst: addr(&ip.dst, &ip.dmsk),
        iniface: iface(&ip.iniface, &ip.iniface_mask)?,
        outiface: iface(&ip.outiface, &ip.outiface_mask)?,
        proto,
        frag,
        inv: bits,
        matches: Vec::new(),
        target: Target::None,
    })
}

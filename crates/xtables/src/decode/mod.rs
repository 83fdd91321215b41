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
pub(crate) fn reads_back(
    family: Family,
    kind: TableKind,
    chain: &str,
    rule: &Rule,
) -> Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::flags as f;
    use iptables::print::save::{save_rule_body, CounterStyle};

    fn saved(family: Family, ip: &IpPart) -> String {
        let rule = ip_part(family, ip).unwrap();
        let mut out = String::new();
        save_rule_body(
            &mut out,
            family,
            &rule,
            Counters::default(),
            CounterStyle::None,
        );
        out
    }

    fn name(s: &str, exact: bool) -> ([u8; 16], [u8; 16]) {
        let (mut n, mut m) = ([0u8; 16], [0u8; 16]);
        n[..s.len()].copy_from_slice(s.as_bytes());
        let covered = if exact { s.len() + 1 } else { s.len() - 1 };
        m[..covered].fill(0xff);
        (n, m)
    }

    /// A hand-built blob through entries, chains and decoding to the
    /// save text; an undecodable rule names where it is.
    #[test]
    #[cfg(target_endian = "little")]
    fn blob_to_save_text() {
        use crate::entry::{error, standard, Ext, Writer};
        use crate::table::{chains, Info};
        let build = |m: Ext| {
            let mut w = Writer::new(Family::Ipv4);
            let mut info = Info {
                valid_hooks: 0b1110,
                ..Info::default()
            };
            let tcp = IpPart {
                proto: 6,
                ..IpPart::default()
            };
            info.hook_entry[1] = w.push(&tcp, &[m], &standard(-2));
            info.underflow[1] = w.push(&IpPart::default(), &[], &standard(-1));
            for h in [2, 3] {
                info.hook_entry[h] = w.push(&IpPart::default(), &[], &standard(-2));
                info.underflow[h] = info.hook_entry[h];
            }
            w.push(&IpPart::default(), &[], &error("ERROR"));
            let entries = crate::entry::parse(Family::Ipv4, &w.blob).unwrap();
            let raw = chains(Family::Ipv4, &info, &entries).unwrap();
            table(Family::Ipv4, "filter", &raw)
        };
        let tcp = Ext {
            name: "tcp".into(),
            rev: 0,
            data: vec![0, 0, 0xff, 0xff, 22, 0, 22, 0, 0, 0, 0, 0],
        };
        let t = build(tcp).unwrap();
        let mut out = String::new();
        t.save(Family::Ipv4, &mut out);
        assert_eq!(
            out,
            "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n\
             [0:0] -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\nCOMMIT\n"
        );
        assert!(!t.is_empty());
        let quota = Ext {
            name: "quota".into(),
            rev: 1,
            data: vec![0; 24],
        };
        let e = build(quota).unwrap_err();
        assert_eq!(
            e.to_string(),
            "table filter, chain INPUT, rule 1: match quota: revision 1 is not decoded"
        );
    }

    /// The address part of hand-built entries in save form.
    #[test]
    fn address_parts() {
        let mut v4 = IpPart {
            proto: 6,
            invflags: f::INV_SRCIP | f::INV_PROTO,
            ..IpPart::default()
        };
        v4.src[..4].copy_from_slice(&[10, 0, 0, 0]);
        v4.smsk[..4].copy_from_slice(&[255, 0, 0, 0]);
        v4.dst[..4].copy_from_slice(&[10, 0, 12, 0]);
        v4.dmsk[..4].copy_from_slice(&[255, 0, 255, 0]);
        (v4.iniface, v4.iniface_mask) = name("eth+", false);
        (v4.outiface, v4.outiface_mask) = name("lo", true);
        let mut frag = IpPart {
            flags: f::V4_FRAG,
            invflags: f::INV_FRAG | f::INV_VIA_IN,
            ..IpPart::default()
        };
        // `-i +`: the name kept, no byte compared.
        frag.iniface[0] = b'+';
        let mut v6 = IpPart {
            proto: 58,
            flags: f::V6_PROTO,
            ..IpPart::default()
        };
        v6.src[0] = 0xfd;
        v6.smsk[0] = 0xff;
        // A protocol without IP6T_F_PROTO is not compared.
        let v6_noflag = IpPart {
            proto: 6,
            ..IpPart::default()
        };
        let cases: &[(Family, &IpPart, &str)] = &[
            (
                Family::Ipv4,
                &v4,
                " ! -s 10.0.0.0/8 -d 10.0.12.0/255.0.255.0 -i eth+ -o lo ! -p tcp",
            ),
            (Family::Ipv4, &frag, " ! -f"),
            (Family::Ipv6, &v6, " -s fd00::/8 -p ipv6-icmp"),
            (Family::Ipv6, &v6_noflag, ""),
        ];
        for (family, ip, want) in cases {
            assert_eq!(saved(*family, ip), *want, "{ip:?}");
        }
        let tos = IpPart {
            flags: f::V6_TOS,
            ..IpPart::default()
        };
        assert!(ip_part(Family::Ipv6, &tos).unwrap_err().contains("TOS"));
        let big = IpPart {
            proto: 300,
            ..IpPart::default()
        };
        assert_eq!(ip_part(Family::Ipv4, &big).unwrap_err(), "protocol 300");
    }
}

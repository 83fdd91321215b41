//! How far a run of one key kind reaches from a given rule, and the cheap
//! test that rules out a kind before any key is built.
//!
//! Two rules belong to one run of kind `k` iff they have one shape for `k`
//! (equal once `k`'s key fields, their comments and their targets are set
//! aside), keys of `k` that do not overlap, and targets the run admits.
//! [`diff`] says which parts of two rules differ, without cloning either:
//! their shapes for `k` are equal iff every differing part is one of `k`'s
//! key fields ([`KeyKind::parts`]) — given that both rules have a key of
//! `k` (which pins the one `--dport` a `DPORT` difference can be in).

use super::{is_verdict, runnable, KeyKind, MAX_LEN};
use iptables::ext::Match;
use iptables::Rule;
use ruleset::hash::FxSet;
use ruleset::{Family, RuleId};
use std::collections::BTreeMap;

/// Parts of a rule a key may take out of its shape (bits of [`diff`]).
pub(crate) const SRC: u8 = 1;
pub(crate) const DST: u8 = 2;
pub(crate) const IIF: u8 = 4;
pub(crate) const DPORT: u8 = 8;
/// Anything no key takes: two rules differing here are never in one run.
pub(crate) const OTHER: u8 = 16;
/// The port list of a `-m multiport --dports` (single ports, not negated).
pub(crate) const MPORTS: u8 = 32;

/// The parts in which `a` and `b` differ, comments and targets aside: a
/// bit per key field (a `tcp`/`udp` match differing only in a
/// non-negated `--dport` is [`DPORT`]), [`OTHER`] for anything else.
/// O(matches), no allocation.
pub(crate) fn diff(a: &Rule, b: &Rule) -> u8 {
    let mut d = 0;
    if a.src != b.src {
        d |= SRC;
    }
    if a.dst != b.dst {
        d |= DST;
    }
    if a.iniface != b.iniface {
        d |= IIF;
    }
    if a.outiface != b.outiface || a.proto != b.proto || a.frag != b.frag || a.inv != b.inv {
        d |= OTHER;
    }
    let not_comment = |m: &&Match| !matches!(m, Match::Comment(_));
    let mut ma = a.matches.iter().filter(not_comment);
    let mut mb = b.matches.iter().filter(not_comment);
    loop {
        match (ma.next(), mb.next()) {
            (None, None) => return d,
            (Some(x), Some(y)) => d |= match_diff(x, y),
            _ => return d | OTHER,
        }
    }
}

/// [`diff`] of one pair of matches.
fn match_diff(x: &Match, y: &Match) -> u8 {
    if x == y {
        return 0;
    }
    let only_dport = match (x, y) {
        (Match::Tcp(p), Match::Tcp(q)) if !p.inv_dport && !q.inv_dport => {
            let mut q = q.clone();
            q.dpts = p.dpts;
            *p == q
        }
        (Match::Udp(p), Match::Udp(q)) if !p.inv_dport && !q.inv_dport => {
            let mut q = q.clone();
            q.dpts = p.dpts;
            *p == q
        }
        _ => false,
    };
    if only_dport {
        return DPORT;
    }
    let keyed = |p: &iptables::ext::matches::multiport::Multiport| {
        p.kind == iptables::ext::matches::multiport::DESTINATION
            && !p.inv
            && p.ports.iter().all(|(lo, hi)| lo == hi)
    };
    match (x, y) {
        (Match::Multiport(p), Match::Multiport(q)) if keyed(p) && keyed(q) => MPORTS,
        _ => OTHER,
    }
}

/// Whether two rules that differ in the parts `d` (their [`diff`]) may
/// be in one run of `kind`: false only when they cannot.
pub(crate) fn may_join(kind: KeyKind, d: u8) -> bool {
    d & !kind.parts() == 0
}

/// A run's members' keys and whether it must be a map (verdicts differ).
pub(crate) type Extent = (Vec<Vec<u8>>, bool);

/// How far a run of `kind` starting at `rules[start]` reaches, at most
/// [`MAX_LEN`] elements (a longer run is cut there anyway): its members'
/// first keys and whether it must be a map (verdicts differ). O(members ·
/// matches), one key built per member (per port for
/// [`KeyKind::Dports`]).
pub(crate) fn extent(
    rules: &[(RuleId, &Rule)],
    start: usize,
    kind: KeyKind,
    family: Family,
) -> Extent {
    let first = rules[start].1;
    let Some(k0) = kind.key(first, family) else {
        return (Vec::new(), false);
    };
    let map_ok = is_verdict(&first.target);
    let mut differs = false;
    let mut seen = Seen::default();
    // Elements so far: a multiport member is one per port, and MAX_LEN
    // bounds the set, not the members.
    let mut elems = 1;
    if kind == KeyKind::Dports {
        let ks = kind.keys(first, family).unwrap_or_default();
        elems = ks.len();
        for k in &ks {
            seen.insert(kind, first, family, k);
        }
    } else {
        seen.insert(kind, first, family, &k0);
    }
    let mut keys = vec![k0];
    for (_, r) in &rules[start + 1..] {
        if elems >= MAX_LEN || !runnable(r) || !may_join(kind, diff(first, r)) {
            break;
        }
        let Some(k) = kind.key(r, family) else {
            break;
        };
        if kind == KeyKind::Dports {
            // Every port of the member is new to the run, or it starts the
            // next one (the earlier rule wins a shared port).
            let ks = kind.keys(r, family).unwrap_or_default();
            if elems + ks.len() > MAX_LEN || ks.iter().any(|k| seen.exact.contains(k)) {
                break;
            }
            for k in &ks {
                seen.exact.insert(k.clone());
            }
            elems += ks.len();
        } else {
            if !seen.insert(kind, r, family, &k) {
                break;
            }
            elems += 1;
        }
        if r.target != first.target {
            if !(map_ok && is_verdict(&r.target)) {
                break;
            }
            differs = true;
        }
        keys.push(k);
    }
    (keys, differs)
}

/// The keys of a run so far, for the overlap check: exact keys, or the
/// disjoint ranges of an interval run by first value.
#[derive(Default)]
struct Seen {
    exact: FxSet<Vec<u8>>,
    ranges: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl Seen {
    /// Add the key `key` of rule `r` (of `kind`); false, adding
    /// nothing, when it overlaps a key already there: equal for exact keys,
    /// sharing a value for ranges (touching ranges do not overlap).
    /// O(log n).
    fn insert(&mut self, kind: KeyKind, r: &Rule, family: Family, key: &[u8]) -> bool {
        if !kind.is_interval() {
            return self.exact.insert(key.to_vec());
        }
        let Some((lo, hi)) = kind.range(r, family) else {
            return self.exact.insert(key.to_vec());
        };
        // The range starting last at or before `hi` is the only one that
        // can overlap (the ranges are disjoint).
        let clash = self
            .ranges
            .range(..=hi.clone())
            .next_back()
            .is_some_and(|(_, h)| *h >= lo);
        if !clash {
            self.ranges.insert(lo, hi);
        }
        !clash
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iptables::parse::{parse, ParseOpts};
    use iptables::Target;
    use ruleset::TableKind;

    fn rule(line: &str) -> Rule {
        let words: Vec<&str> = line.split(' ').collect();
        let o = ParseOpts {
            family: Family::Ipv4,
            restore: true,
            table: Some(TableKind::Filter),
            prog: "t",
        };
        parse(&words, o).expect(line).rules.remove(0)
    }

    /// `diff` agrees with the shapes `KeyKind::split` builds, for every
    /// pair of these rules and every kind both have a key of: the cheap
    /// test is exactly the clone-and-compare it replaces.
    #[test]
    fn diff_decides_shape_equality_as_split_does() {
        let lines = [
            "-A X -s 10.0.0.1 -j ACCEPT",
            "-A X -s 10.0.0.2 -j DROP",
            "-A X -s 10.0.0.0/24 -j ACCEPT",
            "-A X -d 10.0.0.1 -j ACCEPT",
            "-A X -s 10.0.0.1 -d 10.0.0.2 -j ACCEPT",
            "-A X -s 10.0.0.3 -d 10.0.0.4 -m comment --comment a -j ACCEPT",
            "-A X -s 10.0.0.3 -d 10.0.0.4 -o eth0 -j ACCEPT",
            "-A X ! -s 10.0.0.3 -j ACCEPT",
            "-A X -i eth0 -j ACCEPT",
            "-A X -i eth1 -m comment --comment b -j ACCEPT",
            "-A X -i eth+ -j ACCEPT",
            "-A X -p tcp -m tcp --dport 80 -j ACCEPT",
            "-A X -p tcp -m tcp --dport 81 -j ACCEPT",
            "-A X -p tcp -m tcp --dport 80:90 -j ACCEPT",
            "-A X -p tcp -m tcp ! --dport 82 -j ACCEPT",
            "-A X -p tcp -m tcp ! --dport 83 -j ACCEPT",
            "-A X -p tcp -m tcp --sport 1 --dport 84 -j ACCEPT",
            "-A X -p tcp -m tcp --dport 85 --tcp-flags SYN SYN -j ACCEPT",
            "-A X -p udp -m udp --dport 80 -j ACCEPT",
            "-A X -s 10.0.0.5 -p tcp -m tcp --dport 86 -j ACCEPT",
            "-A X -d 10.0.0.6 -p tcp -m tcp --dport 87 -m comment --comment c -j ACCEPT",
            "-A X -d 10.0.0.7 -p tcp -m tcp --dport 88 -j ACCEPT",
            "-A X -p tcp -m tcp ! --sport 1 -m tcp --dport 89 -j ACCEPT",
            "-A X -p tcp -m tcp ! --sport 2 -m tcp --dport 90 -j ACCEPT",
            "-A X -p tcp -m tcp ! --dport 1 -m tcp --dport 91 -j ACCEPT",
            "-A X -p tcp -m tcp ! --dport 2 -m tcp --dport 92 -j ACCEPT",
            "-A X -m comment --comment only -s 10.0.0.9 -j ACCEPT",
            "-A X -s 10.0.0.9 -m comment --comment x -m comment --comment y -j ACCEPT",
            "-A X -p tcp -m multiport --dports 80,443 -j ACCEPT",
            "-A X -p tcp -m multiport --dports 22 -j ACCEPT",
            "-A X -p tcp -m multiport --dports 8080,22,9 -m comment --comment m -j DROP",
            "-A X -p tcp -m multiport --dports 1000:2000,5 -j ACCEPT",
            "-A X -p tcp -m multiport ! --dports 81,82 -j ACCEPT",
            "-A X -p tcp -m multiport --sports 81,82 -j ACCEPT",
            "-A X -p udp -m multiport --dports 80,443 -j ACCEPT",
            "-A X -s 10.0.0.1 -p tcp -m multiport --dports 80,443 -j ACCEPT",
        ];
        let rules: Vec<Rule> = lines.iter().map(|l| rule(l)).collect();
        let mut joined = 0;
        for kind in KeyKind::ALL {
            for (a, la) in rules.iter().zip(lines) {
                for (b, lb) in rules.iter().zip(lines) {
                    let (Some((_, mut sa)), Some((_, mut sb))) =
                        (kind.split(a, Family::Ipv4), kind.split(b, Family::Ipv4))
                    else {
                        continue;
                    };
                    sa.target = Target::None;
                    sb.target = Target::None;
                    let same = sa == sb;
                    joined += usize::from(same && la != lb);
                    assert_eq!(may_join(kind, diff(a, b)), same, "{kind:?}: {la} / {lb}");
                }
            }
        }
        assert!(joined > 20, "the pairs exercise joins ({joined})");
    }
}

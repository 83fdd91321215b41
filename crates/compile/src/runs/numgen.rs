//! kube-proxy's endpoint selection as one `numgen random mod k` verdict
//! map.
//!
//! kube-proxy picks one of a service's k endpoints with k rules: rule i
//! (0-based) matches with probability 1/(k-i) (`-m statistic --mode random
//! --probability p`), the last one unconditionally. Each rule is reached
//! with probability (k-i)/k and then matches with 1/(k-i): every endpoint
//! is chosen with probability 1/k, which is what `numgen random mod k`
//! gives in one draw.
//!
//! The element of a member is keyed by its rule alone: the rule with
//! probability 1/n is key n-1, the unconditional last rule key 0 (any
//! bijection onto 0..k-1 is uniform), so a member's key is known without
//! its position (`-Z`, probes, the reader).
//!
//! Exactness: a group is compiled only when every probability is the
//! `val` xt_statistic holds for exactly 1/n as kube-proxy (10 decimals),
//! iptables-save (11) or a program with full precision writes it, n = k,
//! k-1, …, 2 in order, then the unconditional rule; the same shape (the
//! other matches, stateless) for every member; verdict targets; member
//! ids growing in chain order (members are listed in id order). The draw
//! differs from the rules' only by xt_statistic's 2^-31 quantization.
//! One difference remains and is the contract's: after a member's `-j`
//! chain returns, iptables goes on drawing among the later members, the
//! map goes on after the group. kube-proxy's endpoint chains end in DNAT
//! for every packet its services send them, so they never return.

use iptables::ext::matches::statistic::to_fixed;
use iptables::ext::Match;
use iptables::Rule;
use ruleset::RuleId;

/// The longest group compiled (one run's most members).
const MAX_K: u32 = super::MAX_LEN as u32;

/// Whether `val` is what xt_statistic holds for probability 1/n written
/// with full precision, 10 decimals (kube-proxy's `%0.10f`) or 11
/// (iptables-save's).
fn is_uniform(val: u32, n: u32) -> bool {
    let p = 1.0 / f64::from(n);
    let at = |d: usize| format!("{p:.d$}").parse::<f64>().map_or(0, to_fixed);
    val == to_fixed(p) || val == at(10) || val == at(11)
}

/// The member key of `r`: n-1 when its only statistic match is a random
/// one with probability 1/n (n ≥ 2, uniform as [`is_uniform`]); 0 when it
/// has none. `None` for any other statistic.
pub fn member_key(r: &Rule) -> Option<u32> {
    let mut found = None;
    for m in &r.matches {
        if let Match::Statistic(s) = m {
            if found.is_some() || s.nth || s.inv || s.val == 0 {
                return None;
            }
            let approx = (2147483648.0 / f64::from(s.val)).round() as u32;
            let n = (approx.saturating_sub(1)..=approx.saturating_add(1))
                .find(|&n| (2..=MAX_K).contains(&n) && is_uniform(s.val, n))?;
            found = Some(n - 1);
        }
    }
    Some(found.unwrap_or(0))
}

/// The element key of member key `k`: numgen writes its value as a
/// 32-bit word in host byte order.
pub fn key_bytes(k: u32) -> Vec<u8> {
    k.to_ne_bytes().to_vec()
}

/// `r` without its statistic match and its comment (the group's shape,
/// its target kept).
pub fn shape_of(r: &Rule) -> Rule {
    let mut s = r.clone();
    s.matches
        .retain(|m| !matches!(m, Match::Statistic(_) | Match::Comment(_)));
    s
}

/// The length k of the group that starts at `rules[start]`, when it is a
/// complete one (see the module doc); `None` otherwise. O(k).
pub fn group_len(rules: &[(RuleId, &Rule)], start: usize) -> Option<usize> {
    let (id0, first) = rules[start];
    let top = member_key(first)?;
    let k = top as usize + 1;
    if top == 0 || start + k > rules.len() {
        return None;
    }
    let mut shape0 = shape_of(first);
    if !super::runnable(&shape0) || super::verdict_of(&shape0.target).is_none() {
        return None;
    }
    shape0.target = iptables::Target::None;
    let mut prev = id0;
    for (i, &(id, r)) in rules[start + 1..start + k].iter().enumerate() {
        let mut s = shape_of(r);
        let want = top - 1 - i as u32;
        if member_key(r)? != want || id <= prev || super::verdict_of(&s.target).is_none() {
            return None;
        }
        s.target = iptables::Target::None;
        if s != shape0 {
            return None;
        }
        prev = id;
    }
    Some(k)
}

/// The length of the longest complete group that ends with the last of
/// `rules`, if there is one (an append completing a group).
pub fn group_ending(rules: &[(RuleId, &Rule)]) -> Option<usize> {
    let last = rules.last()?;
    if member_key(last.1)? != 0 {
        return None;
    }
    (2..=rules.len().min(MAX_K as usize)).rev().find(|&k| {
        let start = rules.len() - k;
        member_key(rules[start].1) == Some(k as u32 - 1) && group_len(rules, start) == Some(k)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iptables::ext::matches::statistic::Statistic;

    fn with_val(val: u32, nth: bool, inv: bool) -> Rule {
        let mut r = Rule::default();
        r.matches.push(Match::Statistic(Statistic {
            nth,
            val,
            packet: 0,
            inv,
        }));
        r
    }

    #[test]
    fn member_keys_are_exact() {
        let fixed = |p: &str| to_fixed(p.parse::<f64>().unwrap());
        for n in 2..=MAX_K {
            let p = 1.0 / f64::from(n);
            for v in [
                to_fixed(p),
                fixed(&format!("{p:.10}")),
                fixed(&format!("{p:.11}")),
            ] {
                assert_eq!(member_key(&with_val(v, false, false)), Some(n - 1), "1/{n}");
            }
        }
        // (val, key): not 1/n at any precision, other modes, inversions.
        let cases = [
            (fixed("0.33333"), false, false, None),
            (fixed("0.6"), false, false, None),
            (fixed("1"), false, false, None),
            (0, false, false, None),
            (fixed("0.5"), true, false, None),
            (fixed("0.5"), false, true, None),
            (fixed("0.5"), false, false, Some(1)),
        ];
        for (val, nth, inv, want) in cases {
            assert_eq!(
                member_key(&with_val(val, nth, inv)),
                want,
                "{val} {nth} {inv}"
            );
        }
        assert_eq!(member_key(&Rule::default()), Some(0));
        let mut two = with_val(fixed("0.5"), false, false);
        two.matches.push(two.matches[0].clone());
        assert_eq!(member_key(&two), None, "two statistic matches");
    }
}

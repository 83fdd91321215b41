//! Lowering of `-m multiport`: source or destination port in a list of
//! ports and ranges.
//!
//! The kernel's multiport match refuses non-first fragments and matches
//! when the port is in any listed entry (`^ invert`). One entry becomes a
//! compare or range on the port; several become a lookup in an anonymous
//! `inet_service` set (an interval set when a range is listed). The
//! transport load fails on non-first fragments, which keeps the fragment
//! rule (even for `0:65535`). `--ports` (source OR destination) needs a
//! concatenated interval set (`sport . dport`), which [`AnonSet`] cannot
//! describe.

use crate::lower::{AnonSet, Cx, LowerError, Result};
use iptables::ext::matches::multiport::{Multiport, DESTINATION, SOURCE};

/// nftables' `inet_service` data type.
const INET_SERVICE: u32 = 13;

/// The entries as a set: sorted, duplicates removed; with ranges present,
/// overlapping or adjacent ranges merged (interval sets refuse overlaps).
fn normalise(ports: &[(u16, u16)]) -> (Vec<(u16, u16)>, bool) {
    let mut v = ports.to_vec();
    v.sort_unstable();
    v.dedup();
    let interval = v.iter().any(|&(lo, hi)| lo != hi);
    if interval {
        let mut merged: Vec<(u16, u16)> = Vec::with_capacity(v.len());
        for (lo, hi) in v {
            match merged.last_mut() {
                Some(last) if u32::from(lo) <= u32::from(last.1) + 1 => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        v = merged;
    }
    (v, interval)
}

pub fn lower(m: &Multiport, cx: &mut Cx) -> Result<()> {
    let off =
        match m.kind {
            SOURCE => 0,
            DESTINATION => 2,
            _ => return Err(LowerError::not_native(
                "-m multiport --ports",
                "source-or-destination port needs a concatenated interval set (sport . dport), \
                 which anonymous sets cannot describe yet",
            )),
        };
    let (ports, interval) = normalise(&m.ports);
    cx.th(off, 2);
    match ports[..] {
        [(lo, hi)] => cx.range(&lo.to_be_bytes(), &hi.to_be_bytes(), m.inv),
        _ => {
            let elems = ports
                .iter()
                .map(|&(lo, hi)| {
                    (
                        lo.to_be_bytes().to_vec(),
                        interval.then(|| hi.to_be_bytes().to_vec()),
                    )
                })
                .collect();
            let set = AnonSet {
                index: 0,
                key_type: INET_SERVICE,
                key_len: 2,
                interval,
                elems,
                map: None,
            };
            cx.lookup_anon(set, m.inv);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use iptables::ext::matches::multiport::EITHER;
    use nft::expr::{reg, LOOKUP_F_INV};
    use nft::Expr;
    use ruleset::Family;

    fn mp(kind: u8, ports: &[(u16, u16)], inv: bool) -> Multiport {
        Multiport {
            kind,
            ports: ports.to_vec(),
            inv,
        }
    }

    fn lookup(inv: bool) -> Expr {
        Expr::Lookup {
            set: "__nfk_set0".into(),
            set_id: Some(0),
            sreg: reg::R1,
            dreg: None,
            flags: inv.then_some(LOOKUP_F_INV),
        }
    }

    fn set(interval: bool, elems: &[(u16, Option<u16>)]) -> Vec<AnonSet> {
        vec![AnonSet {
            index: 0,
            key_type: 13,
            key_len: 2,
            interval,
            elems: elems
                .iter()
                .map(|&(k, e)| {
                    (
                        k.to_be_bytes().to_vec(),
                        e.map(|e| e.to_be_bytes().to_vec()),
                    )
                })
                .collect(),
            map: None,
        }]
    }

    #[test]
    fn lowering() {
        let b = u16::to_be_bytes;
        type Case = (Family, Multiport, Vec<Expr>, Vec<AnonSet>);
        let cases: Vec<Case> = vec![
            (
                Family::Ipv4,
                mp(SOURCE, &[(50, 50)], false),
                vec![th(0, 2), eq(&b(50))],
                vec![],
            ),
            (
                Family::Ipv6,
                mp(DESTINATION, &[(50, 50)], true),
                vec![th(2, 2), ne(&b(50))],
                vec![],
            ),
            (
                Family::Ipv4,
                mp(DESTINATION, &[(80, 88)], true),
                vec![th(2, 2), range(&b(80), &b(88), true)],
                vec![],
            ),
            (
                Family::Ipv4,
                mp(DESTINATION, &[(0, 65535)], false),
                vec![th(2, 2), range(&[0, 0], &[0xff, 0xff], false)],
                vec![],
            ),
            // duplicates collapse to one port
            (
                Family::Ipv4,
                mp(SOURCE, &[(22, 22), (22, 22)], false),
                vec![th(0, 2), eq(&b(22))],
                vec![],
            ),
            (
                Family::Ipv4,
                mp(DESTINATION, &[(81, 81), (80, 80)], false),
                vec![th(2, 2), lookup(false)],
                set(false, &[(80, None), (81, None)]),
            ),
            (
                Family::Ipv6,
                mp(SOURCE, &[(443, 443), (80, 80), (1000, 2000)], true),
                vec![th(0, 2), lookup(true)],
                set(
                    true,
                    &[(80, Some(80)), (443, Some(443)), (1000, Some(2000))],
                ),
            ),
            // overlapping and adjacent ranges merge
            (
                Family::Ipv4,
                mp(
                    DESTINATION,
                    &[(10, 20), (15, 30), (31, 31), (40, 50)],
                    false,
                ),
                vec![th(2, 2), lookup(false)],
                set(true, &[(10, Some(31)), (40, Some(50))]),
            ),
            (
                Family::Ipv4,
                mp(DESTINATION, &[(10, 20), (21, 30)], false),
                vec![th(2, 2), range(&b(10), &b(30), false)],
                vec![],
            ),
        ];
        for (fam, m, want, want_sets) in cases {
            let (got, sets) = run_proto(fam, 6, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, want, "{m:?}");
            assert_eq!(sets, want_sets, "{m:?}");
        }
        let e = run_proto(Family::Ipv4, 6, |cx| {
            lower(&mp(EITHER, &[(10, 10)], false), cx)
        })
        .unwrap_err();
        assert!(e.to_string().contains("concatenated"), "{e}");
    }
}

//! Lowering of `-m sctp`: source and destination port ranges as
//! transport-header loads, `--chunk-types` as chunk presence tests
//! (`exthdr`, SCTP chunk space).
//!
//! The kernel's sctp match refuses non-first fragments; every transport
//! load fails on them, and a rule with no port test still loads the
//! source port (an always-true range) to keep that rule.
//!
//! Chunks: xt_sctp walks every chunk; `exthdr` finds the first chunk of a
//! type. So presence is exact, and these forms lower: `all T1,T2..` (each
//! exists), `! any T1,T2..` (each missing), and `any T`/`! all T` for one
//! type. Flag conditions are not native (xt_sctp accepts any chunk of the
//! type whose flags match, `exthdr` reads the first one's), nor are `only`
//! and the other inversions (a disjunction of chunk tests). Residual
//! difference on malformed packets only: xt_sctp drops a packet with a
//! zero-length chunk, `exthdr` stops looking there.

use super::icmp::{require_proto, th_present};
use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::sctp::{Chunks, Sctp, MATCH_ALL, MATCH_ANY};
use nft::expr::exthdr::OP_SCTP;

fn chunks(c: &Chunks, invert: bool, cx: &mut Cx) -> Result<()> {
    let what = "-m sctp --chunk-types";
    if !c.flags.is_empty() {
        return Err(LowerError::not_native(
            what,
            "a chunk flag test applies to any chunk of the type in iptables, \
             while exthdr reads the first chunk of the type",
        ));
    }
    let types: Vec<u8> = (0..=255u8)
        .filter(|&t| c.all || c.map[usize::from(t / 64)] & (1 << (t % 64)) != 0)
        .collect();
    // Every type present (`exists`), or every type absent (`missing`).
    let each = match (c.mode, invert, types.len()) {
        (MATCH_ALL, false, _) => false,
        (MATCH_ANY, true, _) => true,
        (MATCH_ANY, false, 1) => false,
        (MATCH_ALL, true, 1) => true,
        _ => {
            return Err(LowerError::not_native(
                what,
                "this mode needs a disjunction of chunk tests (or, for `only`, \
                 a test of every chunk), which exthdr presence tests cannot express",
            ))
        }
    };
    for t in types {
        cx.exthdr_exists(OP_SCTP, t, each);
    }
    Ok(())
}

pub fn lower(m: &Sctp, cx: &mut Cx) -> Result<()> {
    require_proto(cx, 132);
    let mut tested = false;
    for (off, pts, inv) in [(0, m.spts, m.inv_sport), (2, m.dpts, m.inv_dport)] {
        let Some((lo, hi)) = pts else { continue };
        if lo == 0 && hi == 65535 && !inv {
            continue;
        }
        cx.th(off, 2);
        cx.range(&lo.to_be_bytes(), &hi.to_be_bytes(), inv);
        tested = true;
    }
    if !tested {
        th_present(cx, 0, 2);
    }
    if let Some(c) = &m.chunks {
        chunks(c, m.inv_chunks, cx)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    fn sctp(spts: Option<(u16, u16)>, dpts: Option<(u16, u16)>, inv: (bool, bool)) -> Sctp {
        Sctp {
            spts,
            dpts,
            chunks: None,
            inv_sport: inv.0,
            inv_dport: inv.1,
            inv_chunks: false,
        }
    }

    #[test]
    fn lowering() {
        let b = u16::to_be_bytes;
        let any = vec![th(0, 2), range(&[0, 0], &[0xff, 0xff], false)];
        let cases: Vec<(Family, Sctp, Vec<nft::Expr>)> = vec![
            (
                Family::Ipv4,
                sctp(Some((50, 50)), None, (false, false)),
                vec![th(0, 2), eq(&b(50))],
            ),
            (
                Family::Ipv6,
                sctp(None, Some((80, 80)), (false, true)),
                vec![th(2, 2), ne(&b(80))],
            ),
            (
                Family::Ipv4,
                sctp(Some((50, 55)), Some((80, 100)), (true, false)),
                vec![
                    th(0, 2),
                    range(&b(50), &b(55), true),
                    th(2, 2),
                    range(&b(80), &b(100), false),
                ],
            ),
            // nothing to compare: still first fragments only
            (Family::Ipv4, sctp(None, None, (false, false)), any.clone()),
            (
                Family::Ipv6,
                sctp(Some((0, 65535)), None, (false, false)),
                any,
            ),
            (
                Family::Ipv4,
                sctp(Some((0, 65535)), Some((1, 1)), (false, false)),
                vec![th(2, 2), eq(&b(1))],
            ),
            (
                Family::Ipv6,
                sctp(Some((0, 65535)), None, (true, false)),
                vec![th(0, 2), range(&[0, 0], &[0xff, 0xff], true)],
            ),
        ];
        for (fam, m, want) in cases {
            let (got, _) = run_proto(fam, 132, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, want, "{fam:?} {m:?}");
        }
    }

    #[test]
    fn chunk_types() {
        use iptables::ext::matches::sctp::{ChunkFlags, MATCH_ONLY};
        let exists = |t: u8, yes: bool| vec![exthdr_present(OP_SCTP, t), eq(&[u8::from(yes)])];
        let any = vec![th(0, 2), range(&[0, 0], &[0xff, 0xff], false)];
        let with = |mode: u8, types: &[u8], inv: bool| {
            let mut map = [0u64; 4];
            for &t in types {
                map[usize::from(t / 64)] |= 1 << (t % 64);
            }
            let mut m = sctp(None, None, (false, false));
            m.chunks = Some(Chunks {
                mode,
                all: false,
                map,
                flags: vec![],
            });
            m.inv_chunks = inv;
            m
        };
        let cases: Vec<(Sctp, Vec<nft::Expr>)> = vec![
            (
                with(MATCH_ALL, &[0, 1], false),
                [any.clone(), exists(0, true), exists(1, true)].concat(),
            ),
            (
                with(MATCH_ANY, &[3, 192], true),
                [any.clone(), exists(3, false), exists(192, false)].concat(),
            ),
            (
                with(MATCH_ANY, &[14], false),
                [any.clone(), exists(14, true)].concat(),
            ),
            (
                with(MATCH_ALL, &[6], true),
                [any.clone(), exists(6, false)].concat(),
            ),
        ];
        for (m, want) in cases {
            let (got, _) = run_proto(Family::Ipv4, 132, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, want, "{m:?}");
        }
        // `all ALL`: every one of the 256 chunk types present.
        let mut every = with(MATCH_ALL, &[], false);
        if let Some(c) = every.chunks.as_mut() {
            c.all = true;
        }
        let (got, _) = run_proto(Family::Ipv6, 132, |cx| lower(&every, cx)).unwrap();
        let want: Vec<nft::Expr> = (0..=255u8).flat_map(|t| exists(t, true)).collect();
        assert_eq!(got[2..], want[..]);
        let mut flagged = with(MATCH_ALL, &[0], false);
        if let Some(c) = flagged.chunks.as_mut() {
            c.flags = vec![ChunkFlags {
                key: 0,
                flag: 1,
                mask: 1,
            }];
        }
        for m in [
            with(MATCH_ANY, &[0, 1], false),
            with(MATCH_ALL, &[0, 1], true),
            with(MATCH_ONLY, &[0], false),
            flagged,
        ] {
            let e = run_proto(Family::Ipv4, 132, |cx| lower(&m, cx)).unwrap_err();
            assert!(matches!(e, LowerError::NotNative { .. }), "{m:?}");
        }
    }
}

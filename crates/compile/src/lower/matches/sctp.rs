//! Lowering of `-m sctp`: source and destination port ranges as
//! transport-header loads. `--chunk-types` needs the exthdr expression
//! (SCTP chunk lookup), which nfkeeper does not emit.
//!
//! The kernel's sctp match refuses non-first fragments; every transport
//! load fails on them, and a rule with no port test still loads the
//! source port (an always-true range) to keep that rule.

use super::icmp::{require_proto, th_present};
use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::sctp::Sctp;

pub fn lower(m: &Sctp, cx: &mut Cx) -> Result<()> {
    if m.chunks.is_some() || m.inv_chunks {
        return Err(LowerError::not_native(
            "-m sctp --chunk-types",
            "SCTP chunk matching needs the exthdr expression",
        ));
    }
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use iptables::ext::matches::sctp::{Chunks, MATCH_ALL};
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
        let mut m = sctp(None, None, (false, false));
        m.chunks = Some(Chunks {
            mode: MATCH_ALL,
            all: false,
            map: [1, 0, 0, 0],
            flags: vec![],
        });
        let e = run_proto(Family::Ipv4, 132, |cx| lower(&m, cx)).unwrap_err();
        assert!(e.to_string().contains("exthdr"), "{e}");
    }
}

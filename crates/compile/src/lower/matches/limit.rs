//! Lowering of `-m limit`: a native `limit` expression in packets, exactly
//! as iptables-nft stores the match (rate per the largest unit that keeps
//! the rate exact enough, the burst as given).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::limit::Limit;
use nft::Expr;

/// XT_LIMIT_SCALE: `avg` units per second.
const SCALE: u32 = 10000;
/// `avg` of one packet per day, hour, minute, second.
const UNITS: [u32; 4] = [SCALE * 86400, SCALE * 3600, SCALE * 60, SCALE];
/// NFT_LIMIT_PKTS
const PKTS: u32 = 0;

/// (rate, unit in seconds) for `avg`, picking the unit as iptables-nft does.
fn rate_unit(avg: u32) -> (u64, u64) {
    let mut i = 1;
    while i < UNITS.len() {
        let m = UNITS[i];
        if avg > m || m / avg < m % avg {
            break;
        }
        i += 1;
    }
    let m = UNITS[i - 1];
    ((m / avg) as u64, (m / SCALE) as u64)
}

pub fn lower(m: &Limit, cx: &mut Cx) -> Result<()> {
    if m.avg == 0 {
        return Err(LowerError::not_native(
            "-m limit with an infinite rate",
            "the limit expression needs a finite rate",
        ));
    }
    let (rate, unit) = rate_unit(m.avg);
    cx.push(Expr::Limit {
        rate,
        unit,
        burst: m.burst,
        ty: PKTS,
        flags: 0,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::run;
    use ruleset::Family;

    #[test]
    fn lowering() {
        // (avg, burst) -> (rate, unit)
        let cases = [
            (SCALE * 60 / 3, 3, 3, 60),       // 3/minute
            (SCALE / 10, 5, 10, 1),           // 10/second
            (SCALE * 3600 / 3, 5, 3, 3600),   // 3/hour (the default)
            (SCALE * 86400, 1, 1, 86400),     // 1/day
            (1, 0, 10000, 1),                 // 10000/second, burst 0
            (SCALE * 86400 / 7, 2, 7, 86400), // 7/day
        ];
        for (avg, burst, rate, unit) in cases {
            let m = Limit { avg, burst };
            let want = vec![Expr::Limit {
                rate,
                unit,
                burst,
                ty: 0,
                flags: 0,
            }];
            for fam in [Family::Ipv4, Family::Ipv6] {
                assert_eq!(run(fam, |cx| lower(&m, cx)).unwrap(), want, "{avg}");
            }
        }
        let m = Limit { avg: 0, burst: 5 };
        assert!(run(Family::Ipv4, |cx| lower(&m, cx)).is_err());
    }
}

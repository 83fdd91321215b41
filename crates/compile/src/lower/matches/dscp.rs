//! Lowering of `-m dscp`: the DSCP (the DS field's six high bits) equal to
//! a value, inverted if asked; IPv4 in the TOS byte, IPv6 in the traffic
//! class (see `tos`).

use super::tos::ds_field;
use crate::lower::{Cx, Result};
use iptables::ext::matches::dscp::Dscp;

/// The DSCP bits of the DS field.
const DSCP_MASK: u8 = 0xfc;

pub fn lower(m: &Dscp, cx: &mut Cx) -> Result<()> {
    ds_field(cx, m.dscp << 2, DSCP_MASK, m.inv);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    #[test]
    fn lowering() {
        let cases: Vec<(Family, Dscp, Vec<nft::Expr>)> = vec![
            (
                Family::Ipv4,
                Dscp {
                    dscp: 0x32,
                    inv: false,
                },
                vec![nh(1, 1), mask(&[0xfc]), eq(&[0xc8])],
            ),
            (
                Family::Ipv4,
                Dscp {
                    dscp: 0x3f,
                    inv: true,
                },
                vec![nh(1, 1), mask(&[0xfc]), ne(&[0xfc])],
            ),
            (
                Family::Ipv6,
                Dscp {
                    dscp: 0x32,
                    inv: true,
                },
                vec![nh(0, 2), mask(&[0x0f, 0xc0]), ne(&[0x0c, 0x80])],
            ),
            (
                Family::Ipv6,
                Dscp {
                    dscp: 0,
                    inv: false,
                },
                vec![nh(0, 2), mask(&[0x0f, 0xc0]), eq(&[0, 0])],
            ),
        ];
        for (fam, m, want) in cases {
            let got = run(fam, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, want, "{fam:?} {m:?}");
        }
    }
}

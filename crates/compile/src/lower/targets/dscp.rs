//! Lowering of `-j DSCP` (xt_DSCP.c, `dscp_tg`/`dscp_tg6`): the DSCP bits
//! of the IPv4 TOS byte / IPv6 traffic class become the code point, the
//! two ECN bits stay (nft's `ip dscp set` / `ip6 dscp set`, rewritten
//! through the 16-bit header word, see [`super::rewrite`]).

use super::rewrite::dsfield;
use crate::lower::{Cx, Result};
use iptables::ext::targets::dscp::Dscp;

/// The ECN bits of the DS field, which DSCP keeps.
const ECN_BITS: u8 = 0x03;

pub fn lower(t: &Dscp, cx: &mut Cx) -> Result<()> {
    dsfield(cx, ECN_BITS, t.dscp << 2);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::targets::rewrite::test::word;
    use crate::lower::testutil::run;
    use ruleset::Family;

    #[test]
    fn forms() {
        // What nft 1.0.6 makes of `ip dscp set 0x01` / `ip6 dscp set 0x06`
        // (nft --debug=netlink): the words [ff 03]/[00 04] and [f0 3f]/[01 80].
        let cases: &[(Family, u8, Vec<nft::Expr>)] = &[
            (Family::Ipv4, 1, word(false, 0, 0xff03, 0x0004)),
            (Family::Ipv6, 6, word(true, 0, 0xf03f, 0x0180)),
            (Family::Ipv4, 0x3f, word(false, 0, 0xff03, 0x00fc)),
            (Family::Ipv6, 0, word(true, 0, 0xf03f, 0x0000)),
        ];
        for (fam, dscp, want) in cases {
            let t = Dscp { dscp: *dscp };
            assert_eq!(
                &run(*fam, |cx| lower(&t, cx)).unwrap(),
                want,
                "{fam:?} {t:?}"
            );
        }
    }
}

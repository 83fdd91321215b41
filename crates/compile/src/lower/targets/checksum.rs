//! Lowering of `-j CHECKSUM --checksum-fill`: no native form. xt_CHECKSUM
//! completes a partial (CHECKSUM_PARTIAL) checksum in software
//! (skb_checksum_help); nftables has no expression that does that (the
//! payload write only updates checksums incrementally for bytes it changes).
//! And the kernel runs xt_CHECKSUM only in a table named mangle (see
//! `compat::tables`), so nfkeeper refuses the rule.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::checksum::Checksum;

pub fn lower(_: &Checksum, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j CHECKSUM --checksum-fill",
        "nftables has no expression that fills in a partial (offloaded) \
         checksum as xt_CHECKSUM does with skb_checksum_help",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::run;
    use ruleset::Family;

    #[test]
    fn not_native() {
        for fam in [Family::Ipv4, Family::Ipv6] {
            let e = run(fam, |cx| lower(&Checksum { fill: true }, cx)).unwrap_err();
            assert!(matches!(e, LowerError::NotNative { .. }));
        }
    }
}

//! Lowering of `-j SYNPROXY`: no exact native form, so nft_compat runs
//! xt_SYNPROXY itself (it runs in any table).
//!
//! nftables' `synproxy` expression shares the SYN-cookie code, but
//! classifies segments differently: xt_SYNPROXY answers a SYN only when
//! ACK, FIN and RST are clear and checks an ACK only when SYN, FIN and RST
//! are clear (any other segment goes on, after its checksum and options
//! are checked); nft_synproxy answers any segment with SYN set (a SYN-ACK
//! too) and checks any with ACK set (so FIN-ACK and RST-ACK fail the
//! cookie check and are dropped). A flags test in front of it would skip
//! the checksum and option checks xt_SYNPROXY makes on every segment.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::synproxy::Synproxy;

pub fn lower(_: &Synproxy, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j SYNPROXY",
        "nftables' synproxy answers every segment with SYN set and checks \
         every one with ACK set, where xt_SYNPROXY takes only a pure SYN and \
         a pure ACK (FIN and RST clear)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::run;
    use ruleset::Family;

    #[test]
    fn not_native() {
        let t = Synproxy {
            options: 0x0f,
            wscale: 7,
            mss: 1460,
        };
        for fam in [Family::Ipv4, Family::Ipv6] {
            let e = run(fam, |cx| lower(&t, cx)).unwrap_err();
            assert!(matches!(e, LowerError::NotNative { .. }));
        }
    }
}

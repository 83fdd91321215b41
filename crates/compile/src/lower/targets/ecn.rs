//! Lowering of `-j ECN` (ipt_ECN.c, IPv4 only).
//!
//! - `--ecn-ip-ect N`: the two ECN bits of the TOS byte become N, as nft's
//!   `ip ecn set` (the 16-bit header word, see [`super::rewrite`]).
//! - `--ecn-tcp-cwr`, `--ecn-tcp-ece`, `--ecn-tcp-remove`: no exact native
//!   form. ipt_ECN drops a packet whose TCP header is cut short, and in a
//!   non-first fragment it takes bytes of the fragment's data for the TCP
//!   header and rewrites them; nftables' transport header load ends the
//!   rule in both cases (the packet passes unchanged). The rule is refused
//!   whole (the IP part alone would change what the target does).

use super::rewrite::nh_word;
use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::ecn::{Ecn, OP_SET_CWR, OP_SET_ECE, OP_SET_IP};

/// The ECN bits of the TOS byte.
const ECN_BITS: u16 = 0x0003;

pub fn lower(t: &Ecn, cx: &mut Cx) -> Result<()> {
    if t.operation & (OP_SET_ECE | OP_SET_CWR) != 0 {
        return Err(LowerError::not_native(
            "-j ECN with --ecn-tcp-cwr, --ecn-tcp-ece or --ecn-tcp-remove",
            "ipt_ECN drops packets whose TCP header is cut short and rewrites \
             data bytes of non-first fragments as if they were a TCP header, \
             where nftables' TCP header rewrite leaves both alone",
        ));
    }
    if t.operation & OP_SET_IP != 0 {
        nh_word(cx, 0, !ECN_BITS, u16::from(t.ip_ect) & ECN_BITS);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::targets::rewrite::test::word;
    use crate::lower::testutil::run;
    use ruleset::Family;

    fn ecn(operation: u8, ip_ect: u8) -> Ecn {
        Ecn {
            operation,
            ip_ect,
            ece: false,
            cwr: false,
        }
    }

    #[test]
    fn forms() {
        // nft's `ip ecn set ect0` (2): and [ff fc] xor [00 02].
        for (ect, xor) in [(0, 0), (1, 1), (2, 2), (3, 3)] {
            let got = run(Family::Ipv4, |cx| lower(&ecn(OP_SET_IP, ect), cx)).unwrap();
            assert_eq!(got, word(false, 0, 0xfffc, xor), "ect {ect}");
        }
        for op in [OP_SET_ECE, OP_SET_CWR, OP_SET_ECE | OP_SET_CWR | OP_SET_IP] {
            let e = run(Family::Ipv4, |cx| lower(&ecn(op, 1), cx)).unwrap_err();
            assert!(matches!(e, LowerError::NotNative { .. }), "{op:#x}");
        }
    }
}

//! Lowering of `-j TCPOPTSTRIP`: no exact native form.
//!
//! nftables has the piece (`tcp option NAME reset`: the exthdr reset
//! overwrites an option with NOPs and fixes the checksum), but on segments
//! xt_TCPOPTSTRIP treats differently:
//! - it strips every occurrence of a listed option, the reset only the
//!   first (one reset per possible occurrence would be needed);
//! - a TCP header shorter than 20 bytes, or cut short in the packet: it
//!   drops the packet, the reset leaves it alone;
//! - an option running past the header's end: it stops and passes the
//!   packet, the reset drops it when that option is one to strip.
//!
//! And the kernel runs xt_TCPOPTSTRIP only in a table named mangle (see
//! `compat::tables`).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::tcpoptstrip::Tcpoptstrip;

pub fn lower(_: &Tcpoptstrip, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j TCPOPTSTRIP",
        "nftables' TCP option reset strips only an option's first occurrence, \
         passes segments whose TCP header is shorter than 20 bytes or cut \
         short (xt_TCPOPTSTRIP drops them) and drops those with a listed \
         option running past the header (xt_TCPOPTSTRIP passes them)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::run;
    use ruleset::Family;

    #[test]
    fn not_native() {
        let t = Tcpoptstrip {
            strip_bmap: [0x10, 0, 0, 0, 0, 0, 0, 0],
        };
        for fam in [Family::Ipv4, Family::Ipv6] {
            let e = run(fam, |cx| lower(&t, cx)).unwrap_err();
            assert!(matches!(e, LowerError::NotNative { .. }));
        }
    }
}

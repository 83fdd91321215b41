//! Lowering of `-j TPROXY`: no exact native form. nftables' `tproxy`
//! expression finds the socket as xt_TPROXY does, but where there is no
//! transparent socket to take the packet (or it is neither TCP nor UDP,
//! or its header is cut short) it ends the rule and the packet goes on to
//! the next one, while xt_TPROXY drops it; the verdict accept that follows
//! a successful `tproxy` cannot depend on its result. And the kernel runs
//! xt_TPROXY only in a table named mangle (see `compat::tables`).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::tproxy::Tproxy;

pub fn lower(_: &Tproxy, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j TPROXY",
        "nftables' tproxy passes a packet no transparent socket takes on to \
         the next rule, where xt_TPROXY drops it",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::run;
    use ruleset::Family;

    #[test]
    fn not_native() {
        let t = Tproxy {
            mark_mask: 0xff,
            mark_value: 0x23,
            laddr: [0; 16],
            lport: 12345,
        };
        for fam in [Family::Ipv4, Family::Ipv6] {
            let e = run(fam, |cx| lower(&t, cx)).unwrap_err();
            assert!(matches!(e, LowerError::NotNative { .. }));
        }
    }
}

//! Lowering of `-j TCPMSS`: no native form. It would need the exthdr
//! expression (write `tcp option maxseg size`) and, for
//! `--clamp-mss-to-pmtu`, the rt expression (`rt mtu`), neither of which
//! `nft::Expr` has; and even with them the semantics differ: xt_TCPMSS only
//! ever lowers the MSS (`--set-mss`, and the clamp takes the minimum of the
//! path MTU and the incoming interface's MTU) and inserts an MSS option into
//! SYNs that lack one, while `tcp option maxseg size set` rewrites an
//! existing option unconditionally.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::tcpmss::{Tcpmss, CLAMP_PMTU};

pub fn lower(t: &Tcpmss, _: &mut Cx) -> Result<()> {
    let what = if t.mss == CLAMP_PMTU {
        "-j TCPMSS --clamp-mss-to-pmtu".to_string()
    } else {
        format!("-j TCPMSS --set-mss {}", t.mss)
    };
    Err(LowerError::not_native(
        what,
        "needs the exthdr (tcp option maxseg) and rt (mtu) expressions, \
         which nft::Expr lacks; and nft's option write is unconditional, \
         while TCPMSS only lowers the MSS and inserts a missing MSS option",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::run;
    use ruleset::Family;

    #[test]
    fn not_native() {
        for mss in [CLAMP_PMTU, 90, 1460] {
            for fam in [Family::Ipv4, Family::Ipv6] {
                let e = run(fam, |cx| lower(&Tcpmss { mss }, cx)).unwrap_err();
                assert!(matches!(e, LowerError::NotNative { .. }));
            }
        }
    }
}

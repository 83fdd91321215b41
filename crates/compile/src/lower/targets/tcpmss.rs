//! Lowering of `-j TCPMSS`: no native form. The pieces exist
//! (`exthdr` writes `tcp option maxseg size`, `rt` loads the path MSS for
//! `--clamp-mss-to-pmtu`, and both the kernel's option write and xt_TCPMSS
//! only ever lower the MSS), but xt_TCPMSS also inserts an MSS option into
//! a SYN that has none (clamped to 536 for IPv4, 1220 for IPv6), and no
//! nftables expression adds a TCP option, so such SYNs would pass
//! unchanged.

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
        "TCPMSS inserts an MSS option into SYNs without one, and no nftables \
         expression adds a TCP option (the exthdr write only rewrites one)",
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

//! Lowering of `-m pkttype`: `meta pkttype`, which resolves looped-back
//! packets (multicast vs broadcast) exactly as the kernel's pkttype match
//! does.

use crate::lower::{Cx, Result};
use iptables::ext::matches::pkttype::Pkttype;
use nft::expr::meta;

pub fn lower(m: &Pkttype, cx: &mut Cx) -> Result<()> {
    cx.meta(meta::PKTTYPE);
    cx.eq(&[m.pkttype], m.inv);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    #[test]
    fn lowering() {
        for fam in [Family::Ipv4, Family::Ipv6] {
            for (pkttype, inv) in [(0, false), (0, true), (1, false), (2, true), (3, false)] {
                let m = Pkttype { pkttype, inv };
                let got = run(fam, |cx| lower(&m, cx)).unwrap();
                let c = if inv { ne(&[pkttype]) } else { eq(&[pkttype]) };
                assert_eq!(got, vec![meta(meta::PKTTYPE), c], "{fam:?} {m:?}");
            }
        }
    }
}

//! Lowering of `-m mac --mac-source`: the Ethernet source address.
//!
//! The kernel's mac match is false (inverted or not) unless the packet
//! came in on an Ethernet device with a link-layer header; then it
//! compares the source address. Lowered as `meta iiftype ether` followed by
//! the link-layer load of bytes 6..12 (that load fails without a
//! link-layer header) and the compare.

use crate::lower::{Cx, Result};
use iptables::ext::matches::mac::Mac;
use nft::expr::base;

/// `NFT_META_IIFTYPE`: the input device type, a host-order u16.
const META_IIFTYPE: u32 = 8;
/// `ARPHRD_ETHER`.
const ARPHRD_ETHER: u16 = 1;

pub fn lower(m: &Mac, cx: &mut Cx) -> Result<()> {
    cx.meta(META_IIFTYPE);
    cx.eq(&ARPHRD_ETHER.to_ne_bytes(), false);
    cx.payload(base::LL, 6, 6);
    cx.eq(&m.addr, m.inv);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    #[test]
    fn lowering() {
        let a = [0x0a, 0x12, 0x3e, 0x4f, 0xb2, 0xc6];
        for fam in [Family::Ipv4, Family::Ipv6] {
            for inv in [false, true] {
                let m = Mac { addr: a, inv };
                let got = run(fam, |cx| lower(&m, cx)).unwrap();
                let last = if inv { ne(&a) } else { eq(&a) };
                let want = vec![meta(8), eq(&1u16.to_ne_bytes()), load(base::LL, 6, 6), last];
                assert_eq!(got, want, "{fam:?} {m:?}");
            }
        }
    }
}

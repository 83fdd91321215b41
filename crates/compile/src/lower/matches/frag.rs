//! Lowering of `-m frag` (IPv6 fragment header): not native.
//!
//! ip6tables looks the fragment header up anywhere in the extension-header
//! chain; nftables reaches it only with the exthdr expression (the
//! transport offset skips it), which nfkeeper does not emit.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::frag::Frag;

pub fn lower(_: &Frag, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m frag",
        "IPv6 fragment-header fields (and its presence) need the exthdr expression",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    #[test]
    fn not_native() {
        let m = Frag {
            ids: (0, u32::MAX),
            inv_ids: false,
            len: None,
            inv_len: false,
            res: false,
            first: false,
            more: false,
            last: true,
        };
        let e = run(Family::Ipv6, |cx| lower(&m, cx)).unwrap_err();
        assert!(e.to_string().contains("exthdr"), "{e}");
    }
}

//! Lowering of `-m tcp`: ports as transport-header loads with a range or
//! compare, flags as mask-and-compare on byte 13. `--tcp-option` needs the
//! exthdr expression, which nfkeeper does not emit yet.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::tcp::Tcp;

/// A port range at transport offset `off` (0 source, 2 destination); the
/// full range uninverted matches everything and emits nothing.
pub fn ports(cx: &mut Cx, off: u32, (lo, hi): (u16, u16), inv: bool) {
    if lo == 0 && hi == 65535 && !inv {
        return;
    }
    cx.th(off, 2);
    cx.range(&lo.to_be_bytes(), &hi.to_be_bytes(), inv);
}

/// The kernel's tcp/udp matches never match a non-first fragment, even with
/// no port or flag test. Loading a transport-header field has the same
/// effect in nftables (the load stops the rule on such fragments), so a
/// match that tests nothing else loads the source port with an
/// always-true range.
pub fn fragment_guard(cx: &mut Cx) {
    cx.th(0, 2);
    cx.range(&[0, 0], &[0xff, 0xff], false);
}

pub fn lower(m: &Tcp, cx: &mut Cx) -> Result<()> {
    if m.option != 0 || m.inv_option {
        return Err(LowerError::not_native(
            "-m tcp --tcp-option",
            "TCP option matching needs the exthdr expression",
        ));
    }
    let full = |r: (u16, u16), inv: bool| r == (0, 65535) && !inv;
    if full(m.spts, m.inv_sport) && full(m.dpts, m.inv_dport) && m.flg_mask == 0 && !m.inv_flags {
        fragment_guard(cx);
        return Ok(());
    }
    ports(cx, 0, m.spts, m.inv_sport);
    ports(cx, 2, m.dpts, m.inv_dport);
    if m.flg_mask != 0 || m.inv_flags {
        cx.th(13, 1);
        cx.masked_eq(&[m.flg_cmp], &[m.flg_mask], m.inv_flags);
    }
    Ok(())
}

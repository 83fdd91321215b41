//! Lowering of `-m tcp`: ports as transport-header loads with a range or
//! compare, flags as mask-and-compare on byte 13, `--tcp-option` as the
//! presence of the option (`exthdr`, option space TCP).
//!
//! xt_tcp and `exthdr` both walk the options (kinds 0 and 1 one byte, the
//! others by their length byte) looking for the kind. Residual difference on
//! malformed options only: `exthdr` does not look at the last option byte
//! and reports an option whose length runs past the header as missing.

use crate::lower::{Cx, Result};
use iptables::ext::matches::tcp::Tcp;
use nft::expr::exthdr::OP_TCPOPT;

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
    let full = |r: (u16, u16), inv: bool| r == (0, 65535) && !inv;
    if full(m.spts, m.inv_sport) && full(m.dpts, m.inv_dport) && m.flg_mask == 0 && !m.inv_flags {
        // No transport load: the guard refuses non-first fragments (the
        // option lookup alone would read a fragment's payload).
        fragment_guard(cx);
    }
    ports(cx, 0, m.spts, m.inv_sport);
    ports(cx, 2, m.dpts, m.inv_dport);
    if m.flg_mask != 0 || m.inv_flags {
        cx.th(13, 1);
        cx.masked_eq(&[m.flg_cmp], &[m.flg_mask], m.inv_flags);
    }
    // iptables stores `--tcp-option` only when given; kind 0 with no
    // inversion is its "no option test".
    if m.option != 0 || m.inv_option {
        cx.exthdr_exists(OP_TCPOPT, m.option, m.inv_option);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use nft::Expr;
    use ruleset::Family;

    fn tcp(dpts: (u16, u16), flags: (u8, u8), option: (u8, bool)) -> Tcp {
        Tcp {
            spts: (0, 65535),
            dpts,
            option: option.0,
            flg_mask: flags.0,
            flg_cmp: flags.1,
            inv_sport: false,
            inv_dport: false,
            inv_option: option.1,
            inv_flags: false,
        }
    }

    fn has_option(kind: u8) -> Expr {
        exthdr_present(OP_TCPOPT, kind)
    }

    #[test]
    fn lowering() {
        let guard = || vec![th(0, 2), range(&[0, 0], &[0xff, 0xff], false)];
        let all = (0, 65535);
        let cases: Vec<(Tcp, Vec<Expr>)> = vec![
            (tcp(all, (0, 0), (0, false)), guard()),
            (
                tcp((22, 22), (0, 0), (0, false)),
                vec![th(2, 2), eq(&[0, 22])],
            ),
            (
                tcp((80, 80), (0x12, 0x02), (0, false)),
                vec![
                    th(2, 2),
                    eq(&[0, 80]),
                    th(13, 1),
                    mask(&[0x12]),
                    eq(&[0x02]),
                ],
            ),
            (
                tcp(all, (0, 0), (23, false)),
                [guard(), vec![has_option(23), eq(&[1])]].concat(),
            ),
            (
                tcp(all, (0, 0), (2, true)),
                [guard(), vec![has_option(2), eq(&[0])]].concat(),
            ),
            (
                tcp((22, 22), (0, 0), (8, false)),
                vec![th(2, 2), eq(&[0, 22]), has_option(8), eq(&[1])],
            ),
        ];
        for (m, want) in cases {
            let (got, _) = run_proto(Family::Ipv4, 6, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, want, "{m:?}");
        }
    }
}

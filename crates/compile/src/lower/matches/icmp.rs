//! Lowering of `-m icmp` (IPv4): type and code as transport-header loads.
//!
//! The kernel's icmp match refuses non-first fragments and otherwise
//! matches `(type == T && lo <= code <= hi) ^ invert`, type 255 (`any`)
//! matching every type. A transport-header load fails on a non-first
//! fragment (the rule does not match, inverted or not), which gives the
//! fragment rule for free. Also home of helpers shared by the other
//! transport-protocol matches of this group (icmp6, sctp, multiport, ah,
//! esp).

use crate::lower::{Cx, Result};
use iptables::ext::matches::icmp::Icmp;
use iptables::rule::inv;
use nft::expr::meta;

/// The match's protocol, as the kernel requires it of the rule header
/// (`-p P`, not inverted). iptables refuses a rule without it; should the
/// header lack it, test `meta l4proto P` so the transport loads that follow
/// read the header they mean (what nft's own dependency does).
pub(crate) fn require_proto(cx: &mut Cx, proto: u8) {
    let r = cx.rule;
    if r.proto == proto && !r.inverted(inv::PROTO) {
        return;
    }
    cx.meta(meta::L4PROTO);
    cx.eq(&[proto], false);
}

/// `len` bytes at transport offset `off` exist and the packet is not a
/// non-first fragment: a load followed by an always-true range. Used where
/// the kernel match rejects fragments but no field is compared.
pub(crate) fn th_present(cx: &mut Cx, off: u32, len: u32) {
    cx.th(off, len);
    let n = len as usize;
    cx.range(&vec![0; n], &vec![0xff; n], false);
}

/// `(type == typ && lo <= code <= hi) ^ inv` on the two first bytes of the
/// transport header (ICMP and ICMPv6 share the layout). Uninverted: two
/// comparisons; inverted: one 16-bit range over type and code, since the
/// negated conjunction is "outside typ:lo ..= typ:hi".
pub(crate) fn type_code(cx: &mut Cx, typ: u8, lo: u8, hi: u8, inv: bool) {
    if lo == 0 && hi == 255 {
        cx.th(0, 1);
        cx.eq(&[typ], inv);
    } else if !inv {
        cx.th(0, 1);
        cx.eq(&[typ], false);
        cx.th(1, 1);
        cx.range(&[lo], &[hi], false);
    } else {
        cx.th(0, 2);
        cx.range(&[typ, lo], &[typ, hi], true);
    }
}

/// Type 255 is `any`: every type and code.
const ANY: u8 = 0xff;

pub fn lower(m: &Icmp, cx: &mut Cx) -> Result<()> {
    require_proto(cx, 1);
    if m.typ == ANY {
        // `any` matches every first fragment; `! any` matches nothing.
        cx.th(0, 1);
        cx.range(&[0], &[0xff], m.inv);
    } else {
        type_code(cx, m.typ, m.code_min, m.code_max, m.inv);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use nft::expr::meta as mk;
    use ruleset::Family;

    fn icmp(typ: u8, code_min: u8, code_max: u8, inv: bool) -> Icmp {
        Icmp {
            typ,
            code_min,
            code_max,
            inv,
        }
    }

    #[test]
    fn lowering() {
        let l4 = || [meta(mk::L4PROTO), eq(&[1])];
        let cases: Vec<(Icmp, u8, Vec<nft::Expr>)> = vec![
            // type only
            (icmp(8, 0, 255, false), 1, vec![th(0, 1), eq(&[8])]),
            (icmp(8, 0, 255, true), 1, vec![th(0, 1), ne(&[8])]),
            // type and one code
            (
                icmp(3, 1, 1, false),
                1,
                vec![th(0, 1), eq(&[3]), th(1, 1), eq(&[1])],
            ),
            (icmp(3, 1, 1, true), 1, vec![th(0, 2), ne(&[3, 1])]),
            // type and a code range
            (
                icmp(3, 0, 5, false),
                1,
                vec![th(0, 1), eq(&[3]), th(1, 1), range(&[0], &[5], false)],
            ),
            (
                icmp(3, 2, 255, true),
                1,
                vec![th(0, 2), range(&[3, 2], &[3, 255], true)],
            ),
            // any / ! any
            (
                icmp(255, 0, 255, false),
                1,
                vec![th(0, 1), range(&[0], &[255], false)],
            ),
            (
                icmp(255, 0, 255, true),
                1,
                vec![th(0, 1), range(&[0], &[255], true)],
            ),
            // no `-p icmp` in the header: the dependency is added
            (
                icmp(0, 0, 255, false),
                0,
                [&l4()[..], &[th(0, 1), eq(&[0])]].concat(),
            ),
        ];
        for (m, proto, want) in cases {
            let (got, sets) = run_proto(Family::Ipv4, proto, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, want, "{m:?}");
            assert!(sets.is_empty());
        }
        // `! -p icmp -m icmp`: still requires ICMP (never matches).
        let got = run_inv_proto(Family::Ipv4, 1, |cx| lower(&icmp(8, 0, 255, false), cx));
        assert_eq!(got, [&l4()[..], &[th(0, 1), eq(&[8])]].concat());
    }
}

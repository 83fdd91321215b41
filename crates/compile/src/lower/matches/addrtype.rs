//! Lowering of `-m addrtype` (IPv4): the routing table's type of the source
//! and/or destination address, as `fib saddr|daddr [. iif|. oif] type`.
//!
//! xt_addrtype (IPv4) asks `inet_dev_addr_type` for each tested address,
//! scoped to the input (`--limit-iface-in`) or output (`--limit-iface-out`)
//! device, and matches when the type's bit is in the mask (xor the
//! option's invert); `fib ... type` asks the same function with the same
//! device, so one fib lookup per tested address, compared with the type
//! (one bit) or looked up in a set of types (several), is exact. Both tests
//! are conjunctive. The kernel limits `iif`/`oif` to the same hooks as
//! xt_addrtype limits the options.
//!
//! IPv6 is not native: ip6tables' addrtype classifies an address partly by
//! its form (`ipv6_addr_type`) and requires every listed type at once,
//! while `fib ... type` returns one route type.

use crate::lower::{AnonSet, Cx, LowerError, Result};
use iptables::ext::matches::addrtype::Addrtype;
use nft::expr::{fib, reg, Fib};
use nft::Expr;

/// nftables' `fib_addrtype` data type (a host-order u32 route type).
const TYPE_FIB_ADDR: u32 = 38;

/// One address test: route type of the address in `flags` within `mask`
/// (bit i = type i), or not within it when `invert`.
fn test(cx: &mut Cx, flags: u32, mask: u16, invert: bool) {
    cx.push(Expr::Fib(Fib {
        dreg: reg::R1,
        result: fib::RESULT_ADDRTYPE,
        flags,
    }));
    let types: Vec<u32> = (0..16).filter(|i| mask & (1 << i) != 0).collect();
    if let [one] = types[..] {
        cx.eq(&one.to_ne_bytes(), invert);
        return;
    }
    let set = AnonSet {
        index: 0,
        key_type: TYPE_FIB_ADDR,
        key_len: 4,
        interval: false,
        elems: types
            .iter()
            .map(|t| (t.to_ne_bytes().to_vec(), None))
            .collect(),
        map: None,
    };
    cx.lookup_anon(set, invert);
}

pub fn lower(m: &Addrtype, cx: &mut Cx) -> Result<()> {
    if cx.is_v6() {
        return Err(LowerError::not_native(
            "ip6tables -m addrtype",
            "ip6tables' address types come partly from the address form and must all hold; \
             fib returns a single route type",
        ));
    }
    let dev = if m.limit_in {
        fib::F_IIF
    } else if m.limit_out {
        fib::F_OIF
    } else {
        0
    };
    // A zero mask is no test (xt_addrtype skips it).
    if m.src != 0 {
        test(cx, fib::F_SADDR | dev, m.src, m.inv_src);
    }
    if m.dst != 0 {
        test(cx, fib::F_DADDR | dev, m.dst, m.inv_dst);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use nft::expr::LOOKUP_F_INV;
    use ruleset::Family;

    const LOCAL: u16 = 1 << 2;
    const ANYCAST: u16 = 1 << 4;

    fn at(src: u16, dst: u16, inv: (bool, bool), limit: (bool, bool)) -> Addrtype {
        Addrtype {
            src,
            dst,
            inv_src: inv.0,
            inv_dst: inv.1,
            limit_in: limit.0,
            limit_out: limit.1,
        }
    }

    fn fib_type(flags: u32) -> nft::Expr {
        Expr::Fib(Fib {
            dreg: reg::R1,
            result: fib::RESULT_ADDRTYPE,
            flags,
        })
    }

    fn lookup(flags: Option<u32>) -> nft::Expr {
        Expr::Lookup {
            set: "__nfk_set0".into(),
            set_id: Some(0),
            sreg: reg::R1,
            dreg: None,
            flags,
        }
    }

    #[test]
    fn lowering() {
        let local = 2u32.to_ne_bytes();
        let cases: Vec<(Addrtype, Vec<nft::Expr>, Vec<u32>)> = vec![
            (
                at(LOCAL, 0, (false, false), (false, false)),
                vec![fib_type(fib::F_SADDR), eq(&local)],
                vec![],
            ),
            (
                at(0, LOCAL, (false, true), (false, false)),
                vec![fib_type(fib::F_DADDR), ne(&local)],
                vec![],
            ),
            (
                at(0, LOCAL | ANYCAST, (false, true), (false, false)),
                vec![fib_type(fib::F_DADDR), lookup(Some(LOOKUP_F_INV))],
                vec![2, 4],
            ),
            (
                at(0, LOCAL | ANYCAST, (false, false), (true, false)),
                vec![fib_type(fib::F_DADDR | fib::F_IIF), lookup(None)],
                vec![2, 4],
            ),
            (
                at(1 << 1, LOCAL, (true, false), (false, true)),
                vec![
                    fib_type(fib::F_SADDR | fib::F_OIF),
                    ne(&1u32.to_ne_bytes()),
                    fib_type(fib::F_DADDR | fib::F_OIF),
                    eq(&local),
                ],
                vec![],
            ),
        ];
        for (m, want, elems) in cases {
            let (got, sets) = run_proto(Family::Ipv4, 0, |cx| lower(&m, cx)).unwrap();
            assert_eq!(got, want, "{m:?}");
            let got_elems: Vec<Vec<u8>> = sets
                .iter()
                .flat_map(|s| &s.elems)
                .map(|e| e.0.clone())
                .collect();
            let want_elems: Vec<Vec<u8>> = elems.iter().map(|t| t.to_ne_bytes().to_vec()).collect();
            assert_eq!(got_elems, want_elems, "{m:?}");
            assert!(sets
                .iter()
                .all(|s| s.key_type == TYPE_FIB_ADDR && s.key_len == 4));
        }
        let e = run(Family::Ipv6, |cx| {
            lower(&at(LOCAL, 0, (false, false), (false, false)), cx)
        });
        assert!(matches!(e, Err(LowerError::NotNative { .. })));
    }
}

//! Lowering of `-m conntrack` (and the state test shared with `-m state`).
//!
//! xt_conntrack tests `--ctstate` first, for every packet; a packet without
//! a conntrack entry (INVALID or UNTRACKED) then matches when a state test
//! was given and fails otherwise, without looking at the other options. The
//! `ct` expression reads `state` for every packet but ends the rule (break)
//! for any other key when there is no entry. So the lowering is exact when
//! either no other key is loaded, or the state test itself already rejects
//! packets without an entry; other combinations are not native.
//!
//! Order of the tests follows iptables-translate (direction, protocol,
//! state, status, expiration, addresses, ports); all are conjunctive.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::conntrack::{
    Conntrack, CtAddr, CtPorts, ST_DNAT, ST_ESTABLISHED, ST_INVALID, ST_NEW, ST_RELATED, ST_SNAT,
    ST_UNTRACKED,
};
use nft::expr::{byteorder, ct, reg, Byteorder};
use nft::Expr;

/// nftables' `ct state` bit for an untracked packet (`NF_CT_STATE_UNTRACKED_BIT`).
const NFT_UNTRACKED: u32 = 1 << 6;
/// `IPS_SRC_NAT` / `IPS_DST_NAT` status bits.
const IPS_SRC_NAT: u32 = 1 << 4;
const IPS_DST_NAT: u32 = 1 << 5;
/// Direction numbers of `ct ... original|reply`.
const ORIGINAL: u8 = 0;
const REPLY: u8 = 1;

/// xt_conntrack state bits (without SNAT/DNAT) as nftables `ct state` bits:
/// INVALID, ESTABLISHED, RELATED and NEW are the same bits; UNTRACKED moves.
fn nft_state_bits(xt: u32) -> u32 {
    let mut v = xt & (ST_INVALID | ST_ESTABLISHED | ST_RELATED | ST_NEW);
    if xt & ST_UNTRACKED != 0 {
        v |= NFT_UNTRACKED;
    }
    v
}

/// `(reg1 & mask) != 0` on a host-order u32 (`== 0` when `invert`): any of
/// the bits is set, as xt_conntrack tests state and status masks.
fn any_bit(cx: &mut Cx, mask: u32, invert: bool) {
    cx.mask(&mask.to_ne_bytes());
    cx.eq(&[0; 4], !invert);
}

/// Whether a packet without a conntrack entry (its state bit is INVALID or
/// UNTRACKED) passes xt's state test of `mask` (xt bits), `invert`ed.
pub(crate) fn entryless_pass(mask: u32, invert: bool) -> bool {
    [ST_INVALID, ST_UNTRACKED]
        .iter()
        .any(|&b| (mask & b != 0) != invert)
}

/// The state test of xt_conntrack for a mask without SNAT/DNAT bits:
/// `ct state & bits != 0` (`== 0` inverted). Exact for every packet,
/// including those without an entry (ct state is always readable).
pub(crate) fn state_test(cx: &mut Cx, mask: u32, invert: bool) {
    cx.ct(ct::STATE, None);
    any_bit(cx, nft_state_bits(mask), invert);
}

/// `byteorder reg1 = hton(reg1, 4, 4)`, for ordered comparisons (`range`
/// compares bytes) of a host-order u32.
pub(crate) fn hton32(cx: &mut Cx) {
    cx.push(Expr::Byteorder(Byteorder {
        sreg: reg::R1,
        dreg: reg::R1,
        op: byteorder::HTON,
        len: 4,
        size: 4,
    }));
}

fn addr(cx: &mut Cx, key: u32, dir: u8, a: &CtAddr) {
    let n = if cx.is_v6() { 16 } else { 4 };
    cx.ct(key, Some(dir));
    cx.masked_eq(&a.addr[..n], &a.mask[..n], a.inv);
}

/// A port range of the tuple; the full range is still emitted (it tests
/// that the packet has an entry, as xt does).
fn port(cx: &mut Cx, key: u32, dir: u8, p: &CtPorts) {
    cx.ct(key, Some(dir));
    cx.range(&p.lo.to_be_bytes(), &p.hi.to_be_bytes(), p.inv);
}

pub fn lower(m: &Conntrack, cx: &mut Cx) -> Result<()> {
    let others = m.tests_beyond_state();
    if let Some((mask, inv)) = m.state {
        let nat = mask & (ST_SNAT | ST_DNAT);
        let std = mask & !(ST_SNAT | ST_DNAT);
        if !inv && nat != 0 && std != 0 {
            return Err(LowerError::not_native(
                "-m conntrack --ctstate mixing SNAT/DNAT with other states",
                "it matches on a ct state bit OR a ct status bit, and one rule cannot OR two ct keys",
            ));
        }
        if (others || nat != 0) && entryless_pass(mask, inv) {
            let what = if others {
                "-m conntrack --ctstate passing packets without an entry (INVALID/UNTRACKED) with other tests"
            } else {
                "-m conntrack ! --ctstate SNAT/DNAT without both INVALID and UNTRACKED"
            };
            return Err(LowerError::not_native(
                what,
                "xt_conntrack matches packets without a conntrack entry on the state test alone, but nftables' ct expression ends the rule when it reads any key but state without an entry",
            ));
        }
    }
    if let Some(reply) = m.dir_reply {
        cx.ct(ct::DIRECTION, None);
        cx.eq(&[if reply { REPLY } else { ORIGINAL }], false);
    }
    if let Some((p, inv)) = m.proto {
        cx.ct(ct::PROTOCOL, Some(ORIGINAL));
        cx.eq(&[p], inv);
    }
    if let Some((mask, inv)) = m.state {
        let std = mask & !(ST_SNAT | ST_DNAT);
        let mut nat = 0;
        if mask & ST_SNAT != 0 {
            nat |= IPS_SRC_NAT;
        }
        if mask & ST_DNAT != 0 {
            nat |= IPS_DST_NAT;
        }
        if nat == 0 || (inv && std != 0) {
            state_test(cx, std, inv);
        }
        if nat != 0 {
            cx.ct(ct::STATUS, None);
            any_bit(cx, nat, inv);
        }
    }
    if let Some((mask, inv)) = m.status {
        cx.ct(ct::STATUS, None);
        any_bit(cx, mask, inv);
    }
    if let Some((lo, hi, inv)) = m.expire {
        // xt compares whole seconds (expiry / HZ); ct expiration is in
        // milliseconds, host order: second s is [s*1000, s*1000+999] ms,
        // compared after conversion to network order. The kernel value is a
        // 32-bit millisecond count, so the upper end is capped there.
        let lo_ms = lo as u64 * 1000;
        if lo_ms > u32::MAX as u64 {
            return Err(LowerError::not_native(
                "-m conntrack --ctexpire above 4294967 seconds",
                "ct expiration is a 32-bit millisecond count",
            ));
        }
        let hi_ms = (hi as u64 * 1000 + 999).min(u32::MAX as u64);
        cx.ct(ct::EXPIRATION, None);
        hton32(cx);
        let (lo_b, hi_b) = ((lo_ms as u32).to_be_bytes(), (hi_ms as u32).to_be_bytes());
        cx.push(Expr::Range {
            sreg: reg::R1,
            neq: inv,
            from: lo_b.to_vec(),
            to: hi_b.to_vec(),
        });
    }
    for (a, key, dir) in [
        (&m.origsrc, ct::SRC, ORIGINAL),
        (&m.origdst, ct::DST, ORIGINAL),
        (&m.replsrc, ct::SRC, REPLY),
        (&m.repldst, ct::DST, REPLY),
    ] {
        if let Some(a) = a {
            addr(cx, key, dir, a);
        }
    }
    for (p, key, dir) in [
        (&m.origsrcport, ct::PROTO_SRC, ORIGINAL),
        (&m.origdstport, ct::PROTO_DST, ORIGINAL),
        (&m.replsrcport, ct::PROTO_SRC, REPLY),
        (&m.repldstport, ct::PROTO_DST, REPLY),
    ] {
        if let Some(p) = p {
            port(cx, key, dir, p);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use iptables::ext::matches::conntrack::{CtAddr, CtPorts};
    use ruleset::Family;

    fn base(v6: bool) -> Conntrack {
        Conntrack {
            v6,
            state: None,
            proto: None,
            origsrc: None,
            origdst: None,
            replsrc: None,
            repldst: None,
            origsrcport: None,
            origdstport: None,
            replsrcport: None,
            repldstport: None,
            status: None,
            expire: None,
            dir_reply: None,
        }
    }

    fn bits(m: u32, invert: bool) -> Vec<Expr> {
        vec![
            mask(&ne32(m)),
            if invert { eq(&[0; 4]) } else { ne(&[0; 4]) },
        ]
    }

    #[test]
    fn states() {
        let st = |m: u32, inv: bool| Conntrack {
            state: Some((m, inv)),
            ..base(false)
        };
        let state = |m, inv| [vec![ct(ct::STATE, None)], bits(m, inv)].concat();
        let status = |m, inv| [vec![ct(ct::STATUS, None)], bits(m, inv)].concat();
        let cases: Vec<(Conntrack, Vec<Expr>)> = vec![
            (st(ST_NEW | ST_RELATED, false), state(8 | 4, false)),
            (st(ST_ESTABLISHED, true), state(2, true)),
            (st(ST_UNTRACKED | ST_INVALID, false), state(64 | 1, false)),
            (st(ST_UNTRACKED, true), state(64, true)),
            (st(ST_SNAT, false), status(IPS_SRC_NAT, false)),
            (
                st(ST_SNAT | ST_DNAT, false),
                status(IPS_SRC_NAT | IPS_DST_NAT, false),
            ),
            // Inverted NAT states are exact when packets without an entry
            // already fail the state test.
            (
                st(ST_DNAT | ST_INVALID | ST_UNTRACKED, true),
                [state(65, true), status(IPS_DST_NAT, true)].concat(),
            ),
        ];
        for (m, want) in cases {
            assert_eq!(
                run(Family::Ipv4, |cx| lower(&m, cx)).unwrap(),
                want,
                "{m:?}"
            );
        }
        for m in [
            st(ST_NEW | ST_SNAT, false),
            st(ST_SNAT, true),
            st(ST_DNAT | ST_INVALID, true),
            Conntrack {
                proto: Some((6, false)),
                ..st(ST_INVALID, false)
            },
            Conntrack {
                status: Some((4, false)),
                ..st(ST_NEW, true)
            },
        ] {
            assert!(run(Family::Ipv4, |cx| lower(&m, cx)).is_err(), "{m:?}");
        }
        // A state that excludes entry-less packets goes with other tests.
        let m = Conntrack {
            dir_reply: Some(true),
            ..st(ST_INVALID | ST_UNTRACKED, true)
        };
        let want = [vec![ct(ct::DIRECTION, None), eq(&[1])], state(65, true)].concat();
        assert_eq!(run(Family::Ipv4, |cx| lower(&m, cx)).unwrap(), want);
    }

    #[test]
    fn tuple_status_expiry() {
        let mut a4 = CtAddr {
            addr: [0; 16],
            mask: [0; 16],
            inv: true,
        };
        a4.addr[..4].copy_from_slice(&[10, 1, 2, 3]);
        a4.mask[..4].copy_from_slice(&[255, 255, 0, 0]);
        let a6 = CtAddr {
            addr: [0x20; 16],
            mask: [0xff; 16],
            inv: false,
        };
        let p = |lo, hi, inv| Some(CtPorts { lo, hi, inv });
        let cases: Vec<(Family, Conntrack, Vec<Expr>)> = vec![
            (
                Family::Ipv4,
                Conntrack {
                    origsrc: Some(a4),
                    ..base(false)
                },
                vec![
                    ct(ct::SRC, Some(0)),
                    mask(&[255, 255, 0, 0]),
                    ne(&[10, 1, 0, 0]),
                ],
            ),
            (
                Family::Ipv6,
                Conntrack {
                    repldst: Some(a6),
                    proto: Some((17, true)),
                    ..base(true)
                },
                vec![
                    ct(ct::PROTOCOL, Some(0)),
                    ne(&[17]),
                    ct(ct::DST, Some(1)),
                    eq(&[0x20; 16]),
                ],
            ),
            (
                Family::Ipv4,
                Conntrack {
                    origdstport: p(80, 80, true),
                    replsrcport: p(0, 65535, false),
                    ..base(false)
                },
                vec![
                    ct(ct::PROTO_DST, Some(0)),
                    ne(&[0, 80]),
                    ct(ct::PROTO_SRC, Some(1)),
                    range(&[0, 0], &[255, 255], false),
                ],
            ),
            (
                Family::Ipv4,
                Conntrack {
                    status: Some((0, true)),
                    dir_reply: Some(false),
                    ..base(false)
                },
                [
                    vec![ct(ct::DIRECTION, None), eq(&[0]), ct(ct::STATUS, None)],
                    bits(0, true),
                ]
                .concat(),
            ),
            (
                Family::Ipv4,
                Conntrack {
                    expire: Some((3, 3, false)),
                    ..base(false)
                },
                vec![
                    ct(ct::EXPIRATION, None),
                    hton(),
                    range(&3000u32.to_be_bytes(), &3999u32.to_be_bytes(), false),
                ],
            ),
            (
                Family::Ipv4,
                Conntrack {
                    expire: Some((10, u32::MAX, true)),
                    ..base(false)
                },
                vec![
                    ct(ct::EXPIRATION, None),
                    hton(),
                    range(&10000u32.to_be_bytes(), &[0xff; 4], true),
                ],
            ),
        ];
        for (fam, m, want) in cases {
            assert_eq!(run(fam, |cx| lower(&m, cx)).unwrap(), want, "{m:?}");
        }
        let m = Conntrack {
            expire: Some((4294968, 4294968, false)),
            ..base(false)
        };
        assert!(run(Family::Ipv4, |cx| lower(&m, cx)).is_err());
    }
}

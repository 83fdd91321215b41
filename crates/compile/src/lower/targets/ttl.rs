//! Lowering of `-j TTL` (IPv4) and `-j HL` (IPv6) (xt_HL.c, `ttl_tg` and
//! `hl_tg6`): set, increment or decrement the time to live / hop limit.
//!
//! - Set: as nft's `ip ttl set N` (the TTL's 16-bit word with the protocol
//!   byte kept, the header checksum fixed) and `ip6 hoplimit set N`.
//! - Increment and decrement: the target saturates (at 255 and at 0), and
//!   nftables has no arithmetic, so the new value comes from an anonymous
//!   constant map, old → new, holding exactly the values that change (a
//!   value not in it ends the rule, which is the target leaving the packet
//!   alone); then the byte is written back (at the IPv4 TTL's even offset
//!   a one-byte write fixes the header checksum right).

use super::rewrite::{nh_word, nh_write};
use crate::lower::{AnonMap, AnonSet, Cx, Result};
use iptables::ext::targets::ttl::{Hl, HopLimit, HopMode, Ttl};
use nft::expr::reg;
use nft::{Data, Expr};

/// Offsets of the IPv4 TTL and the IPv6 hop limit.
const IPV4_TTL: u32 = 8;
const IPV6_HOPLIMIT: u32 = 7;

/// nftables' `integer` data type (keys and values of the map).
const TYPE_INTEGER: u32 = 4;

/// What the target makes of the value `old`.
pub(crate) fn apply(h: &HopLimit, old: u8) -> u8 {
    match h.mode {
        HopMode::Set => h.value,
        HopMode::Inc => old.saturating_add(h.value),
        HopMode::Dec => old.saturating_sub(h.value),
    }
}

/// The map of an increment/decrement: every value the target changes,
/// with what it becomes.
fn map(h: &HopLimit) -> AnonSet {
    let (keys, values): (Vec<_>, Vec<_>) = (0..=255u8)
        .filter_map(|old| {
            let new = apply(h, old);
            (new != old).then(|| ((vec![old], None), vec![new]))
        })
        .unzip();
    AnonSet {
        index: 0,
        key_type: TYPE_INTEGER,
        key_len: 1,
        interval: false,
        elems: keys,
        map: Some(AnonMap {
            data_type: TYPE_INTEGER,
            data_len: 1,
            values,
        }),
    }
}

fn hop(h: &HopLimit, cx: &mut Cx) -> Result<()> {
    let offset = if cx.is_v6() { IPV6_HOPLIMIT } else { IPV4_TTL };
    match h.mode {
        HopMode::Set if cx.is_v6() => {
            cx.push(Expr::Immediate {
                dreg: reg::R1,
                data: Data::Value(vec![h.value]),
            });
            nh_write(cx, offset, 1);
        }
        HopMode::Set => nh_word(cx, offset, 0x00ff, u16::from(h.value) << 8),
        HopMode::Inc | HopMode::Dec => {
            let m = map(h);
            // Incrementing or decrementing by 0 changes nothing.
            if !m.elems.is_empty() {
                cx.nh(offset, 1);
                cx.map_anon(m);
                nh_write(cx, offset, 1);
            }
        }
    }
    Ok(())
}

pub fn lower_ttl(t: &Ttl, cx: &mut Cx) -> Result<()> {
    hop(&t.0, cx)
}

pub fn lower_hl(t: &Hl, cx: &mut Cx) -> Result<()> {
    hop(&t.0, cx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::targets::rewrite::test::{word, write};
    use crate::lower::testutil::{imm, nh, run_proto};
    use ruleset::Family;

    fn h(mode: HopMode, value: u8) -> HopLimit {
        HopLimit { mode, value }
    }

    fn lookup() -> Expr {
        Expr::Lookup {
            set: "__nfk_set0".into(),
            set_id: Some(0),
            sreg: reg::R1,
            dreg: Some(reg::R1),
            flags: None,
        }
    }

    #[test]
    fn set() {
        let (got, sets) = run_proto(Family::Ipv4, 0, |cx| {
            lower_ttl(&Ttl(h(HopMode::Set, 5)), cx)
        })
        .unwrap();
        // nft's `ip ttl set 5`: the word [ttl proto], and [00 ff] xor [05 00].
        assert_eq!(got, word(false, 8, 0x00ff, 0x0500));
        assert!(sets.is_empty());
        let (got, _) =
            run_proto(Family::Ipv6, 0, |cx| lower_hl(&Hl(h(HopMode::Set, 64)), cx)).unwrap();
        assert_eq!(got, vec![imm(1, &[64]), write(true, 7, 1)]);
    }

    #[test]
    fn increment_and_decrement_maps() {
        // (family, mode, value, map entries (old, new) expected among them,
        // number of entries)
        type Case = (Family, HopMode, u8, Vec<(u8, u8)>, usize);
        let cases: Vec<Case> = vec![
            (
                Family::Ipv4,
                HopMode::Dec,
                1,
                vec![(1, 0), (64, 63), (255, 254)],
                255,
            ),
            (
                Family::Ipv4,
                HopMode::Dec,
                5,
                vec![(3, 0), (5, 0), (6, 1)],
                255,
            ),
            (Family::Ipv6, HopMode::Inc, 1, vec![(0, 1), (254, 255)], 255),
            (
                Family::Ipv6,
                HopMode::Inc,
                200,
                vec![(55, 255), (56, 255), (0, 200)],
                255,
            ),
            (Family::Ipv4, HopMode::Dec, 255, vec![(255, 0), (1, 0)], 255),
        ];
        for (fam, mode, value, some, n) in cases {
            let hl = h(mode, value);
            let (got, sets) = run_proto(fam, 0, |cx| match fam {
                Family::Ipv4 => lower_ttl(&Ttl(hl.clone()), cx),
                Family::Ipv6 => lower_hl(&Hl(hl.clone()), cx),
            })
            .unwrap();
            let v6 = fam == Family::Ipv6;
            let off = if v6 { 7 } else { 8 };
            assert_eq!(got, vec![nh(off, 1), lookup(), write(v6, off, 1)]);
            assert_eq!(sets.len(), 1);
            let s = &sets[0];
            let m = s.map.as_ref().unwrap();
            assert_eq!((s.key_len, m.data_len, s.elems.len()), (1, 1, n));
            assert_eq!(m.values.len(), n);
            let pairs: Vec<(u8, u8)> = s
                .elems
                .iter()
                .zip(&m.values)
                .map(|((k, _), v)| (k[0], v[0]))
                .collect();
            for p in some {
                assert!(pairs.contains(&p), "{mode:?} {value}: {p:?}");
            }
            // Only values that change, each as the target computes it.
            for (old, new) in pairs {
                assert_ne!(old, new);
                assert_eq!(new, apply(&hl, old));
            }
        }
    }

    #[test]
    fn saturation() {
        assert_eq!(apply(&h(HopMode::Inc, 10), 250), 255);
        assert_eq!(apply(&h(HopMode::Dec, 10), 3), 0);
        assert_eq!(apply(&h(HopMode::Set, 9), 3), 9);
    }
}

//! Lowering of `-j CT`.
//!
//! - `--notrack`: the `notrack` expression (xt_CT ignores every other option
//!   then).
//! - `--zone[-orig|-reply] N`: `ct [original|reply] zone set N`, which, like
//!   the xt_CT template, gives the conntrack created for this packet the
//!   zone (and does nothing to a packet that already has one). Zone 0 in any
//!   direction is the default zone, so it lowers to nothing.
//! - `--zone[-orig|-reply] mark`: `ct zone set meta mark`; the kernel takes
//!   the zone id as the low 16 bits of the mark, which are the first two
//!   bytes of the 32-bit host-order register only on little-endian hosts.
//! - `--helper` (raw table only, where xt_CT runs): nothing in the raw
//!   chain but the rule's place and counter (and its zone, below); the
//!   helper is given right after conntrack by the replay of the raw table
//!   in a table of its own ([`crate::replay`]: a `ct helper` object only
//!   acts on an existing, unconfirmed conntrack, which a packet does not
//!   have yet at raw's priority; nfkeeper/tests/packets_ct_helper.rs).
//!   Refused when the rule itself could not be replayed
//!   ([`crate::replay::helper_rule_refusal`]); the keeper checks the rest
//!   of the table when it builds the replay.
//! - `--timeout`: names a timeout policy of nfnetlink_cttimeout (made with
//!   `nfct`); an nftables `ct timeout` object is a separate object of the
//!   table with its own values and cannot refer to that policy, and like
//!   the helper it acts on an existing conntrack only.
//! - `--ctevents`, `--expevents`: no native form: `ct event set` changes
//!   the event mask of an existing conntrack only (in the raw table there is
//!   none yet, while xt_CT puts the mask on the template), and there is no
//!   expectation-event mask at all.

use super::mark::{imm, load, MarkOf};
use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::ct::{Ct, ZoneDir};
use nft::expr::{ct, reg};
use nft::Expr;
use ruleset::TableKind;

pub fn lower(t: &Ct, cx: &mut Cx) -> Result<()> {
    if t.notrack {
        cx.push(Expr::Notrack);
        return Ok(());
    }
    if !t.helper.is_empty() {
        let what = || format!("-j CT --helper {}", t.helper);
        if cx.table != TableKind::Raw {
            return Err(LowerError::not_native(
                what(),
                "xt_CT runs only in the raw table, and nftables' ct helper \
                 set is given after conntrack by replaying the raw table",
            ));
        }
        if let Some(why) = crate::replay::helper_rule_refusal(cx.rule) {
            return Err(LowerError::not_native(what(), why));
        }
    }
    if !t.timeout.is_empty() {
        return Err(LowerError::not_native(
            format!("-j CT --timeout {}", t.timeout),
            "the timeout policy is an nfnetlink_cttimeout object, which \
             nftables' ct timeout objects cannot refer to",
        ));
    }
    if t.ct_events != 0 || t.exp_events != 0 {
        return Err(LowerError::not_native(
            "-j CT --ctevents/--expevents",
            "ct event set only changes an existing conntrack's event mask \
             (xt_CT sets it on the template before the conntrack exists) and \
             nftables has no expectation-event mask",
        ));
    }
    let dir = match t.zone_dir {
        ZoneDir::Both => None,
        ZoneDir::Orig => Some(0),
        ZoneDir::Reply => Some(1),
    };
    if t.zone_mark {
        if cfg!(target_endian = "big") {
            return Err(LowerError::not_native(
                "-j CT --zone mark",
                "on a big-endian host the low 16 bits of the mark are not the \
                 bytes ct zone set reads, and shifting needs a bitwise shift",
            ));
        }
        load(cx, MarkOf::Packet);
    } else if t.zone == 0 {
        return Ok(());
    } else {
        imm(cx, &t.zone.to_ne_bytes());
    }
    cx.push(Expr::CtSet {
        key: ct::ZONE,
        sreg: reg::R1,
        dir,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::{ct_set, imm, meta, run};
    use nft::expr::meta;
    use ruleset::Family;

    fn zone(zone: u16, mark: bool, dir: ZoneDir) -> Ct {
        Ct {
            zone,
            zone_mark: mark,
            zone_dir: dir,
            ..Ct::default()
        }
    }

    #[test]
    fn forms() {
        let z = ct::ZONE;
        let cases: Vec<(Ct, Vec<Expr>)> = vec![
            (
                Ct {
                    notrack: true,
                    helper: "ftp".into(),
                    ..Ct::default()
                },
                vec![Expr::Notrack],
            ),
            (Ct::default(), vec![]),
            (zone(0, false, ZoneDir::Orig), vec![]),
            (
                zone(1, false, ZoneDir::Both),
                vec![imm(1, &1u16.to_ne_bytes()), ct_set(z, None)],
            ),
            (
                zone(65535, false, ZoneDir::Orig),
                vec![imm(1, &[0xff, 0xff]), ct_set(z, Some(0))],
            ),
            (
                zone(7, false, ZoneDir::Reply),
                vec![imm(1, &7u16.to_ne_bytes()), ct_set(z, Some(1))],
            ),
            (
                zone(0, true, ZoneDir::Reply),
                vec![meta(meta::MARK), ct_set(z, Some(1))],
            ),
        ];
        for (t, want) in cases {
            for fam in [Family::Ipv4, Family::Ipv6] {
                assert_eq!(run(fam, |cx| lower(&t, cx)).unwrap(), want, "{t:?}");
            }
        }
    }

    #[test]
    fn not_native() {
        for t in [
            Ct {
                helper: "ftp".into(),
                ..Ct::default()
            },
            Ct {
                timeout: "t".into(),
                ..Ct::default()
            },
            Ct {
                ct_events: 1,
                ..Ct::default()
            },
            Ct {
                exp_events: 1,
                zone: 3,
                ..Ct::default()
            },
        ] {
            let e = run(Family::Ipv4, |cx| lower(&t, cx)).unwrap_err();
            assert!(matches!(e, LowerError::NotNative { .. }), "{t:?}");
        }
    }

    /// In the raw table a helper rule lowers to its zone only (the replay
    /// gives the helper), if the rule itself can be replayed.
    #[test]
    fn helper_in_raw() {
        let t = Ct {
            helper: "ftp".into(),
            zone: 2,
            ..Ct::default()
        };
        let at = |proto: u8, inv: u8| {
            let rule = iptables::Rule {
                proto,
                inv,
                ..Default::default()
            };
            let mut cx = Cx::new(Family::Ipv4, TableKind::Raw, "PREROUTING", &rule);
            lower(&t, &mut cx).map(|()| cx.out)
        };
        assert_eq!(
            at(6, 0).unwrap(),
            vec![imm(1, &2u16.to_ne_bytes()), ct_set(ct::ZONE, None)]
        );
        for (proto, inv) in [(0, 0), (6, iptables::rule::inv::PROTO)] {
            let e = at(proto, inv).unwrap_err().to_string();
            assert!(e.contains("needs -p PROTO"), "{e}");
        }
    }
}

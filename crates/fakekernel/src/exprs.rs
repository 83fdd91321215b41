//! What the kernel makes of an expression beyond its bytes: the defaults
//! its init fills in (and dumps from then on), and the hooks and chain
//! types its validation allows (checked from every base chain that reaches
//! the rule, see [`crate::validate`]).
//!
//! Facts (kernel 6.18, checked by the differential tests): a lookup dumps
//! its flags (0 when none were given), a quota its consumed bytes, numgen
//! its offset, log its level (4 by default) or its nflog group, ct a
//! direction only for keys that have one; nat, masq and redir dump the max register of a range equal
//! to its min when only the min was given, and nat and redir (not masq)
//! flag what they map (`NF_NAT_RANGE_MAP_IPS`,
//! `NF_NAT_RANGE_PROTO_SPECIFIED`).

use nft::expr::{ct, fib, rt, Expr};

/// `NF_NAT_RANGE_MAP_IPS`, `NF_NAT_RANGE_PROTO_SPECIFIED`.
const MAP_IPS: u32 = 1;
const PROTO_SPECIFIED: u32 = 2;

/// The syslog level of a log statement that gives none.
const LOGLEVEL_WARNING: u32 = 4;

/// `NF_INET_*` hook bits.
const PRE: u32 = 1 << 0;
const IN: u32 = 1 << 1;
const FWD: u32 = 1 << 2;
const OUT: u32 = 1 << 3;
const POST: u32 = 1 << 4;

/// Fills in what the kernel's init of `e` defaults.
pub fn canon(e: &mut Expr) {
    match e {
        Expr::Lookup { flags, .. } => {
            flags.get_or_insert(0);
        }
        Expr::Quota { consumed, .. } => {
            consumed.get_or_insert(0);
        }
        Expr::Numgen { offset, .. } => {
            offset.get_or_insert(0);
        }
        // A direction only for the keys of one direction; for counters and
        // the zone, if one was given.
        Expr::Ct { key, dir, .. } => match *key {
            ct::SRC | ct::DST | ct::PROTO_SRC | ct::PROTO_DST | 19..=22 => {}
            14..=17 => *dir = dir.filter(|d| *d < 2),
            _ => *dir = None,
        },
        // Syslog: the level (warning unless given) and flags if any;
        // nflog: the group, the snaplen if given, the queue threshold if
        // not 0.
        Expr::Log {
            group,
            snaplen,
            qthreshold,
            level,
            flags,
            ..
        } => {
            if group.is_none() {
                level.get_or_insert(LOGLEVEL_WARNING);
                *flags = flags.filter(|f| *f != 0);
                *snaplen = None;
                *qthreshold = None;
            } else {
                *level = None;
                *flags = None;
                *qthreshold = qthreshold.filter(|q| *q != 0);
            }
        }
        Expr::Nat {
            reg_addr_min,
            reg_addr_max,
            reg_proto_min,
            reg_proto_max,
            flags,
            ..
        } => {
            let mut f = flags.unwrap_or(0);
            if let Some(min) = reg_addr_min {
                reg_addr_max.get_or_insert(*min);
                f |= MAP_IPS;
            }
            if let Some(min) = reg_proto_min {
                reg_proto_max.get_or_insert(*min);
                f |= PROTO_SPECIFIED;
            }
            *flags = (f != 0).then_some(f);
        }
        Expr::Masq {
            reg_proto_min: Some(min),
            reg_proto_max,
            ..
        } => {
            reg_proto_max.get_or_insert(*min);
        }
        Expr::Redir {
            reg_proto_min,
            reg_proto_max,
            flags,
        } => {
            let mut f = flags.unwrap_or(0);
            if let Some(min) = reg_proto_min {
                reg_proto_max.get_or_insert(*min);
                f |= PROTO_SPECIFIED;
            }
            *flags = (f != 0).then_some(f);
        }
        _ => {}
    }
}

/// Where `e` may run: the hooks (bits of `NF_INET_*`) and whether the base
/// chain must be of type nat. `None`: anywhere.
pub fn constraint(e: &Expr) -> Option<(u32, bool)> {
    Some(match e {
        Expr::Nat { ty: 0, .. } => (POST | IN, true),
        Expr::Nat { .. } => (PRE | OUT, true),
        Expr::Masq { .. } => (POST, true),
        Expr::Redir { .. } => (PRE | OUT, true),
        Expr::Reject { .. } => (PRE | IN | FWD | OUT, false),
        Expr::Fib(f) => {
            let hooks = match f.result {
                fib::RESULT_OIF | fib::RESULT_OIFNAME => PRE | IN | FWD,
                _ if f.flags & fib::F_IIF != 0 => PRE | IN | FWD,
                _ if f.flags & fib::F_OIF != 0 => OUT | POST | FWD,
                _ => PRE | IN | FWD | OUT | POST,
            };
            (hooks, false)
        }
        Expr::Rt(r) if matches!(r.key, rt::NEXTHOP4 | rt::NEXTHOP6 | rt::TCPMSS) => {
            (FWD | OUT | POST, false)
        }
        _ => return None,
    })
}

/// Whether adding `e` makes the kernel validate the ruleset at commit.
pub fn validates(e: &Expr) -> bool {
    constraint(e).is_some()
}

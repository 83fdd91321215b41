//! Lowering of `-m owner`: `--uid-owner`/`--gid-owner` ranges as `meta
//! skuid`/`skgid` (the socket file's fsuid/fsgid, as xt_owner reads).
//!
//! xt_owner matches a packet without a socket (or whose socket has no file)
//! exactly when every option given is inverted; `meta skuid`/`skgid` end
//! the rule for such packets. So the lowering is exact only when at least
//! one id test is not inverted (then neither side matches those packets).
//! `--socket-exists` alone or inverted needs the socket expression, and
//! `--suppl-groups` the socket's supplementary groups: neither is native.

use super::conntrack::hton32;
use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::owner::{IdRange, Owner};
use nft::expr::meta;

/// An id (host-order u32) equal to, or in, the range; a range is compared
/// in network order (`range` compares bytes).
fn id(cx: &mut Cx, key: u32, r: &IdRange) {
    cx.meta(key);
    if r.min == r.max {
        cx.eq(&r.min.to_ne_bytes(), r.inv);
    } else {
        hton32(cx);
        cx.range(&r.min.to_be_bytes(), &r.max.to_be_bytes(), r.inv);
    }
}

pub fn lower(m: &Owner, cx: &mut Cx) -> Result<()> {
    if m.suppl_groups {
        return Err(LowerError::not_native(
            "-m owner --suppl-groups",
            "nftables has no expression for a socket's supplementary groups",
        ));
    }
    if m.socket == Some(true) {
        return Err(LowerError::not_native(
            "-m owner ! --socket-exists",
            "it needs the socket expression",
        ));
    }
    let positive = [&m.uid, &m.gid]
        .iter()
        .any(|r| matches!(r, Some(r) if !r.inv));
    if !positive {
        let what = if m.uid.is_some() || m.gid.is_some() {
            "-m owner with only inverted --uid-owner/--gid-owner"
        } else {
            "-m owner --socket-exists"
        };
        let why = if m.uid.is_some() || m.gid.is_some() {
            "xt_owner matches packets without a socket (or file) then, but meta skuid/skgid cannot be read for them and end the rule"
        } else {
            "it needs the socket expression (meta skuid also fails for sockets without a file)"
        };
        return Err(LowerError::not_native(what, why));
    }
    // `--socket-exists` with a non-inverted id test adds nothing: the id
    // test already fails without a socket.
    if let Some(r) = &m.uid {
        id(cx, meta::SKUID, r);
    }
    if let Some(r) = &m.gid {
        id(cx, meta::SKGID, r);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    fn r(min: u32, max: u32, inv: bool) -> Option<IdRange> {
        Some(IdRange { min, max, inv })
    }
    fn ow(uid: Option<IdRange>, gid: Option<IdRange>, socket: Option<bool>) -> Owner {
        Owner {
            uid,
            gid,
            socket,
            suppl_groups: false,
        }
    }

    #[test]
    fn lowering() {
        let cases = [
            (
                ow(r(0, 0, false), None, None),
                vec![meta(meta::SKUID), eq(&ne32(0))],
            ),
            (
                ow(None, r(0, 10, false), Some(false)),
                vec![
                    meta(meta::SKGID),
                    hton(),
                    range(&[0; 4], &[0, 0, 0, 10], false),
                ],
            ),
            (
                ow(r(1000, 1000, false), r(5, 6, true), None),
                vec![
                    meta(meta::SKUID),
                    eq(&ne32(1000)),
                    meta(meta::SKGID),
                    hton(),
                    range(&[0, 0, 0, 5], &[0, 0, 0, 6], true),
                ],
            ),
        ];
        for (m, want) in cases {
            for fam in [Family::Ipv4, Family::Ipv6] {
                assert_eq!(run(fam, |cx| lower(&m, cx)).unwrap(), want, "{m:?}");
            }
        }
        let mut suppl = ow(None, r(1, 1, false), None);
        suppl.suppl_groups = true;
        for m in [
            ow(r(1000, 1000, true), None, None),
            ow(r(1, 1, true), r(2, 2, true), None),
            ow(None, None, Some(false)),
            ow(r(0, 0, false), None, Some(true)),
            suppl,
        ] {
            assert!(run(Family::Ipv4, |cx| lower(&m, cx)).is_err(), "{m:?}");
        }
    }
}

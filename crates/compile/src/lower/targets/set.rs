//! Lowering of `-j SET`: `--add-set` and `--del-set` as dynamic updates
//! (`dynset`) of the rule table's copy of nfkeeper's ipset, keyed as
//! `-m set` looks it up ([`crate::lower::matches::set_key`]); the rule
//! goes on after it (ipset's SET target continues too), add before
//! delete as ipset does them.
//!
//! - `--add-set`: `add` (an existing member is left as it is); with
//!   `--exist`, `update` (an existing member's timeout restarts);
//!   `--timeout N`: the new member's timeout (a set with timeouts only;
//!   `--timeout 0`, permanent, only where that is the set's default: a
//!   dynset timeout of 0 means the set's default);
//! - `--del-set`: `delete`;
//! - `--map-set` refused: nfkeeper's sets hold no skbinfo (see
//!   docs/ipset.md), and interval sets (net types, netmasks) refused:
//!   no nftables set backend with intervals can be updated from the
//!   packet path.
//!
//! Contract: a packet-path add reaches only the copy in the rule's table
//! (the caller makes it dynamic); the home and other tables' copies learn
//! it only when an ipset command writes that member (docs/ipset.md).

use crate::lower::matches::set_key::load_key;
use crate::lower::{Cx, IpsetInfo, LowerError, Result};
use iptables::ext::targets::set::{SetRef, SetTarget};
use nft::expr::dynset::{dynset, op};

pub fn lower(t: &SetTarget, cx: &mut Cx) -> Result<()> {
    if let Some(x) = kernel(t, cx)? {
        cx.push(x);
        return Ok(());
    }
    if let Some(m) = &t.map {
        return Err(LowerError::not_native(
            format!("-j SET --map-set {}", m.name),
            "nfkeeper's ipsets hold no skbinfo to map",
        ));
    }
    if let Some(a) = &t.add {
        let what = format!("-j SET --add-set {}", a.name);
        let h = header(cx, &what, a)?;
        let timeout = match (t.timeout, h.timeout) {
            (None, _) => None,
            (Some(_), None) => {
                return Err(LowerError::not_native(
                    what,
                    format!("set {} has no timeouts", a.name),
                ))
            }
            (Some(0), Some(0)) => None,
            (Some(0), Some(_)) => return Err(LowerError::not_native(
                what,
                "a packet-path add cannot make a permanent member of a set with a default timeout",
            )),
            (Some(n), Some(_)) => Some(u64::from(n) * 1000),
        };
        update(
            cx,
            &what,
            a,
            &h,
            if t.exist { op::UPDATE } else { op::ADD },
            timeout,
        )?;
    }
    if let Some(d) = &t.del {
        let what = format!("-j SET --del-set {}", d.name);
        let h = header(cx, &what, d)?;
        update(cx, &what, d, &h, op::DELETE, None)?;
    }
    Ok(())
}

/// The nft_compat `SET` target (revision 3) when its sets are the kernel
/// ipset module's; `None` when none is. A target naming sets of both
/// kinds is refused (one target cannot be both).
fn kernel(t: &SetTarget, cx: &Cx) -> Result<Option<nft::Expr>> {
    let refs: Vec<&SetRef> = [&t.add, &t.del, &t.map].into_iter().flatten().collect();
    let kernel = |r: &&SetRef| matches!(cx.ipsets.info(&r.name), IpsetInfo::Kernel(_));
    if !refs.iter().any(kernel) {
        return Ok(None);
    }
    if !refs.iter().all(kernel) {
        return Err(LowerError::not_native(
            "-j SET",
            "it names both nfkeeper's ipsets and the kernel ipset module's sets",
        ));
    }
    let index_of = |n: &str| match cx.ipsets.info(n) {
        IpsetInfo::Kernel(i) => Some(i),
        _ => None,
    };
    let c = crate::compat::targets::set::info(t, index_of)
        .expect("every set of the target has a kernel index");
    Ok(Some(nft::Expr::Target {
        name: c.name.to_string(),
        rev: c.rev,
        info: c.info,
    }))
}

fn header(cx: &Cx, what: &str, r: &SetRef) -> Result<ipset::model::Header> {
    match cx.ipsets.info(&r.name) {
        IpsetInfo::Unknown => Err(LowerError::not_native(
            what,
            "the lowering was not given nfkeeper's ipsets",
        )),
        IpsetInfo::Missing | IpsetInfo::Kernel(_) => Err(LowerError::NoSet(r.name.clone())),
        IpsetInfo::Ours(h) => Ok(h.clone()),
    }
}

fn update(
    cx: &mut Cx,
    what: &str,
    r: &SetRef,
    h: &ipset::model::Header,
    operation: u32,
    timeout: Option<u64>,
) -> Result<()> {
    let (sreg, spec) = load_key(cx, what, &r.name, h, &r.dirs)?;
    if spec.interval {
        return Err(LowerError::not_native(
            what,
            format!(
                "set {} holds ranges, and no nftables interval set can be updated from the packet path",
                r.name
            ),
        ));
    }
    cx.push(dynset(&r.name, None, operation, sreg, timeout));
    cx.use_ipset(&r.name);
    Ok(())
}

#[cfg(test)]
#[path = "set_tests.rs"]
mod tests;

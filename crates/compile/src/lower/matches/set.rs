//! Lowering of `-m set`: a `lookup` of the packet's key (see
//! [`super::set_key`]) in the copy of nfkeeper's ipset NAME that the
//! rule's own table holds (nftables rules reach only sets of their own
//! table; the caller makes sure the copy is there, see
//! [`crate::lower::Lowered::ipsets`]).
//!
//! The options, against ipset's kernel match:
//! - `!`: the lookup's inversion;
//! - `--return-nomatch`: changes only what a `nomatch` member does, and
//!   nfkeeper's sets hold none (refused at `add`): nothing to do;
//! - `! --update-counters`, `! --update-subcounters`: a lookup updates no
//!   counters. Without `! --update-counters` ipset counts a match in the
//!   member's counters, which a lookup cannot: refused for a set with
//!   `counters` (without counters there is nothing to update);
//! - `--packets-*`, `--bytes-*`: a rule cannot read an element's
//!   counters: refused.
//!
//! A set of the kernel's own ipset module (made by the real `ipset`) is
//! matched by that module, through nft_compat (`match set` revision 4,
//! what iptables-nft loads). A name that is neither is
//! [`LowerError::NoSet`] (iptables' "Set NAME doesn't exist."); without a
//! catalog of the ipsets ([`crate::lower::NoIpsets`]) the match has no
//! native form.

use super::set_key::load_key;
use crate::lower::{Cx, IpsetInfo, LowerError, Result};
use iptables::ext::matches::set::{CounterOp, Set};
use nft::Expr;

pub fn lower(m: &Set, cx: &mut Cx) -> Result<()> {
    let what = format!("-m set --match-set {}", m.name);
    let h = match cx.ipsets.info(&m.name) {
        IpsetInfo::Unknown => {
            return Err(LowerError::not_native(
                what,
                "the lowering was not given nfkeeper's ipsets",
            ))
        }
        IpsetInfo::Missing => return Err(LowerError::NoSet(m.name.clone())),
        IpsetInfo::Kernel(index) => {
            let c = crate::compat::matches::set::info(m, index);
            cx.push(Expr::Match {
                name: c.name.to_string(),
                rev: c.rev,
                info: c.info,
            });
            return Ok(());
        }
        IpsetInfo::Ours(h) => h.clone(),
    };
    if m.packets != CounterOp::None || m.bytes != CounterOp::None {
        return Err(LowerError::not_native(
            what,
            "an nftables rule cannot test a set element's packet or byte counters",
        ));
    }
    if h.counters && !m.skip_counters {
        return Err(LowerError::not_native(
            what,
            format!(
                "set {} has counters, which an nftables lookup does not update (add ! --update-counters)",
                m.name
            ),
        ));
    }
    let (sreg, _) = load_key(cx, &what, &m.name, &h, &m.dirs)?;
    cx.push(Expr::Lookup {
        set: m.name.clone(),
        set_id: None,
        sreg,
        dreg: None,
        flags: m.inv.then_some(nft::expr::LOOKUP_F_INV),
    });
    cx.use_ipset(&m.name);
    Ok(())
}

#[cfg(test)]
#[path = "set_tests.rs"]
mod tests;

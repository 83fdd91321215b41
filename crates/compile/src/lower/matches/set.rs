//! Lowering of `-m set`: not native. The match looks packets up in an
//! ipset, a kernel object of its own that nftables lookups cannot reach
//! (nftables sets are a different store); nor are ipset's per-element
//! counters or `--return-nomatch` available.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::set::Set;

pub fn lower(m: &Set, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        format!("-m set --match-set {}", m.name),
        "ipset sets are not nftables sets; an nftables lookup cannot read them",
    ))
}

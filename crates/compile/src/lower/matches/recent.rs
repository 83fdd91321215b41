//! Lowering of `-m recent`: not native. Every mode reads or changes a named
//! xt_recent list (shared across rules, visible in /proc/net/xt_recent):
//! `--set`/`--update`/`--remove` write it, `--rcheck` reads it with hit
//! counts and ages. nftables could keep addresses in a dynamic set, but
//! that needs the dynset expression (not in `Expr`), a set that is not the
//! xt_recent list, and has no hit-count or `--rttl` test.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::recent::Recent;

pub fn lower(m: &Recent, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        format!("-m recent --name {}", m.name),
        "xt_recent lists are not nftables sets (and updating a set needs the dynset expression)",
    ))
}

//! Lowering of `-m nfacct`: not native. The match adds to an nfacct
//! (nfnetlink_acct) object shared with other users of that name; nftables'
//! named counters are objects of their own table, not nfacct objects, and
//! `Expr` has no object reference either.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::nfacct::Nfacct;

pub fn lower(m: &Nfacct, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        format!("-m nfacct --nfacct-name {}", m.name),
        "nfacct accounting objects are not nftables counters",
    ))
}

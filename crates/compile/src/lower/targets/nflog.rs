//! Lowering of `-j NFLOG`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::nflog::Nflog;

pub fn lower(_: &Nflog, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j NFLOG",
        "its lowering is not implemented yet",
    ))
}

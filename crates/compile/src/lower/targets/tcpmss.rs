//! Lowering of `-j TCPMSS`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::tcpmss::Tcpmss;

pub fn lower(_: &Tcpmss, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j TCPMSS",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-m addrtype`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::addrtype::Addrtype;

pub fn lower(_: &Addrtype, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m addrtype",
        "its lowering is not implemented yet",
    ))
}

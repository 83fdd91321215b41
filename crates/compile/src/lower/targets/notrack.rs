//! Lowering of `-j NOTRACK`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::notrack::Notrack;

pub fn lower(_: &Notrack, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j NOTRACK",
        "its lowering is not implemented yet",
    ))
}

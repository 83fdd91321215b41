//! Lowering of `-m length`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::length::Length;

pub fn lower(_: &Length, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m length",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-m owner`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::owner::Owner;

pub fn lower(_: &Owner, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m owner",
        "its lowering is not implemented yet",
    ))
}

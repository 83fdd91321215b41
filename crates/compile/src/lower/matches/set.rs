//! Lowering of `-m set`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::set::Set;

pub fn lower(_: &Set, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m set",
        "its lowering is not implemented yet",
    ))
}

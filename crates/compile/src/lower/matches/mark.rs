//! Lowering of `-m mark`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::mark::Mark;

pub fn lower(_: &Mark, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m mark",
        "its lowering is not implemented yet",
    ))
}

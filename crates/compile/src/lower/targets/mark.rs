//! Lowering of `-j MARK`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::mark::Mark;

pub fn lower(_: &Mark, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j MARK",
        "its lowering is not implemented yet",
    ))
}

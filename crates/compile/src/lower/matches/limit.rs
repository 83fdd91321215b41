//! Lowering of `-m limit`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::limit::Limit;

pub fn lower(_: &Limit, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m limit",
        "its lowering is not implemented yet",
    ))
}

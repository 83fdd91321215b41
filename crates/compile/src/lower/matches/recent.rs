//! Lowering of `-m recent`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::recent::Recent;

pub fn lower(_: &Recent, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m recent",
        "its lowering is not implemented yet",
    ))
}

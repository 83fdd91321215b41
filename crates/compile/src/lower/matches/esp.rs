//! Lowering of `-m esp`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::esp::Esp;

pub fn lower(_: &Esp, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m esp",
        "its lowering is not implemented yet",
    ))
}

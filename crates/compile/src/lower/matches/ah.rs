//! Lowering of `-m ah`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::ah::Ah;

pub fn lower(_: &Ah, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m ah",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-m hl`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::hl::Hl;

pub fn lower(_: &Hl, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m hl",
        "its lowering is not implemented yet",
    ))
}

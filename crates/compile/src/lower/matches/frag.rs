//! Lowering of `-m frag`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::frag::Frag;

pub fn lower(_: &Frag, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m frag",
        "its lowering is not implemented yet",
    ))
}

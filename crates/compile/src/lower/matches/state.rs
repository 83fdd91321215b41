//! Lowering of `-m state`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::state::State;

pub fn lower(_: &State, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m state",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-m tos`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::tos::Tos;

pub fn lower(_: &Tos, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m tos",
        "its lowering is not implemented yet",
    ))
}

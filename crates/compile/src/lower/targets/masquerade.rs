//! Lowering of `-j MASQUERADE`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::masquerade::Masquerade;

pub fn lower(_: &Masquerade, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j MASQUERADE",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-m multiport`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::multiport::Multiport;

pub fn lower(_: &Multiport, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m multiport",
        "its lowering is not implemented yet",
    ))
}

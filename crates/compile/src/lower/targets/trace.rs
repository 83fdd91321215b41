//! Lowering of `-j TRACE`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::trace::Trace;

pub fn lower(_: &Trace, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j TRACE",
        "its lowering is not implemented yet",
    ))
}

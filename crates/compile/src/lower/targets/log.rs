//! Lowering of `-j LOG`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::log::Log;

pub fn lower(_: &Log, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j LOG",
        "its lowering is not implemented yet",
    ))
}

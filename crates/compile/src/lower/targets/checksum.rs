//! Lowering of `-j CHECKSUM`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::checksum::Checksum;

pub fn lower(_: &Checksum, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j CHECKSUM",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-m dscp`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::dscp::Dscp;

pub fn lower(_: &Dscp, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m dscp",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-m ttl`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::ttl::Ttl;

pub fn lower(_: &Ttl, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m ttl",
        "its lowering is not implemented yet",
    ))
}

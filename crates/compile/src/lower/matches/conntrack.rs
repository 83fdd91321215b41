//! Lowering of `-m conntrack`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::conntrack::Conntrack;

pub fn lower(_: &Conntrack, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m conntrack",
        "its lowering is not implemented yet",
    ))
}

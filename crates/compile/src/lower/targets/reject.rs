//! Lowering of `-j REJECT`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::reject::Reject;

pub fn lower(_: &Reject, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j REJECT",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-m sctp`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::sctp::Sctp;

pub fn lower(_: &Sctp, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m sctp",
        "its lowering is not implemented yet",
    ))
}

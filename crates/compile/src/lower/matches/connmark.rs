//! Lowering of `-m connmark`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::connmark::Connmark;

pub fn lower(_: &Connmark, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m connmark",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-j CONNMARK`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::connmark::Connmark;

pub fn lower(_: &Connmark, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j CONNMARK",
        "its lowering is not implemented yet",
    ))
}

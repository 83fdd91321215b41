//! Lowering of `-m rpfilter`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::rpfilter::Rpfilter;

pub fn lower(_: &Rpfilter, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m rpfilter",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-m iprange`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::iprange::Iprange;

pub fn lower(_: &Iprange, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m iprange",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-m physdev`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::physdev::Physdev;

pub fn lower(_: &Physdev, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m physdev",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-m mac`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::mac::Mac;

pub fn lower(_: &Mac, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m mac",
        "its lowering is not implemented yet",
    ))
}

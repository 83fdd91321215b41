//! Lowering of `-m pkttype`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::pkttype::Pkttype;

pub fn lower(_: &Pkttype, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m pkttype",
        "its lowering is not implemented yet",
    ))
}

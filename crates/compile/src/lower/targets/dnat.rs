//! Lowering of `-j DNAT`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::dnat::Dnat;

pub fn lower(_: &Dnat, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j DNAT",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-j SNAT`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::snat::Snat;

pub fn lower(_: &Snat, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j SNAT",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-j CT`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::ct::Ct;

pub fn lower(_: &Ct, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j CT",
        "its lowering is not implemented yet",
    ))
}

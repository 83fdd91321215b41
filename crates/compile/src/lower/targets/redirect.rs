//! Lowering of `-j REDIRECT`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::redirect::Redirect;

pub fn lower(_: &Redirect, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-j REDIRECT",
        "its lowering is not implemented yet",
    ))
}

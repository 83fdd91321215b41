//! Lowering of `-m comment`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::comment::Comment;

pub fn lower(_: &Comment, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m comment",
        "its lowering is not implemented yet",
    ))
}

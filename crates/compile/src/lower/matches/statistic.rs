//! Lowering of `-m statistic`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::statistic::Statistic;

pub fn lower(_: &Statistic, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m statistic",
        "its lowering is not implemented yet",
    ))
}

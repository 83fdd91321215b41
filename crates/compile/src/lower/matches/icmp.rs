//! Lowering of `-m icmp`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::icmp::Icmp;

pub fn lower(_: &Icmp, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m icmp",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-m icmp6`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::icmp6::Icmp6;

pub fn lower(_: &Icmp6, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m icmp6",
        "its lowering is not implemented yet",
    ))
}

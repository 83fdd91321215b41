//! Lowering of `-m nfacct`: not written yet (placeholder; rules using it
//! are rejected with a clear error until it is).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::nfacct::Nfacct;

pub fn lower(_: &Nfacct, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m nfacct",
        "its lowering is not implemented yet",
    ))
}

//! Lowering of `-m addrtype`: not native. The address type is the routing
//! table's verdict for an address (xt_addrtype asks the FIB), which in
//! nftables is the `fib ... type` expression; nfkeeper's `Expr` has no fib
//! variant, and no other key carries a route type, so no option subset is
//! expressible.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::addrtype::Addrtype;

pub fn lower(_: &Addrtype, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m addrtype",
        "address types come from a route lookup, which needs the fib expression",
    ))
}

//! Lowering of `-m rpfilter`: not native. Reverse-path filtering is a route
//! lookup of the source address (`fib saddr . iif oif`), and nfkeeper's
//! `Expr` has no fib variant; every option only changes that lookup.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::rpfilter::Rpfilter;

pub fn lower(_: &Rpfilter, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m rpfilter",
        "the reverse-path check is a route lookup, which needs the fib expression",
    ))
}

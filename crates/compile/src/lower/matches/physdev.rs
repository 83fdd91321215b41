//! Lowering of `-m physdev`: not native. xt_physdev reads the bridge ports
//! br_netfilter records on packets it passes to the ip/ip6 hooks; nftables'
//! bridge-port keys (`meta ibrname`/`obrname`, `ibrport`) exist only in the
//! bridge family, and no ip/ip6 expression reads that record, so neither the
//! port names nor the `--physdev-is-*` flags are expressible.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::physdev::Physdev;

pub fn lower(_: &Physdev, _: &mut Cx) -> Result<()> {
    Err(LowerError::not_native(
        "-m physdev",
        "br_netfilter's bridge-port record has no nftables expression in the ip/ip6 families (bridge port keys exist only in the bridge family)",
    ))
}

//! `counter`: packets and bytes seen by the rule.

use super::Expr;
use crate::netlink::{Tb, Writer};
use crate::Error;

pub(super) const NAME: &str = "counter";

/// `enum nft_counter_attributes` (`NFTA_COUNTER_PAD` 3 only aligns the
/// u64s on hosts that need it; it carries nothing).
pub(crate) const NFTA_COUNTER_BYTES: u16 = 1;
pub(crate) const NFTA_COUNTER_PACKETS: u16 = 2;

pub(super) fn emit(e: &Expr, w: &mut Writer) {
    if let Expr::Counter { bytes, packets } = e {
        w.put_be64(NFTA_COUNTER_BYTES, *bytes);
        w.put_be64(NFTA_COUNTER_PACKETS, *packets);
    }
}

/// Missing values count as zero, as the kernel takes them.
pub(super) fn parse(t: &Tb) -> Result<Expr, Error> {
    Ok(Expr::Counter {
        bytes: t.opt_be64(NFTA_COUNTER_BYTES)?.unwrap_or(0),
        packets: t.opt_be64(NFTA_COUNTER_PACKETS)?.unwrap_or(0),
    })
}

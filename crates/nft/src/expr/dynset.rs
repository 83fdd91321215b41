//! `dynset`: add a register's key to a set, refresh it, or delete it, from
//! the packet path (`add @set { key }`, `update @set { key }`, `delete
//! @set { key }`).
//!
//! No typed variant: [`dynset`] builds the expression as
//! [`Expr::Other`] with the kernel's attributes (so every consumer of
//! [`Expr`] keeps its cases), and a dumped one parses back the same way.
//! The set must be dynamic (`NFT_SET_EVAL`, a backend that can update),
//! not constant, and have timeouts if a timeout is given.

use super::Expr;
use crate::netlink::{Attrs, Tb, Writer};

pub const NAME: &str = "dynset";

/// `enum nft_dynset_attributes`.
const NFTA_DYNSET_SET_NAME: u16 = 1;
const NFTA_DYNSET_SET_ID: u16 = 2;
const NFTA_DYNSET_OP: u16 = 3;
const NFTA_DYNSET_SREG_KEY: u16 = 4;
/// Milliseconds, big-endian u64.
const NFTA_DYNSET_TIMEOUT: u16 = 6;

/// `enum nft_dynset_ops`.
pub mod op {
    /// Add the key if absent (an existing element is left as it is).
    pub const ADD: u32 = 0;
    /// Add the key if absent, else refresh its timeout.
    pub const UPDATE: u32 = 1;
    pub const DELETE: u32 = 2;
}

/// `op` (see [`op`]) on set `set` (batch id `set_id` if it is created in
/// the same batch) with the key in `sreg`; `timeout_ms`: the added
/// element's timeout instead of the set's default.
pub fn dynset(set: &str, set_id: Option<u32>, op: u32, sreg: u32, timeout_ms: Option<u64>) -> Expr {
    let mut data = Vec::new();
    let mut w = Writer::new(&mut data);
    w.put_str(NFTA_DYNSET_SET_NAME, set);
    w.opt_be32(NFTA_DYNSET_SET_ID, set_id);
    w.put_be32(NFTA_DYNSET_OP, op);
    w.put_be32(NFTA_DYNSET_SREG_KEY, sreg);
    w.opt_be64(NFTA_DYNSET_TIMEOUT, timeout_ms);
    Expr::Other {
        name: NAME.to_string(),
        data,
    }
}

/// The data of a dynset expression (as [`dynset`] builds it or the kernel
/// dumps it: with its zero timeout and flags, without the set id) in
/// [`dynset`]'s form, to compare the two; `None` if it does not parse.
pub fn canonical(data: &[u8]) -> Option<Vec<u8>> {
    let t = Tb::parse(Attrs::new(data)).ok()?;
    let set = t.string(NFTA_DYNSET_SET_NAME).ok()?;
    let op = t.be32(NFTA_DYNSET_OP).ok()?;
    let sreg = t.be32(NFTA_DYNSET_SREG_KEY).ok()?;
    let timeout = t.opt_be64(NFTA_DYNSET_TIMEOUT).ok()?.filter(|t| *t != 0);
    match dynset(&set, None, op, sreg, timeout) {
        Expr::Other { data, .. } => Some(data),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forgets_what_the_kernel_adds() {
        let Expr::Other { data: ours, .. } = dynset("s", Some(3), op::UPDATE, 8, Some(5000)) else {
            unreachable!()
        };
        let Expr::Other { data: plain, .. } = dynset("s", None, op::UPDATE, 8, Some(5000)) else {
            unreachable!()
        };
        assert_eq!(canonical(&ours), Some(plain.clone()));
        // The kernel's dump: name, sreg, op, timeout 0, flags 0.
        let mut dumped = Vec::new();
        let mut w = Writer::new(&mut dumped);
        w.put_str(NFTA_DYNSET_SET_NAME, "s");
        w.put_be32(NFTA_DYNSET_SREG_KEY, 8);
        w.put_be32(NFTA_DYNSET_OP, op::ADD);
        w.put_be64(NFTA_DYNSET_TIMEOUT, 0);
        w.put_be32(9, 0);
        let Expr::Other { data: add, .. } = dynset("s", None, op::ADD, 8, None) else {
            unreachable!()
        };
        assert_eq!(canonical(&dumped), Some(add));
        assert_eq!(canonical(b"\x01"), None);
    }
}

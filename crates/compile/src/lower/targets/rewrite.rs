//! Rewriting fields of the network header, as the mangle targets (TOS,
//! DSCP, ECN, TTL, HL) do: a `payload` load, a `bitwise` or map lookup,
//! and a `payload` write that fixes the IPv4 header checksum.
//!
//! Fields smaller than a byte or at an odd offset are rewritten as their
//! whole, 2-byte aligned 16-bit word (as nft does): the kernel's checksum
//! update adds the written bytes as 16-bit words starting at their offset,
//! which is right only for writes that start at an even offset.
//!
//! The xtables targets write only when the value changes; a write of the
//! same bytes leaves the packet as it was (the checksum update of an
//! unchanged word is a no-op, except that one's complement arithmetic may
//! turn a header checksum of 0x0000 into the equivalent 0xffff). Both make
//! the header writable first; xtables drops the packet when that fails
//! (out of memory), nftables ends the rule.

use crate::lower::Cx;
use nft::expr::{base, reg};
use nft::Expr;

/// `NFT_PAYLOAD_CSUM_INET` and the IPv4 header checksum's offset.
const CSUM_INET: u32 = 1;
const IPV4_CHECK: u32 = 10;

/// Write register 1 to `len` bytes at `offset` of the network header, with
/// the checksum fields the kernel dumps back (all of them, 0 when unused).
pub(crate) fn nh_write(cx: &mut Cx, offset: u32, len: u32) {
    let (csum_type, csum_offset) = if cx.is_v6() {
        (0, 0)
    } else {
        (CSUM_INET, IPV4_CHECK)
    };
    cx.push(Expr::PayloadSet {
        sreg: reg::R1,
        base: base::NETWORK,
        offset,
        len,
        csum_type: Some(csum_type),
        csum_offset: Some(csum_offset),
        csum_flags: Some(0),
    });
}

/// The 16-bit word at (even) `offset` of the network header becomes
/// `(word & and) ^ xor` (big-endian values).
pub(crate) fn nh_word(cx: &mut Cx, offset: u32, and: u16, xor: u16) {
    cx.nh(offset, 2);
    cx.push(Expr::Bitwise {
        sreg: reg::R1,
        dreg: reg::R1,
        len: 2,
        mask: and.to_be_bytes().to_vec(),
        xor: xor.to_be_bytes().to_vec(),
    });
    nh_write(cx, offset, 2);
}

/// The IPv4 TOS byte (the low byte of the word at 0) or the IPv6 traffic
/// class (bits 4..12 of the word at 0) becomes `(ds & keep) ^ xor`.
pub(crate) fn dsfield(cx: &mut Cx, keep: u8, xor: u8) {
    if cx.is_v6() {
        nh_word(cx, 0, 0xf00f | u16::from(keep) << 4, u16::from(xor) << 4);
    } else {
        nh_word(cx, 0, 0xff00 | u16::from(keep), u16::from(xor));
    }
}

#[cfg(test)]
pub(crate) mod test {
    use crate::lower::testutil::nh;
    use nft::expr::{base, reg};
    use nft::Expr;

    /// The expressions of [`super::nh_word`].
    pub fn word(v6: bool, offset: u32, and: u16, xor: u16) -> Vec<Expr> {
        vec![
            nh(offset, 2),
            Expr::Bitwise {
                sreg: reg::R1,
                dreg: reg::R1,
                len: 2,
                mask: and.to_be_bytes().to_vec(),
                xor: xor.to_be_bytes().to_vec(),
            },
            write(v6, offset, 2),
        ]
    }

    /// The expression of [`super::nh_write`].
    pub fn write(v6: bool, offset: u32, len: u32) -> Expr {
        Expr::PayloadSet {
            sreg: reg::R1,
            base: base::NETWORK,
            offset,
            len,
            csum_type: Some(if v6 { 0 } else { 1 }),
            csum_offset: Some(if v6 { 0 } else { 10 }),
            csum_flags: Some(0),
        }
    }
}

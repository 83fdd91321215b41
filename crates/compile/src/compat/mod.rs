//! The kernel's xtables extensions through nft_compat: for a match or
//! target with no native nftables form, the `match`/`target` expression
//! that makes the kernel run the xtables module itself (same code, same
//! packet semantics as iptables-legacy and iptables-nft).
//!
//! Each extension's binary `info` is the kernel's `struct xt_*_info` for the
//! revision we load, laid out exactly as the kernel reads it (host byte
//! order unless the struct says otherwise, natural alignment, padded to
//! `XT_ALIGN` = 8 bytes). One module per extension under [`matches`] and
//! [`targets`], mirroring `iptables::ext`. [`tables`]: the extensions the
//! kernel refuses in nfkeeper's tables (it checks the table's name).

pub mod info;
pub mod matches;
pub mod tables;
pub mod targets;

/// What an nft_compat `match` or `target` expression carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompatInfo {
    /// The xtables extension's name as the kernel registers it.
    pub name: &'static str,
    /// The revision whose `info` layout `info` follows.
    pub rev: u32,
    /// The `struct xt_*_info` bytes, padded to a multiple of 8.
    pub info: Vec<u8>,
}

/// Round `n` up to the kernel's `XT_ALIGN` (8 bytes on 64-bit hosts).
pub const fn xt_align(n: usize) -> usize {
    (n + 7) & !7
}

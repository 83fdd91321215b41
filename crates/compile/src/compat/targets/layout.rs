//! A C struct's bytes written field by field at their offsets, for the
//! target encoders: the buffer starts zeroed (as iptables allocates it), so
//! padding, unused fields and the kernel-private tail stay zero.

use super::super::{xt_align, CompatInfo};

pub(crate) struct Layout(Vec<u8>);

impl Layout {
    /// A zeroed struct of `size` bytes (its C `sizeof`).
    pub fn new(size: usize) -> Self {
        Layout(vec![0; size])
    }

    pub fn u8(&mut self, at: usize, v: u8) -> &mut Self {
        self.0[at] = v;
        self
    }

    /// A `__u16` in host order.
    pub fn u16(&mut self, at: usize, v: u16) -> &mut Self {
        self.bytes(at, &v.to_ne_bytes())
    }

    /// A `__be16` (network order).
    pub fn be16(&mut self, at: usize, v: u16) -> &mut Self {
        self.bytes(at, &v.to_be_bytes())
    }

    /// A `__u32` in host order.
    pub fn u32(&mut self, at: usize, v: u32) -> &mut Self {
        self.bytes(at, &v.to_ne_bytes())
    }

    pub fn bytes(&mut self, at: usize, b: &[u8]) -> &mut Self {
        self.0[at..at + b.len()].copy_from_slice(b);
        self
    }

    /// A string into `char[size]` at `at`: at most `size - 1` bytes, the
    /// rest zero (NUL-terminated).
    pub fn cstr(&mut self, at: usize, size: usize, s: &str) -> &mut Self {
        let b = s.as_bytes();
        let n = b.len().min(size - 1);
        self.bytes(at, &b[..n])
    }

    /// The info as nft_compat carries it, padded to `XT_ALIGN`.
    pub fn finish(&mut self, name: &'static str, rev: u32) -> CompatInfo {
        let mut info = std::mem::take(&mut self.0);
        info.resize(xt_align(info.len()), 0);
        CompatInfo { name, rev, info }
    }
}

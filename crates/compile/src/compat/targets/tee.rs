//! `TEE` revision 1: `struct xt_tee_tginfo` — gateway (16 bytes), oif
//! `char[16]`, then the kernel's pointer (8-aligned, at 32).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::tee::{Tee, OIF_SIZE};

pub fn info(t: &Tee) -> CompatInfo {
    Layout::new(40)
        .bytes(0, &t.gw)
        .cstr(16, OIF_SIZE, &t.oif)
        .finish("TEE", 1)
}

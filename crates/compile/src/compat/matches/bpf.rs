//! `-m bpf` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;
use iptables::ext::matches as m;
use m::bpf::Program;

/// `struct xt_bpf_info_v1` (rev 1): mode u16 @0 (BYTECODE 0), program
/// length u16 @2, fd s32 @4, a union of sock_filter[64] (code u16, jt u8,
/// jf u8, k u32) and path[512] @8, the kernel's program pointer @520.
///
/// `None` for a pinned object: the kernel takes it as a file descriptor
/// of the loading process, which the caller has to open (BPF_OBJ_GET).
pub fn info(x: &m::bpf::Bpf) -> Option<CompatInfo> {
    let Some(Program::Bytecode(prog)) = &x.prog else {
        return None;
    };
    let mut i = Info::new(528);
    i.u16(2, prog.len() as u16);
    for (n, (code, jt, jf, k)) in prog.iter().enumerate() {
        let at = 8 + 8 * n;
        i.u16(at, *code)
            .u8(at + 2, *jt)
            .u8(at + 3, *jf)
            .u32(at + 4, *k);
    }
    Some(compat("bpf", 1, i))
}

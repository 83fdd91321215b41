//! `SET` revision 3: `struct xt_set_info_target_v3` — add, del and map
//! sets (`struct xt_set_info { ip_set_id_t index; __u8 dim, flags; }`,
//! 4 bytes each), then flags and timeout (u32 at 12 and 16).
//!
//! The set indexes are the kernel's: the caller resolves each name (a set
//! not given has IPSET_INVALID_ID).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::set::{SetRef, SetTarget};

/// IPSET_INVALID_ID
const INVALID_ID: u16 = 65535;
const FLAG_EXIST: u32 = 1 << 0;
const FLAG_MAP_SKBMARK: u32 = 1 << 8;
const FLAG_MAP_SKBPRIO: u32 = 1 << 9;
const FLAG_MAP_SKBQUEUE: u32 = 1 << 10;

/// One `xt_set_info` at `at`: dimension i (from 1) is a source when bit i
/// of its flags is set. `None` when the set has no index.
fn put(
    l: &mut Layout,
    at: usize,
    s: &Option<SetRef>,
    index_of: &impl Fn(&str) -> Option<u16>,
) -> Option<()> {
    let Some(s) = s else {
        l.u16(at, INVALID_ID);
        return Some(());
    };
    let mut flags = 0u8;
    for (i, src) in s.dirs.iter().enumerate() {
        if *src {
            flags |= 1 << (i + 1);
        }
    }
    l.u16(at, index_of(&s.name)?)
        .u8(at + 2, s.dirs.len() as u8)
        .u8(at + 3, flags);
    Some(())
}

/// The info with the sets' kernel indexes from `index_of`; `None` when a
/// set has none.
pub fn info(t: &SetTarget, index_of: impl Fn(&str) -> Option<u16>) -> Option<CompatInfo> {
    let mut l = Layout::new(20);
    put(&mut l, 0, &t.add, &index_of)?;
    put(&mut l, 4, &t.del, &index_of)?;
    put(&mut l, 8, &t.map, &index_of)?;
    let mut flags = 0;
    for (on, bit) in [
        (t.exist, FLAG_EXIST),
        (t.map_mark, FLAG_MAP_SKBMARK),
        (t.map_prio, FLAG_MAP_SKBPRIO),
        (t.map_queue, FLAG_MAP_SKBQUEUE),
    ] {
        if on {
            flags |= bit;
        }
    }
    l.u32(12, flags).u32(16, t.timeout.unwrap_or(u32::MAX));
    Some(l.finish("SET", 3))
}

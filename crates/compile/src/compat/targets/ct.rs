//! `CT` revision 2: `struct xt_ct_target_info_v1` — flags and zone (u16),
//! event masks (u32), helper `char[16]`, timeout `char[32]`, then the
//! kernel's conntrack template pointer (8-aligned, at 64).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::ct::{Ct, ZoneDir};

const NOTRACK: u16 = 1 << 0;
const ZONE_DIR_ORIG: u16 = 1 << 2;
const ZONE_DIR_REPL: u16 = 1 << 3;
const ZONE_MARK: u16 = 1 << 4;

pub fn info(t: &Ct) -> CompatInfo {
    let mut flags = 0;
    if t.notrack {
        flags |= NOTRACK;
    }
    flags |= match t.zone_dir {
        ZoneDir::Both => 0,
        ZoneDir::Orig => ZONE_DIR_ORIG,
        ZoneDir::Reply => ZONE_DIR_REPL,
    };
    if t.zone_mark {
        flags |= ZONE_MARK;
    }
    Layout::new(72)
        .u16(0, flags)
        .u16(2, t.zone)
        .u32(4, t.ct_events)
        .u32(8, t.exp_events)
        .cstr(12, 16, &t.helper)
        .cstr(28, 32, &t.timeout)
        .finish("CT", 2)
}

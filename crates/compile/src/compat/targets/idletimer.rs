//! `IDLETIMER` revision 1: `struct idletimer_tg_info_v1` — timeout (u32),
//! label `char[28]`, send_nl_msg and timer_type (u8 at 32, 33), then the
//! kernel's timer pointer (8-aligned, at 40).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::idletimer::{Idletimer, LABEL_SIZE};

/// XT_IDLETIMER_ALARM
const ALARM: u8 = 0x01;

pub fn info(t: &Idletimer) -> CompatInfo {
    Layout::new(48)
        .u32(0, t.timeout)
        .cstr(4, LABEL_SIZE, &t.label)
        .u8(32, u8::from(t.send_nl_msg))
        .u8(33, if t.alarm { ALARM } else { 0 })
        .finish("IDLETIMER", 1)
}

//! `LED` revision 0: `struct xt_led_info` — the trigger name `char[27]`
//! ("netfilter-" + id), always_blink (u8 at 27), delay (u32 at 28), then
//! the kernel's pointer (8-aligned, at 32).

use super::layout::Layout;
use crate::compat::CompatInfo;
use iptables::ext::targets::led::Led;

pub fn info(t: &Led) -> CompatInfo {
    Layout::new(40)
        .cstr(0, 27, &format!("netfilter-{}", t.id))
        .u8(27, u8::from(t.always_blink))
        .u32(28, t.delay)
        .finish("LED", 0)
}

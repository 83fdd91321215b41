//! `nfkeeper trace`'s packet description (`classify::describe`).
//!
//! Bytes become words (split on NUL if the input has one, else on ASCII
//! blanks). Properties: never panics; options that parse describe a packet
//! or an error naming the option; the packet's length covers its headers,
//! which build to exactly their modelled length; a hook is always chosen.
#![no_main]

use classify::describe::{hook_of, packet, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let words: Vec<String> = if text.contains('\0') {
        text.split('\0').map(String::from).collect()
    } else {
        text.split_ascii_whitespace().map(String::from).collect()
    };
    let Ok(o) = parse(&words) else { return };
    let _ = hook_of(&o);
    let Ok(p) = packet(&o) else { return };
    assert!(p.len >= p.min_len(), "{p:?}");
    let mut bytes = p.network_header();
    bytes.extend(p.transport_header().unwrap_or_default());
    assert_eq!(bytes.len(), usize::from(p.min_len()), "{p:?}");
});

//! The iptables-restore line tokenizer.
//!
//! Properties: never panics; its words respect the limits it enforces; and
//! the words, each re-quoted (`"` + `\`-escaped text + `"`) and joined by
//! spaces, tokenize back to the same words.
#![no_main]

use iptables::parse::restore::{tokenize, MAX_ARGC, MAX_PARAM};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let line = String::from_utf8_lossy(data);
    let Ok(words) = tokenize(&line) else { return };
    assert!(words.len() + 1 < MAX_ARGC, "too many words: {}", words.len());
    let mut quoted = String::new();
    for w in &words {
        if !quoted.is_empty() {
            quoted.push(' ');
        }
        quoted.push('"');
        for c in w.chars() {
            if c == '"' || c == '\\' {
                quoted.push('\\');
            }
            quoted.push(c);
        }
        quoted.push('"');
    }
    match tokenize(&quoted) {
        Ok(again) => assert_eq!(words, again, "re-quoted: {quoted:?}"),
        // Escaped characters skip the word length check, so a word built
        // with escapes may exceed it; re-quoted, its plain characters are
        // checked and it is then (rightly) too long.
        Err(_) => assert!(
            words.iter().any(|w| w.len() >= MAX_PARAM),
            "re-quoted words fail to tokenize: {quoted:?}"
        ),
    }
});

//! One structured line per event on stderr (`key=value`, values with
//! spaces quoted), prefixed with the UTC time: journald and plain files
//! both take it as is.

use std::io::Write;

pub fn line(kv: &str) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "ts={}.{:06} {kv}", now.as_secs(), now.subsec_micros());
}

//! Helpers shared by the targets (included with `mod common;`).
#![allow(dead_code)]

/// Options whose values the save form quotes (`opt::save_string`).
const QUOTED: [&str; 4] = ["--comment", "--log-prefix", "--nflog-prefix", "--nfacct-name"];

/// Whether the save form can carry these words: iptables (and we) print
/// names (chains, interfaces, most extension strings) unquoted, so a word
/// with a quote, backslash or blank only survives as a quoted option value.
pub fn carried(words: &[&str]) -> bool {
    let special = |w: &str| w.contains(|c: char| c == '"' || c == '\\' || c.is_ascii_whitespace());
    let quoted_opt = |w: &str| w.len() >= 4 && QUOTED.iter().any(|o| o.starts_with(w));
    words.iter().enumerate().all(|(i, w)| {
        if !special(w) {
            return true;
        }
        if let Some((o, _)) = w.split_once('=') {
            if o.starts_with("--") && quoted_opt(o) {
                return true;
            }
        }
        i > 0 && quoted_opt(words[i - 1])
    })
}

/// Whether every rule line of restore input passes [`carried`] (the line
/// split as the restorer splits it); lines the restorer rejects don't matter.
pub fn restore_carried(input: &str) -> bool {
    input.split('\n').all(|line| {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() || line.starts_with(['#', '*', ':']) || line == "COMMIT" {
            return true;
        }
        let body = match line.strip_prefix('[') {
            Some(rest) => rest.split_once(']').map_or("", |(_, b)| b),
            None => line,
        };
        match iptables::parse::restore::tokenize(body) {
            Ok(words) => carried(&words.iter().map(String::as_str).collect::<Vec<_>>()),
            Err(_) => true,
        }
    })
}

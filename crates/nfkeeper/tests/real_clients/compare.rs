//! What the two sides' runs are compared by: saves with `#` lines dropped,
//! counters zeroed and ipset's random `initval` dropped; logged errors with
//! ids masked; steps as they are.

use crate::harness::Client;
use crate::run::Outcome;

/// A save as compared: `#` lines dropped, counters zeroed, ipset's random
/// `initval` dropped.
pub fn normalize_save(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let l = zero_counters(l);
            match l.find(" initval 0x") {
                Some(i) => {
                    let rest = &l[i + " initval 0x".len()..];
                    let end = rest.find(' ').unwrap_or(rest.len());
                    format!("{}{}", &l[..i], &rest[end..])
                }
                None => l,
            }
        })
        .collect()
}

/// `[packets:bytes]` → `[0:0]` (chain policies and `-c` counters).
fn zero_counters(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else {
            break;
        };
        let inner = &rest[open + 1..close];
        out.push_str(&rest[..open]);
        match inner.split_once(':') {
            Some((p, b))
                if !p.is_empty()
                    && !b.is_empty()
                    && (p.bytes().chain(b.bytes())).all(|c| c.is_ascii_digit()) =>
            {
                out.push_str("[0:0]")
            }
            _ => out.push_str(&rest[open..=close]),
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Logged errors as compared: runs of 12 or more hex digits (object
/// addresses, container and network ids) become `<id>`.
pub fn normalize_errors(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let mut out = String::new();
            let mut run = String::new();
            for ch in l.chars().chain(std::iter::once('\n')) {
                if ch.is_ascii_hexdigit() {
                    run.push(ch);
                    continue;
                }
                if run.len() >= 12 {
                    out.push_str("<id>");
                } else {
                    out.push_str(&run);
                }
                run.clear();
                if ch != '\n' {
                    out.push(ch);
                }
            }
            out
        })
        .collect()
}

/// The differences between the sides, one message each.
pub fn differences(
    c: &Client,
    nft: &Outcome,
    nfk: &Outcome,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let mut diffs = Vec::new();
    if nft.steps != nfk.steps {
        diffs.push(format!(
            "steps (name exit-code) differ:\n--- iptables-nft\n{}--- nfkeeper\n{}",
            nft.steps, nfk.steps
        ));
    }
    let (e_nft, e_nfk) = (normalize_errors(&nft.errors), normalize_errors(&nfk.errors));
    if e_nft != e_nfk {
        diffs.push(format!(
            "logged errors differ:\n{}",
            line_diff(&e_nft, &e_nfk)
        ));
    }
    let names: Vec<&String> = nft.saves.keys().chain(nfk.saves.keys()).collect();
    let mut seen = std::collections::BTreeSet::new();
    for name in names {
        if name.ends_with(".bypass") || name.ends_with(".verify") || !seen.insert(name) {
            continue;
        }
        let snap = name.rsplit_once('.').map_or(name.as_str(), |(s, _)| s);
        // A kernel hash set lists its members in hash order, seeded by its
        // random initval: ipset saves are compared as sorted lines.
        let unordered = name.ends_with(".ipset") || nft.unordered.iter().any(|u| u == snap);
        let get = |o: &Outcome| {
            let mut v = normalize_save(o.saves.get(name).map_or("", String::as_str));
            if unordered {
                v.sort();
            }
            v
        };
        let (mut a, b) = (get(nft), get(nfk));
        a.retain(|l| {
            let known = c.known.iter().find(|k| l.contains(k.signature));
            match known {
                Some(k) if !b.contains(l) => {
                    let note = format!("nfkeeper lacks `{l}`: {}", k.why);
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                    false
                }
                _ => true,
            }
        });
        if a != b {
            diffs.push(format!("{name} differs:\n{}", line_diff(&a, &b)));
        }
    }
    for (name, text) in nfk.saves.iter().filter(|(n, _)| n.ends_with(".bypass")) {
        if text.lines().any(|l| !l.starts_with('#') && !l.is_empty()) {
            diffs.push(format!(
                "{name}: iptables-nft tables appeared under nfkeeper:\n{text}"
            ));
        }
    }
    for (name, text) in nfk.saves.iter().filter(|(n, _)| n.ends_with(".verify")) {
        if text != "verify exit 0\n" {
            diffs.push(format!(
                "{name}: nfkeeper verify found differences:\n{text}"
            ));
        }
    }
    diffs
}

/// Lines only on one side (`-` iptables-nft, `+` nfkeeper), in order, after
/// the longest common prefix and suffix.
fn line_diff(a: &[String], b: &[String]) -> String {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut s = format!("(from line {})\n", pre + 1);
    for l in &a[pre..a.len() - suf] {
        s += &format!("- {l}\n");
    }
    for l in &b[pre..b.len() - suf] {
        s += &format!("+ {l}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_lose_comments_counters_and_initval() {
        let cases: &[(&str, &[&str])] = &[
            (
                "# Generated by x\n*filter\n:INPUT ACCEPT [12:3400]\n[5:6] -A INPUT -j ACCEPT\nCOMMIT\n",
                &["*filter", ":INPUT ACCEPT [0:0]", "[0:0] -A INPUT -j ACCEPT", "COMMIT"],
            ),
            (
                "-A X -m comment --comment \"[a:b] [1:]\" -j ACCEPT",
                &["-A X -m comment --comment \"[a:b] [1:]\" -j ACCEPT"],
            ),
            (
                "create s hash:ip family inet hashsize 1024 maxelem 65536 timeout 0 bucketsize 12 initval 0xa224b0a6",
                &["create s hash:ip family inet hashsize 1024 maxelem 65536 timeout 0 bucketsize 12"],
            ),
            (
                "create s hash:ip initval 0x1 timeout 5",
                &["create s hash:ip timeout 5"],
            ),
        ];
        for (text, want) in cases {
            assert_eq!(normalize_save(text), *want, "{text}");
        }
    }

    #[test]
    fn errors_mask_long_hex_ids() {
        let cases: &[(&str, &str)] = &[
            (
                "ERROR   7f5cc5c803d0 -- returned 2",
                "ERROR   <id> -- returned 2",
            ),
            (
                "network br-a48a1619cc3d at 0x7f5cc5e9a5c0>",
                "network br-<id> at 0x<id>>",
            ),
            ("port 8080 deadbeef", "port 8080 deadbeef"),
        ];
        for (text, want) in cases {
            assert_eq!(normalize_errors(text), vec![want.to_string()], "{text}");
        }
    }

    #[test]
    fn line_diff_shows_the_middle_that_differs() {
        let v = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        let cases: &[(&[&str], &[&str], &str)] = &[
            (
                &["a", "b", "c"],
                &["a", "x", "c"],
                "(from line 2)\n- b\n+ x\n",
            ),
            (&["a", "b"], &["a"], "(from line 2)\n- b\n"),
            (&["a"], &["b", "a"], "(from line 1)\n+ b\n"),
        ];
        for (a, b, want) in cases {
            assert_eq!(line_diff(&v(a), &v(b)), *want, "{a:?} {b:?}");
        }
    }
}

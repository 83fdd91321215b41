//! `-sorted`: ipset's member comparison (runs of hex digits compare as
//! numbers, `/prefix` and IPv6 `::` are handled specially, other text by
//! its fields up to `:` or `,`).

use crate::num;
use std::cmp::Ordering;

fn strtol16(s: &[u8]) -> (i64, usize) {
    let text = std::str::from_utf8(s).unwrap_or("");
    let (v, used, overflow) = num::strtoull(text, 16);
    let neg = text.trim_start().starts_with('-');
    let v = if overflow {
        if neg {
            i64::MIN
        } else {
            i64::MAX
        }
    } else {
        v as i64
    };
    (v, used)
}

fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

fn cstr_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let end = |s: &[u8]| s.iter().position(|&c| c == 0).unwrap_or(s.len());
    a[..end(a)].cmp(&b[..end(b)])
}

/// Compare two member texts (after any line prefix) as ipset sorts them.
pub fn compare(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0usize, 0usize);
    let mut neg: i64 = 1;
    while at(a, i) != 0 && at(b, j) != 0 {
        let (n1, u1) = strtol16(&a[i..]);
        let (n2, u2) = strtol16(&b[j..]);
        if u1 == 0 || u2 == 0 {
            let span = |s: &[u8], k: usize| {
                s[k..]
                    .iter()
                    .position(|&c| c == b':' || c == b',')
                    .unwrap_or(s.len() - k)
            };
            let (l1, l2) = (span(a, i), span(b, j));
            if l1 != 0 || l2 != 0 {
                if l1 == l2 {
                    let c = a[i..i + l1].cmp(&b[j..j + l2]);
                    if c == Ordering::Equal {
                        i += l1 + 1;
                        j += l1 + 1;
                        neg = 1;
                        continue;
                    }
                    return c;
                }
                return l1.cmp(&l2);
            }
            return cstr_cmp(&a[i..], &b[j..]);
        }
        if n1 != n2 {
            let d = (neg.wrapping_mul(n1.wrapping_sub(n2))) as i32;
            return d.cmp(&0);
        }
        let (s1, s2) = (i + u1, j + u2);
        let (c1, c2) = (at(a, s1), at(b, s2));
        if c1 == b'/' || c2 == b'/' {
            if c1 == c2 {
                neg = if c1 == b'/' { -1 } else { 1 };
            } else if c1 == b'/' {
                return Ordering::Greater;
            } else {
                return Ordering::Less;
            }
        }
        i = s1 + 1;
        j = s2 + 1;
        let (d1, d2) = (at(a, i), at(b, j));
        if d1 == b':' || d2 == b':' {
            if d1 == d2 {
                i += 1;
                j += 1;
            } else if d1 == b':' {
                return Ordering::Less;
            } else {
                return Ordering::Greater;
            }
        }
    }
    if at(a, i) != 0 {
        Ordering::Greater
    } else if at(b, j) != 0 {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_fields_sort_numerically() {
        let mut v = vec![
            "10.10.0.10",
            "10.10.0.2",
            "10.10.0.1",
            "192.168.0.0/16",
            "192.168.0.0/24",
            "2.0.0.1",
            "10.10.1.0",
        ];
        v.sort_by(|a, b| compare(a, b));
        assert_eq!(
            v,
            [
                "2.0.0.1",
                "10.10.0.1",
                "10.10.0.2",
                "10.10.0.10",
                "10.10.1.0",
                "192.168.0.0/24",
                "192.168.0.0/16"
            ]
        );
        assert_eq!(compare("1::2", "1::10"), Ordering::Less);
        assert_eq!(compare("1.1.1.1,tcp:80", "1.1.1.1,udp:53"), Ordering::Less);
        assert_eq!(compare("a", "a"), Ordering::Equal);
    }
}

//! A common subsequence of two sequences: which old kernel rules a chain
//! rewrite can keep (see `super::rewrite`).
//!
//! Common prefix and suffix first (a rewrite with the same content costs
//! O(n) and no allocation beyond the result); the middle by Myers' O((N+M)·D)
//! shortest edit script while the edit distance D stays under
//! [`MYERS_LIMIT`] (its trace is O(D²) memory), else by a greedy in-order
//! match (O(N+M) expected; a valid common subsequence, possibly shorter
//! than the longest). Any common subsequence is correct; a longer one only
//! keeps more rules.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// Edit distance above which the middle is matched greedily.
const MYERS_LIMIT: usize = 1024;

/// Index pairs `(i, j)` with `a[i] == b[j]`, strictly increasing in both.
pub(crate) fn common<T: Eq + Hash>(a: &[T], b: &[T]) -> Vec<(usize, usize)> {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut out: Vec<(usize, usize)> = (0..pre).map(|i| (i, i)).collect();
    if !ma.is_empty() && !mb.is_empty() {
        // The middle compared as small numbers, one per distinct element
        // (one hash each, then O((N+M)·D) integer compares).
        let mut keys: HashMap<&T, u32> = HashMap::new();
        let mut key = |x| {
            let n = keys.len() as u32;
            *keys.entry(x).or_insert(n)
        };
        let ka: Vec<u32> = ma.iter().map(&mut key).collect();
        let kb: Vec<u32> = mb.iter().map(&mut key).collect();
        let mid = myers(&ka, &kb).unwrap_or_else(|| greedy(&ka, &kb));
        out.extend(mid.into_iter().map(|(i, j)| (i + pre, j + pre)));
    }
    let (ta, tb) = (a.len() - suf, b.len() - suf);
    out.extend((0..suf).map(|k| (ta + k, tb + k)));
    out
}

/// Myers' greedy shortest edit script; `None` past [`MYERS_LIMIT`].
fn myers<T: Eq>(a: &[T], b: &[T]) -> Option<Vec<(usize, usize)>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    let off = max as isize + 1;
    let mut v = vec![0isize; 2 * max + 3];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let idx = |k: isize| (k + off) as usize;
    for d in 0..=(max.min(MYERS_LIMIT) as isize) {
        // Step d reads diagonals -d-1..=d+1 of the step before.
        trace.push(v[idx(-d - 1)..=idx(d + 1)].to_vec());
        let mut k = -d;
        while k <= d {
            let mut x = if k == -d || (k != d && v[idx(k - 1)] < v[idx(k + 1)]) {
                v[idx(k + 1)]
            } else {
                v[idx(k - 1)] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[idx(k)] = x;
            if x >= n && y >= m {
                return Some(backtrack(&trace, n, m, d));
            }
            k += 2;
        }
    }
    None
}

/// The matches along the path found at depth `depth`; `trace[d]` holds
/// diagonals `-d-1..=d+1` as they were before step `d`.
fn backtrack(trace: &[Vec<isize>], n: isize, m: isize, depth: isize) -> Vec<(usize, usize)> {
    let (mut x, mut y) = (n, m);
    let mut pairs = Vec::new();
    for d in (0..=depth).rev() {
        let v = &trace[d as usize];
        let idx = |k: isize| (k + d + 1) as usize;
        let k = x - y;
        let pk = if k == -d || (k != d && v[idx(k - 1)] < v[idx(k + 1)]) {
            k + 1
        } else {
            k - 1
        };
        let px = v[idx(pk)];
        let py = px - pk;
        while x > px && y > py {
            x -= 1;
            y -= 1;
            pairs.push((x as usize, y as usize));
        }
        if d > 0 {
            x = px;
            y = py;
        }
    }
    pairs.reverse();
    pairs
}

/// Each `b[j]`, in order, matched to the first equal `a[i]` after the last
/// match.
fn greedy<T: Eq + Hash>(a: &[T], b: &[T]) -> Vec<(usize, usize)> {
    let mut at: HashMap<&T, VecDeque<usize>> = HashMap::new();
    for (i, x) in a.iter().enumerate() {
        at.entry(x).or_default().push_back(i);
    }
    let mut out = Vec::new();
    let mut next = 0;
    for (j, y) in b.iter().enumerate() {
        let Some(q) = at.get_mut(y) else { continue };
        while q.front().is_some_and(|&i| i < next) {
            q.pop_front();
        }
        if let Some(i) = q.pop_front() {
            out.push((i, j));
            next = i + 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(a: &[u8], b: &[u8], p: &[(usize, usize)]) {
        for w in p.windows(2) {
            assert!(w[0].0 < w[1].0 && w[0].1 < w[1].1, "{p:?}");
        }
        for &(i, j) in p {
            assert_eq!(a[i], b[j]);
        }
    }

    #[test]
    fn longest_common_subsequence() {
        // (old, new, length of the longest common subsequence)
        let cases: &[(&str, &str, usize)] = &[
            ("", "", 0),
            ("abc", "", 0),
            ("", "abc", 0),
            ("abcdef", "abcdef", 6),
            ("abcdef", "abXdef", 5),
            ("abcdef", "abdef", 5),
            ("abcdef", "bcdefa", 5),
            ("abcdef", "fabcde", 5),
            ("abcdef", "fedcba", 1),
            ("abcabba", "cbabac", 4),
            ("aaaa", "aa", 2),
            ("xyz", "abc", 0),
        ];
        for (a, b, want) in cases {
            let (a, b) = (a.as_bytes(), b.as_bytes());
            let p = common(a, b);
            valid(a, b, &p);
            assert_eq!(p.len(), *want, "{:?} {:?}", a, b);
        }
    }

    #[test]
    fn greedy_is_a_common_subsequence() {
        let cases: &[(&str, &str, usize)] = &[
            ("abcdef", "bcdefa", 5),
            ("abcdef", "fabcde", 1),
            ("abab", "baba", 3),
            ("xyz", "abc", 0),
        ];
        for (a, b, want) in cases {
            let (a, b) = (a.as_bytes(), b.as_bytes());
            let p = greedy(a, b);
            valid(a, b, &p);
            assert_eq!(p.len(), *want, "{:?} {:?}", a, b);
        }
    }
}

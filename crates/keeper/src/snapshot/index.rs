//! A snapshot's index: where the chain declarations, each chain's rules
//! and the foreign-object lines are in the file, so that a read of one
//! chain (`-S CHAIN [N]`, `-C`) loads that chain and the declarations only
//! (O(chain) instead of O(table): 160 ms → ~1 ms for a chain of 1 000 in
//! a table of 1M rules).
//!
//! Format, after the snapshot's text and foreign lines: one `# index …`
//! line per section (`decls START END`, `foreign START END`,
//! `chain NAME START END`, and `ref NAME START END` for every rule line
//! that jumps or goes to chain NAME, which a listing's reference count
//! needs; byte offsets in the file, END exclusive), then
//! `# index-at OFFSET` (where the first index line starts) as the file's
//! last line. A table whose declarations or chains are not each one
//! contiguous block gets no index (readers then load the whole text).

use ruleset::hash::{FxMap, FxSet};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

/// Builds the index while the snapshot's lines are written.
#[derive(Default)]
pub struct Indexer {
    /// Bytes written so far (the header included).
    offset: u64,
    decls: Option<(u64, u64)>,
    chains: Vec<(String, u64, u64)>,
    seen: FxMap<String, usize>,
    foreign: Option<(u64, u64)>,
    /// Rule lines that name each chain as their `-j`/`-g` target.
    refs: Vec<(String, u64, u64)>,
    /// Hashes of the user-defined chains declared so far (`:NAME - [0:0]`):
    /// the only possible jump targets (declarations come before the rules).
    /// A hash, not the name: no allocation per chain; a collision only adds
    /// a `ref` line, which readers parse as the rule it is.
    user: FxSet<u64>,
    /// Some section was not contiguous: no index.
    broken: bool,
}

impl Indexer {
    /// An indexer for a file whose first `offset` bytes (the header) are
    /// already written.
    pub fn at(offset: u64) -> Indexer {
        Indexer {
            offset,
            ..Indexer::default()
        }
    }

    /// Account for `b` (whole lines) written at the current offset.
    pub fn write(&mut self, b: &[u8]) {
        for line in b.split_inclusive(|&c| c == b'\n') {
            let (start, end) = (self.offset, self.offset + line.len() as u64);
            self.offset = end;
            if let Some(decl) = line.strip_prefix(b":") {
                let mut w = decl.split(|&c| c == b' ');
                if let (Some(name), Some(b"-")) = (w.next(), w.next()) {
                    self.user.insert(name_hash(name));
                }
                match &mut self.decls {
                    Some((_, e)) if *e == start => *e = end,
                    Some(_) => self.broken = true,
                    None => self.decls = Some((start, end)),
                }
            } else if let Some(rest) = line.strip_prefix(b"-A ") {
                let name = rest
                    .split(|&c| c == b' ' || c == b'\n')
                    .next()
                    .unwrap_or(b"");
                let name = String::from_utf8_lossy(name);
                let text = String::from_utf8_lossy(rest);
                for t in targets(&text) {
                    if self.user.contains(&name_hash(t.as_bytes())) {
                        self.refs.push((t.to_string(), start, end));
                    }
                }
                match self.chains.last_mut() {
                    Some((n, _, e)) if *n == name && *e == start => *e = end,
                    _ => {
                        if self.seen.contains_key(name.as_ref()) {
                            self.broken = true;
                        }
                        self.seen.insert(name.to_string(), self.chains.len());
                        self.chains.push((name.into_owned(), start, end));
                    }
                }
            } else if line.starts_with(b"# foreign: ") {
                match &mut self.foreign {
                    Some((_, e)) if *e == start => *e = end,
                    Some(_) => self.broken = true,
                    None => self.foreign = Some((start, end)),
                }
            }
        }
    }

    /// The index lines to append (at the current offset), or nothing.
    pub fn render(&self) -> String {
        if self.broken {
            return String::new();
        }
        let at = self.offset;
        let (ds, de) = self.decls.unwrap_or((at, at));
        let (fs, fe) = self.foreign.unwrap_or((at, at));
        let mut s = format!("# index decls {ds} {de}\n# index foreign {fs} {fe}\n");
        for (n, a, b) in &self.chains {
            s.push_str(&format!("# index chain {n} {a} {b}\n"));
        }
        for (n, a, b) in &self.refs {
            s.push_str(&format!("# index ref {n} {a} {b}\n"));
        }
        s.push_str(&format!("# index-at {at}\n"));
        s
    }
}

fn name_hash(name: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    ruleset::hash::FxBuild::default().hash_one(name)
}

/// The chains a rule line (after `-A `) names as its `-j`/`-g` target
/// (built-in targets included; a word inside a quoted comment may be
/// taken too, which only adds a line the reader then parses as the rule it
/// is).
fn targets(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for flag in [" -j ", " -g "] {
        for (i, _) in text.match_indices(flag) {
            let t = text[i + flag.len()..]
                .split([' ', '\n'])
                .next()
                .unwrap_or("");
            if !t.is_empty() && !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// What a snapshot holds for one chain: the table's chain declarations,
/// that chain's rules and the other rules that jump or go to it (save
/// text), and the foreign-object lines.
pub struct ChainPart {
    pub text: String,
    pub foreign: Vec<String>,
}

fn read_at(f: &mut File, start: u64, end: u64) -> io::Result<String> {
    let mut b = vec![0; end.saturating_sub(start) as usize];
    f.seek(SeekFrom::Start(start))?;
    f.read_exact(&mut b)?;
    String::from_utf8(b).map_err(io::Error::other)
}

/// Where the sections of the snapshot file `f` are, by its index.
struct Sections {
    decls: Option<(u64, u64)>,
    foreign: Option<(u64, u64)>,
    /// The chain asked for.
    part: Option<(u64, u64)>,
    /// Rule lines of other chains that jump or go to it.
    refs: Vec<(u64, u64)>,
}

/// The sections of `f` (of length `len`) for chain `chain`; `None` when
/// the file has no index or it does not parse.
fn sections(f: &mut File, len: u64, chain: &str) -> Option<Sections> {
    let tail_len = len.min(64);
    let tail = read_at(f, len - tail_len, len).ok()?;
    let at: u64 = tail
        .trim_end()
        .rsplit('\n')
        .next()?
        .strip_prefix("# index-at ")?
        .parse()
        .ok()?;
    let index = read_at(f, at, len).ok()?;
    let mut s = Sections {
        decls: None,
        foreign: None,
        part: None,
        refs: Vec::new(),
    };
    for line in index.lines() {
        if line.starts_with("# index-at ") {
            break;
        }
        let mut w = line.strip_prefix("# index ")?.split(' ');
        let what = w.next()?;
        let name = if what == "chain" || what == "ref" {
            w.next()?
        } else {
            ""
        };
        let (Some(a), Some(b)) = (w.next(), w.next()) else {
            continue;
        };
        let (a, b): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
        if a > b || b > at {
            return None;
        }
        match what {
            "decls" => s.decls = Some((a, b)),
            "foreign" => s.foreign = Some((a, b)),
            "chain" if name == chain => s.part = Some((a, b)),
            "ref" if name == chain => s.refs.push((a, b)),
            _ => {}
        }
    }
    Some(s)
}

fn foreign_lines(f: &mut File, at: Option<(u64, u64)>) -> Option<Vec<String>> {
    Some(match at {
        Some((a, b)) => read_at(f, a, b)
            .ok()?
            .lines()
            .filter_map(|l| l.strip_prefix("# foreign: "))
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    })
}

/// Chain `chain` of the snapshot file `f` (of length `len`) read as a
/// stream: `visit` sees the chain's rule lines in order (bytes, without
/// the newline) until it returns false; returns the chain declarations (save
/// text) and the foreign-object lines. O(bytes of the chain up to where
/// `visit` stops) and no copy of the chain: `-S CHAIN 1` of a chain of
/// 100k rules reads one block. `None` when the file has no index.
pub fn scan_chain(
    f: &mut File,
    len: u64,
    chain: &str,
    visit: &mut dyn FnMut(&[u8]) -> bool,
) -> Option<(String, Vec<String>)> {
    let s = sections(f, len, chain)?;
    let (ds, de) = s.decls?;
    let decls = read_at(f, ds, de).ok()?;
    if let Some((a, b)) = s.part {
        f.seek(SeekFrom::Start(a)).ok()?;
        let mut r = io::BufReader::with_capacity(64 << 10, Read::take(&mut *f, b - a));
        // Bytes, not `str`: no UTF-8 check of lines nobody looks at.
        let mut line = Vec::new();
        loop {
            line.clear();
            if io::BufRead::read_until(&mut r, b'\n', &mut line).ok()? == 0 {
                break;
            }
            let l = line.strip_suffix(b"\n").unwrap_or(&line);
            if !visit(l) {
                break;
            }
        }
    }
    let foreign = foreign_lines(f, s.foreign)?;
    Some((decls, foreign))
}

/// Chain `chain`'s part of the snapshot file `f` (its header already
/// checked by the caller), by its index; `None` when the file has no index.
/// A chain without rules (or not declared) yields the declarations alone.
pub fn read_chain(f: &mut File, len: u64, chain: &str) -> Option<ChainPart> {
    let Sections {
        decls,
        foreign,
        part,
        refs,
    } = sections(f, len, chain)?;
    let (ds, de) = decls?;
    let mut text = read_at(f, ds, de).ok()?;
    if let Some((a, b)) = part {
        text.push_str(&read_at(f, a, b).ok()?);
    }
    // The rules of other chains that jump to this one (a listing counts
    // them); the chain's own are in already.
    for (a, b) in refs {
        if part.is_some_and(|(s, e)| a >= s && b <= e) {
            continue;
        }
        text.push_str(&read_at(f, a, b).ok()?);
    }
    let foreign = foreign_lines(f, foreign)?;
    Some(ChainPart { text, foreign })
}

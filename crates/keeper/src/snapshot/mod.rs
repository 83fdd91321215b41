//! Snapshots: what a full read of one of our tables found, kept in a file
//! and trusted only while the kernel's ruleset generation is the one it was
//! taken at, so reads without a daemon cost O(output) instead of a kernel
//! dump (which restarts from the chain's or set's head for every reply:
//! seconds at 100k rules).
//!
//! The kernel stays the source of truth: every change to any nftables
//! object of the namespace — ours, `nft`'s, anyone's — bumps the
//! generation, and a snapshot of another generation is never used. What
//! changes without a new generation is never in a snapshot: counters (rule
//! counters are not kept; base-chain policy counters are read live on each
//! use) and dynamic set contents (tables with them are not snapshotted).
//!
//! A snapshot is the table's iptables-save text without counters and
//! without comment lines, after a header naming the generation and the
//! foreign objects the read found. Files live in a root-owned directory
//! (`/run/nfkeeper/snap` by default), named by the namespace's cookie
//! (unique for the boot, unlike its inode), the family and the table;
//! at most [`KEEP`] are kept (oldest removed first).

mod index;

pub use index::ChainPart;
use index::Indexer;
use ruleset::{Family, TableKind};
use std::fs::File;
use std::io::{self, BufRead, BufWriter, Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Snapshot files kept after pruning (at most twice as many between
/// prunings, see [`prune`]).
const KEEP: usize = 64;

/// A table whose snapshot would be smaller than this (bytes of save text,
/// a few dozen rules) gets none: writing, renaming and pruning a file
/// (~0.1–0.2 ms) costs more than reading such a table from the kernel. At
/// 100 rules the snapshot already pays (`-S X 1`: 0.8 ms from it, 1.4–2 ms
/// from the kernel; bench ruleset 2.8).
pub const MIN_BYTES: usize = 2 << 10;

const MAGIC: &str = "nfkeeper-snapshot 1";

/// Where a table's snapshot is.
#[derive(Clone, Debug)]
pub struct Slot {
    path: PathBuf,
    dir: PathBuf,
}

impl Slot {
    /// The slot of table `kind` of `family` in the namespace with `cookie`.
    pub fn new(dir: &Path, cookie: u64, family: Family, kind: TableKind) -> Slot {
        let fam = if family == Family::Ipv4 { "ip" } else { "ip6" };
        Slot {
            path: dir.join(format!("{cookie:016x}-{fam}-{}", kind.name())),
            dir: dir.to_path_buf(),
        }
    }

    /// The snapshot if it was taken at generation `genid`: its foreign
    /// object descriptions and its save text. Files not owned by root (or
    /// by us) or writable by others are not trusted.
    pub fn load(&self, genid: u32) -> Option<(Vec<String>, String)> {
        let (f, len) = self.open(genid)?;
        let mut r = io::BufReader::new(f);
        let mut head = String::new();
        r.read_line(&mut head).ok()?;
        let mut text = String::with_capacity(len as usize);
        r.read_to_string(&mut text).ok()?;
        // The foreign objects the read found, then the index, follow the
        // save text.
        let end = [text.find("\n# foreign: "), text.find("\n# index ")]
            .into_iter()
            .flatten()
            .min()
            .map_or(text.len(), |i| i + 1);
        let foreign = text[end..]
            .lines()
            .filter_map(|l| l.strip_prefix("# foreign: "))
            .map(str::to_string)
            .collect();
        text.truncate(end);
        Some((foreign, text))
    }

    /// Chain `chain`'s part of the snapshot taken at generation `genid`:
    /// the chain declarations and its rules, read by the snapshot's index
    /// (O(chain)). `None` when there is no such snapshot or it has no
    /// index (then [`Slot::load`] the whole).
    pub fn load_chain(&self, genid: u32, chain: &str) -> Option<ChainPart> {
        let (mut f, len) = self.open(genid)?;
        index::read_chain(&mut f, len, chain)
    }

    /// Rule `n` (1-based) of chain `chain` in the snapshot taken at
    /// generation `genid`: the declarations, that rule's save line (`None`
    /// when the chain has fewer rules) and the foreign-object lines; read
    /// up to that rule ([`index::scan_chain`]). `None` when there is no
    /// such snapshot or it has no index.
    pub fn chain_rule(&self, genid: u32, chain: &str, n: usize) -> Option<ChainRule> {
        let (mut f, len) = self.open(genid)?;
        let (mut k, mut rule) = (0, None);
        let (decls, foreign) = index::scan_chain(&mut f, len, chain, &mut |l| {
            k += 1;
            if k == n {
                rule = Some(String::from_utf8_lossy(l).into_owned());
            }
            k < n
        })?;
        Some(ChainRule {
            decls,
            rule,
            foreign,
        })
    }

    /// Which of `lines` are rule lines of chain `chain` in the snapshot
    /// taken at generation `genid` (one pass that stops when all are
    /// found), with the declarations and the foreign-object lines.
    pub fn chain_has(
        &self,
        genid: u32,
        chain: &str,
        lines: &[String],
    ) -> Option<(Vec<bool>, String, Vec<String>)> {
        let (mut f, len) = self.open(genid)?;
        let mut found = vec![false; lines.len()];
        let mut left = lines.len();
        let (decls, foreign) = index::scan_chain(&mut f, len, chain, &mut |l| {
            for (i, want) in lines.iter().enumerate() {
                if !found[i] && want.as_bytes() == l {
                    found[i] = true;
                    left -= 1;
                }
            }
            left > 0
        })?;
        Some((found, decls, foreign))
    }

    /// The snapshot file if it is trusted (owned by root or by us, not
    /// writable by others) and taken at generation `genid`; and its length.
    fn open(&self, genid: u32) -> Option<(File, u64)> {
        let f = File::open(&self.path).ok()?;
        let m = f.metadata().ok()?;
        let euid = rustix::process::geteuid().as_raw();
        if (m.uid() != 0 && m.uid() != euid) || m.mode() & 0o022 != 0 {
            return None;
        }
        // The header: one line of at most ~32 bytes.
        let mut head = [0u8; 40];
        let n = (&f).read(&mut head).ok()?;
        let line = head[..n].split(|&c| c == b'\n').next()?;
        let g: u32 = std::str::from_utf8(line)
            .ok()?
            .strip_prefix(MAGIC)?
            .trim()
            .parse()
            .ok()?;
        if g != genid {
            return None;
        }
        (&f).seek(io::SeekFrom::Start(0)).ok()?;
        Some((f, m.len()))
    }

    /// Forget the snapshot (the table changed in a way not recorded).
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }

    /// Start writing a snapshot taken at generation `genid`. The file is
    /// created once the text reaches [`MIN_BYTES`]; a smaller table gets
    /// no snapshot.
    pub fn writer(&self, genid: u32) -> Option<SnapWriter> {
        let tmp = self
            .path
            .with_extension(format!("tmp{}", std::process::id()));
        let pending = format!("{MAGIC} {genid}\n").into_bytes();
        Some(SnapWriter {
            w: None,
            index: Indexer::at(pending.len() as u64),
            pending,
            tmp,
            slot: self.clone(),
            line: Vec::new(),
            failed: false,
        })
    }

    fn create(&self, tmp: &Path) -> io::Result<BufWriter<File>> {
        std::fs::create_dir_all(&self.dir)?;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(tmp)?;
        Ok(BufWriter::with_capacity(1 << 16, f))
    }
}

/// A snapshot being written; text goes in as save (or `-S`) output and is
/// kept normalised: no comment lines, no rule counters, chain lines as
/// `:NAME POLICY [0:0]`.
pub struct SnapWriter {
    /// The file, once the text reached [`MIN_BYTES`]; until then the text
    /// is in `pending`.
    w: Option<BufWriter<File>>,
    pending: Vec<u8>,
    /// Where each chain's lines are (written after the text).
    index: Indexer,
    tmp: PathBuf,
    slot: Slot,
    /// An incomplete line from the last write.
    line: Vec<u8>,
    failed: bool,
}

impl SnapWriter {
    /// Take `b` (any split of the text).
    /// A whole line of `b` goes to [`Self::put`] straight from `b`; only a
    /// line split across calls is copied (no allocation per line).
    pub fn feed(&mut self, mut b: &[u8]) {
        while let Some(nl) = b.iter().position(|&c| c == b'\n') {
            let (head, rest) = b.split_at(nl + 1);
            b = rest;
            if self.line.is_empty() {
                self.put(head);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(head);
                self.put(&line);
                line.clear();
                self.line = line;
            }
        }
        self.line.extend_from_slice(b);
    }

    /// One whole line, ending in '\n'.
    fn put(&mut self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let norm: std::borrow::Cow<str> = if text.starts_with('#') {
            return;
        } else if let Some(rest) = text.strip_prefix('[') {
            // `[p:b] -A ...` → `-A ...`
            match rest.split_once("] ") {
                Some((_, r)) => r.into(),
                None => text.clone(),
            }
        } else if let Some(rest) = text.strip_prefix("-P ") {
            let mut it = rest.split_ascii_whitespace();
            match (it.next(), it.next()) {
                (Some(c), Some(p)) => format!(":{c} {p} [0:0]\n").into(),
                _ => text.clone(),
            }
        } else if let Some(rest) = text.strip_prefix("-N ") {
            format!(":{} - [0:0]\n", rest.trim_end()).into()
        } else if let Some(rest) = text.strip_prefix(':') {
            // `:NAME POLICY [p:b]` → counters dropped.
            match rest.rsplit_once(" [") {
                Some((head, _)) => format!(":{head} [0:0]\n").into(),
                None => text.clone(),
            }
        } else {
            text.clone()
        };
        self.write_out(norm.as_bytes());
    }

    /// Text to the file, or to `pending` while it is short.
    fn write_out(&mut self, b: &[u8]) {
        if self.failed {
            return;
        }
        self.index.write(b);
        if let Some(w) = self.w.as_mut() {
            self.failed = w.write_all(b).is_err();
            return;
        }
        self.pending.extend_from_slice(b);
        if self.pending.len() >= MIN_BYTES {
            match self.slot.create(&self.tmp) {
                Ok(mut w) => {
                    self.failed = w.write_all(&std::mem::take(&mut self.pending)).is_err();
                    self.w = Some(w);
                }
                Err(_) => self.failed = true,
            }
        }
    }

    /// Write literal text: whole lines already in the snapshot's normal
    /// form (the `*table` and `COMMIT` lines a `-S` listing lacks, or a
    /// whole table printed from the model).
    pub fn raw(&mut self, s: &str) {
        self.write_out(s.as_bytes());
    }

    /// Keep the snapshot (`keep`), with the foreign objects the read
    /// found, or throw it away.
    pub fn finish(mut self, keep: bool, foreign: &[String]) {
        for f in foreign {
            self.write_out(format!("# foreign: {f}\n").as_bytes());
        }
        let index = self.index.render();
        self.write_out(index.as_bytes());
        // A table too small for a snapshot: nothing was written.
        let Some(mut w) = self.w.take() else {
            return;
        };
        let ok = keep && !self.failed && self.line.is_empty() && w.flush().is_ok();
        // Replacing the slot's file adds none: only a new file can take
        // the directory past `KEEP` (pruning reads every file's metadata).
        let replaces = self.slot.path.exists();
        if ok && std::fs::rename(&self.tmp, &self.slot.path).is_ok() {
            if !replaces {
                prune(&self.slot.dir);
            }
        } else {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Once the directory holds more than twice [`KEEP`] files, keep the
/// [`KEEP`] newest. Counting is one directory read; the files' times are
/// read only when pruning, once per [`KEEP`] new files (a namespace per
/// command, as in containers or the bench, adds a file each time).
fn prune(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let entries: Vec<std::fs::DirEntry> = rd.filter_map(Result::ok).collect();
    if entries.len() <= 2 * KEEP {
        return;
    }
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .iter()
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort();
    let drop = files.len().saturating_sub(KEEP);
    for (_, p) in &files[..drop] {
        let _ = std::fs::remove_file(p);
    }
}

/// A writer that passes everything to `out` and a copy to a snapshot.
pub struct Tee<'a> {
    pub out: &'a mut dyn Write,
    pub snap: Option<&'a mut SnapWriter>,
}

impl Write for Tee<'_> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.out.write_all(b)?;
        if let Some(s) = self.snap.as_deref_mut() {
            s.feed(b);
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// One rule of a chain read from a snapshot ([`Slot::chain_rule`]).
#[derive(Debug, PartialEq, Eq)]
pub struct ChainRule {
    /// The table's chain declarations (save text).
    pub decls: String,
    /// The rule's save line, if the chain has that many rules.
    pub rule: Option<String>,
    pub foreign: Vec<String>,
}

/// `iptables -S` output (whole table, or one `chain`, or its rule `num`)
/// from a snapshot's save text; `None` when the chain is not there (the
/// caller then lets the model word the error).
pub fn spec_text(save: &str, chain: Option<&str>, num: Option<usize>) -> Option<String> {
    // The whole table is about as long as the save (a chain line is
    // shorter, a rule line the same): one allocation, no copy on growth.
    let mut out = String::with_capacity(if chain.is_none() { save.len() } else { 0 });
    let mut found = chain.is_none();
    let mut n = 0;
    for line in save.lines() {
        if let Some(decl) = line.strip_prefix(':') {
            let mut it = decl.split_ascii_whitespace();
            let (Some(name), Some(pol)) = (it.next(), it.next()) else {
                continue;
            };
            if chain.is_some_and(|c| c != name) {
                continue;
            }
            found = true;
            if num.is_none() {
                if pol == "-" {
                    out.push_str("-N ");
                    out.push_str(name);
                } else {
                    out.push_str("-P ");
                    out.push_str(name);
                    out.push(' ');
                    out.push_str(pol);
                }
                out.push('\n');
            }
        } else if let Some(rest) = line.strip_prefix("-A ") {
            if let Some(c) = chain {
                if rest.split(' ').next() != Some(c) {
                    continue;
                }
            }
            n += 1;
            if num.is_none_or(|k| k == n) {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    if num.is_some_and(|k| k == 0 || k > n) {
        return None;
    }
    found.then_some(out)
}

/// [`save_text`] written to `out`: the chain lines with their counters,
/// then the rest of `save` in one write (no copy of the rules' text).
pub fn write_save_text(
    save: &str,
    live: &[(String, ruleset::Counters)],
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    // The table line and chain lines come first; the rules follow.
    let mut head_end = 0;
    for line in save.split_inclusive('\n') {
        if !(line.starts_with(':') || line.starts_with('*')) {
            break;
        }
        head_end += line.len();
    }
    out.write_all(save_text(&save[..head_end], live).as_bytes())?;
    out.write_all(&save.as_bytes()[head_end..])
}

/// The save text with the policy counters `live` (chain name → `[p:b]`)
/// in its chain lines.
pub fn save_text(save: &str, live: &[(String, ruleset::Counters)]) -> String {
    let mut out = String::with_capacity(save.len() + 64);
    for line in save.lines() {
        if let Some(decl) = line.strip_prefix(':') {
            let name = decl.split(' ').next().unwrap_or("");
            if let Some((_, c)) = live.iter().find(|(n, _)| n == name) {
                let head = decl.rsplit_once(" [").map_or(decl, |(h, _)| h);
                out.push_str(&format!(":{head} [{}:{}]\n", c.packets, c.bytes));
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAVE: &str = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:web - [0:0]\n-A INPUT -j web\n-A web -s 10.0.0.1/32 -j ACCEPT\n-A web -s 10.0.0.2/32 -j ACCEPT\nCOMMIT\n";

    /// Streaming the save text with counters writes what `save_text`
    /// returns, whatever the chains and counters.
    #[test]
    fn written_save_text_equals_the_built_one() {
        let c = |packets, bytes| ruleset::Counters { packets, bytes };
        let saves = [
            SAVE,
            "*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n",
            "*raw\nCOMMIT\n",
            "",
        ];
        let lives: [Vec<(String, ruleset::Counters)>; 3] = [
            vec![],
            vec![("INPUT".into(), c(5, 600))],
            vec![("FORWARD".into(), c(1, 2)), ("PREROUTING".into(), c(3, 4))],
        ];
        for save in saves {
            for live in &lives {
                let mut out = Vec::new();
                write_save_text(save, live, &mut out).unwrap();
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    save_text(save, live),
                    "{save:?} {live:?}"
                );
            }
        }
    }

    #[test]
    fn spec_listings_from_a_snapshot() {
        type Case = (Option<&'static str>, Option<usize>, Option<&'static str>);
        let cases: &[Case] = &[
            (
                None,
                None,
                Some("-P INPUT ACCEPT\n-P FORWARD DROP\n-N web\n-A INPUT -j web\n-A web -s 10.0.0.1/32 -j ACCEPT\n-A web -s 10.0.0.2/32 -j ACCEPT\n"),
            ),
            (
                Some("web"),
                None,
                Some("-N web\n-A web -s 10.0.0.1/32 -j ACCEPT\n-A web -s 10.0.0.2/32 -j ACCEPT\n"),
            ),
            (Some("web"), Some(2), Some("-A web -s 10.0.0.2/32 -j ACCEPT\n")),
            (Some("FORWARD"), None, Some("-P FORWARD DROP\n")),
            (Some("web"), Some(3), None),
            (Some("nope"), None, None),
        ];
        for (chain, num, want) in cases {
            assert_eq!(
                spec_text(SAVE, *chain, *num).as_deref(),
                *want,
                "{chain:?} {num:?}"
            );
        }
    }

    #[test]
    fn snapshots_are_written_normalised_and_trusted_only_at_their_generation() {
        let dir = std::env::temp_dir().join(format!("nfk-snap-{}", std::process::id()));
        let slot = Slot::new(&dir, 7, Family::Ipv4, TableKind::Filter);
        // A table below MIN_BYTES gets no snapshot.
        let mut w = slot.writer(42).unwrap();
        w.feed(SAVE.as_bytes());
        w.finish(true, &[]);
        assert_eq!(slot.load(42), None, "small table");
        // Fed as a save with counters would be, split anywhere.
        let pad: String = (0..200)
            .map(|i| format!("-A pad -s 10.1.{}.{}/32 -j ACCEPT\n", i / 256, i % 256))
            .collect();
        let fed = format!("# Generated by x\n*filter\n:INPUT ACCEPT [3:4]\n:FORWARD DROP [0:0]\n:pad - [0:0]\n:web - [0:0]\n[1:2] -A INPUT -j web\n{pad}-A web -s 10.0.0.1/32 -j ACCEPT\n-A web -s 10.0.0.2/32 -j ACCEPT\nCOMMIT\n# Completed\n");
        let want = format!("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:pad - [0:0]\n:web - [0:0]\n-A INPUT -j web\n{pad}-A web -s 10.0.0.1/32 -j ACCEPT\n-A web -s 10.0.0.2/32 -j ACCEPT\nCOMMIT\n");
        assert!(want.len() > MIN_BYTES);
        let mut w = slot.writer(42).unwrap();
        for chunk in fed.as_bytes().chunks(7) {
            w.feed(chunk);
        }
        w.finish(true, &["rule handle 9 in chain X".into()]);
        assert_eq!(
            slot.load(42),
            Some((vec!["rule handle 9 in chain X".to_string()], want))
        );
        // One chain by the index: the declarations and its rules.
        let decls = ":INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:pad - [0:0]\n:web - [0:0]\n";
        let cases = [
            ("INPUT", format!("{decls}-A INPUT -j web\n")),
            // A jump to web is a rule of another chain, read for its count.
            ("web", format!("{decls}-A web -s 10.0.0.1/32 -j ACCEPT\n-A web -s 10.0.0.2/32 -j ACCEPT\n-A INPUT -j web\n")),
            ("pad", format!("{decls}{pad}")),
            ("none", decls.to_string()),
        ];
        for (chain, want) in cases {
            let part = slot.load_chain(42, chain).expect(chain);
            assert_eq!(part.text, want, "{chain}");
            assert_eq!(part.foreign, ["rule handle 9 in chain X"], "{chain}");
        }
        assert!(slot.load_chain(43, "web").is_none(), "other generation");
        // One rule by the index, read up to it.
        let foreign = vec!["rule handle 9 in chain X".to_string()];
        let rules = [
            ("web", 1, Some("-A web -s 10.0.0.1/32 -j ACCEPT")),
            ("web", 2, Some("-A web -s 10.0.0.2/32 -j ACCEPT")),
            ("INPUT", 1, Some("-A INPUT -j web")),
            ("web", 3, None),
            ("none", 1, None),
        ];
        for (chain, n, want) in rules {
            let got = slot.chain_rule(42, chain, n).expect(chain);
            assert_eq!(got.rule.as_deref(), want, "{chain} {n}");
            assert_eq!((got.decls.as_str(), &got.foreign), (decls, &foreign));
        }
        let last = pad.lines().count();
        let got = slot.chain_rule(42, "pad", last).and_then(|r| r.rule);
        assert_eq!(
            got.as_deref(),
            pad.lines().last(),
            "the last of a long chain"
        );
        // Which lines a chain has, in one pass.
        let want = [
            "-A web -s 10.0.0.2/32 -j ACCEPT".to_string(),
            "-A web -s 10.0.0.9/32 -j ACCEPT".to_string(),
            "-A INPUT -j web".to_string(),
        ];
        let (found, d, _) = slot.chain_has(42, "web", &want).unwrap();
        assert_eq!((found, d.as_str()), (vec![true, false, false], decls));
        assert!(slot.chain_rule(43, "web", 1).is_none(), "other generation");
        // A chain in two places: no index, the whole text still loads.
        let mut w = slot.writer(44).unwrap();
        w.feed(
            format!("*filter\n:a - [0:0]\n:b - [0:0]\n-A a -j b\n{pad}-A a -j ACCEPT\nCOMMIT\n")
                .as_bytes(),
        );
        w.finish(true, &[]);
        assert!(slot.load_chain(44, "a").is_none());
        assert!(slot.load(44).is_some());
        assert_eq!(slot.load(43), None);
        let live = [(
            "INPUT".to_string(),
            ruleset::Counters {
                packets: 5,
                bytes: 6,
            },
        )];
        assert!(save_text(SAVE, &live).contains(":INPUT ACCEPT [5:6]\n:FORWARD DROP [0:0]\n"));
        slot.remove();
        assert_eq!(slot.load(42), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

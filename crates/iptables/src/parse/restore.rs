//! iptables-restore input: the line tokenizer (quoting exactly as
//! iptables-restore splits a line) and the file parser.

use crate::error::{Error, Result};
use std::borrow::Cow;

/// Most words one line may have (iptables' MAX_ARGC, including the three
/// iptables-restore puts first: the program name, `-t`, the table).
pub const MAX_ARGC: usize = 255;
/// Words before a line's own in iptables-restore's argument vector.
const PREFIX: usize = 3;
/// Longest word (iptables' parameter buffer).
pub const MAX_PARAM: usize = 1024;

/// Split a rule line into words as iptables-restore does: blanks separate
/// words, `"..."` groups (and may be empty), `\` escapes only inside quotes,
/// a closing quote ends the word.
pub fn tokenize(line: &str) -> Result<Vec<String>> {
    Ok(words(line)?.into_iter().map(Cow::into_owned).collect())
}

/// [`tokenize`] borrowing from `line` every word that is one piece of it
/// (all but words with an escape or a quote inside them): the form for
/// parsing many lines, with no allocation per word.
pub fn words(line: &str) -> Result<Vec<Cow<'_, str>>> {
    // Every character with a meaning is ASCII, so the line is scanned as
    // bytes (`run..i` is the literal text not yet added to the word):
    // O(len). `tests::spec` is the character-at-a-time statement of the
    // same rules, and the tests hold the two equal.
    let b = line.as_bytes();
    // A rule line has a dozen or two words: one allocation, no regrowth.
    let mut words: Vec<Cow<'_, str>> = Vec::with_capacity(24);
    let mut cur = Word::default();
    let mut quote_open = false;
    let mut quoted = false;
    let mut run = 0;
    let mut i = 0;
    let too_long = || Err(Error::param("Parameter too long!"));
    // Bytes of an escaped character at the start of `run..`: not counted
    // against the word's limit until a plain character follows.
    let mut exempt = 0;
    while i < b.len() {
        // Skip the plain bytes (a table lookup each), then check the limit
        // once for the stretch: the word only grows, so it reaches the
        // limit within the stretch exactly when it does at its end.
        let table = if quote_open { &QUOTED } else { &PLAIN };
        let from = i;
        while i < b.len() && !table[usize::from(b[i])] {
            i += 1;
        }
        if i - run > exempt && cur.len() + (i - run) >= MAX_PARAM && i > from {
            return too_long();
        }
        exempt = 0;
        if i == b.len() {
            break;
        }
        let c = b[i];
        cur.add(line, run, i);
        match c {
            b'\\' => {
                // Inside quotes: the next character is literal, whatever
                // it is (a multi-byte one is copied whole with the run).
                // (iptables does not count an escaped character against
                // the word's limit until the next plain one.)
                let next = line[i + 1..].chars().next().map_or(0, char::len_utf8);
                run = i + 1;
                i += 1 + next;
                exempt = next;
                continue;
            }
            b'"' if !quote_open => {
                quote_open = true;
                quoted = true;
                i += 1;
                run = i;
                continue;
            }
            b'"' => quote_open = false,
            _ => {
                if cur.len() == 0 && !quoted {
                    i += 1;
                    run = i;
                    continue;
                }
            }
        }
        // A closing quote or a blank ends the word. (iptables also ends an
        // empty unquoted word only at a quote, which is the `""` case.)
        push_word(&mut words, cur.take(line))?;
        quoted = false;
        i += 1;
        run = i;
    }
    cur.add(line, run, b.len());
    if cur.len() > 0 {
        push_word(&mut words, cur.take(line))?;
    }
    Ok(words)
}

fn push_word<'l>(words: &mut Vec<Cow<'l, str>>, w: Cow<'l, str>) -> Result<()> {
    // iptables checks argc + 1 >= MAX_ARGC before adding a word.
    if words.len() + PREFIX + 1 >= MAX_ARGC {
        return Err(Error::param("Parser cannot handle more arguments"));
    }
    words.push(w);
    Ok(())
}

/// Bytes that end a stretch of plain text outside quotes, and inside.
const PLAIN: [bool; 256] = special(b"\" \t\n");
const QUOTED: [bool; 256] = special(b"\\\"");

const fn special(bytes: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut k = 0;
    while k < bytes.len() {
        t[bytes[k] as usize] = true;
        k += 1;
    }
    t
}

/// A word being gathered: one piece of the line (borrowed when the word
/// ends so), or the pieces copied together once there are two.
#[derive(Default)]
struct Word {
    piece: Option<(usize, usize)>,
    owned: Option<String>,
}

impl Word {
    fn len(&self) -> usize {
        match (&self.owned, self.piece) {
            (Some(s), _) => s.len(),
            (None, Some((a, b))) => b - a,
            (None, None) => 0,
        }
    }

    /// Add `line[a..b]` (nothing when empty).
    fn add(&mut self, line: &str, a: usize, b: usize) {
        if a >= b {
            return;
        }
        match (&mut self.owned, self.piece) {
            (Some(s), _) => s.push_str(&line[a..b]),
            (None, None) => self.piece = Some((a, b)),
            (None, Some((pa, pb))) => {
                let mut s = String::with_capacity(pb - pa + b - a);
                s.push_str(&line[pa..pb]);
                s.push_str(&line[a..b]);
                self.owned = Some(s);
            }
        }
    }

    fn take<'l>(&mut self, line: &'l str) -> Cow<'l, str> {
        let w = std::mem::take(self);
        match (w.owned, w.piece) {
            (Some(s), _) => Cow::Owned(s),
            (None, Some((a, b))) => Cow::Borrowed(&line[a..b]),
            (None, None) => Cow::Borrowed(""),
        }
    }
}

/// The limits [`tokenize`] enforces, for words split another way (a line
/// without quotes): at most as many words, each shorter than
/// [`MAX_PARAM`] bytes.
pub fn check_words(words: &[&str]) -> Result<()> {
    if words.len() + PREFIX >= MAX_ARGC {
        return Err(Error::param("Parser cannot handle more arguments"));
    }
    if words.iter().any(|w| w.len() >= MAX_PARAM) {
        return Err(Error::param("Parameter too long!"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_cases() {
        let cases: &[(&str, &[&str])] = &[
            ("-A INPUT -j ACCEPT", &["-A", "INPUT", "-j", "ACCEPT"]),
            ("  -A\tINPUT  ", &["-A", "INPUT"]),
            (r#"--comment "a b""#, &["--comment", "a b"]),
            (r#"--comment """#, &["--comment", ""]),
            (
                r#"--comment "a \"q\" \\ b""#,
                &["--comment", r#"a "q" \ b"#],
            ),
            (r#"x"a b"y"#, &["xa b", "y"]),
            (r#"a\b"#, &[r"a\b"]),
        ];
        for (line, want) in cases {
            let got = tokenize(line).unwrap();
            assert_eq!(got, *want, "{line}");
        }
    }

    /// The tokenizer's rules a character at a time (the statement
    /// [`tokenize`] must agree with).
    fn spec(line: &str) -> Result<Vec<String>> {
        let mut words = Vec::new();
        let mut cur = String::new();
        let (mut quote_open, mut escaped, mut quoted) = (false, false, false);
        let push = |words: &mut Vec<String>, w: String| -> Result<()> {
            if words.len() + PREFIX + 1 >= MAX_ARGC {
                return Err(Error::param("Parser cannot handle more arguments"));
            }
            words.push(w);
            Ok(())
        };
        for c in line.chars() {
            if quote_open {
                if escaped {
                    cur.push(c);
                    escaped = false;
                    continue;
                } else if c == '\\' {
                    escaped = true;
                    continue;
                } else if c == '"' {
                    quote_open = false;
                } else {
                    cur.push(c);
                    if cur.len() >= MAX_PARAM {
                        return Err(Error::param("Parameter too long!"));
                    }
                    continue;
                }
            } else if c == '"' {
                quote_open = true;
                quoted = true;
                continue;
            } else if !matches!(c, ' ' | '\t' | '\n') {
                cur.push(c);
                if cur.len() >= MAX_PARAM {
                    return Err(Error::param("Parameter too long!"));
                }
                continue;
            } else if cur.is_empty() && !quoted {
                continue;
            }
            push(&mut words, std::mem::take(&mut cur))?;
            quoted = false;
        }
        if !cur.is_empty() {
            push(&mut words, cur)?;
        }
        Ok(words)
    }

    /// Lines from a small alphabet of every character with a meaning
    /// (and a multi-byte one), all lengths up to 6 and a pseudo-random
    /// sample of longer ones: the scanner and the statement agree.
    #[test]
    fn tokenizer_agrees_with_its_statement() {
        let alphabet = ['a', ' ', '"', '\\', '\t', 'é', '\n'];
        let check = |line: &str| {
            let (got, want) = (tokenize(line), spec(line));
            match (&got, &want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w, "{line:?}"),
                (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{line:?}"),
                _ => panic!("{line:?}: {got:?} vs {want:?}"),
            }
        };
        let mut lines = vec![String::new()];
        for _ in 0..6 {
            let mut next = Vec::new();
            for l in &lines {
                for c in alphabet {
                    let mut m = l.clone();
                    m.push(c);
                    check(&m);
                    next.push(m);
                }
            }
            lines = next;
        }
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            let mut l = String::new();
            for _ in 0..(x % 40) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                l.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            check(&l);
        }
        for n in [MAX_PARAM - 2, MAX_PARAM - 1, MAX_PARAM, MAX_PARAM + 1] {
            check(&"a".repeat(n));
            check(&format!("\"{}\"", "a".repeat(n)));
            check(&format!("\"{}\\é\"", "a".repeat(n - 3)));
            check(&format!("{}é", "a".repeat(n - 2)));
            check(&format!("\"{}\\x\"", "a".repeat(n - 1)));
            check(&format!("\"{}\\xb\"", "a".repeat(n - 1)));
            check(&format!("\"{}\\é\\x\" c", "a".repeat(n - 3)));
        }
    }

    #[test]
    fn too_many_words() {
        let line = "x ".repeat(300);
        assert!(tokenize(&line).is_err());
        let line = "x ".repeat(250);
        assert!(tokenize(&line).is_ok());
    }
}

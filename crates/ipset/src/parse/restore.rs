//! Restore input: lines, words, `COMMIT`, comments, as ipset reads them.
//!
//! ipset reads restore input with a 1024-byte line buffer, so a longer line
//! is read as several lines (each counted); blank lines and lines starting
//! with `#` (after leading blanks) are skipped; `COMMIT` alone on a line ends
//! a batch. Words are split at blanks; double quotes group blanks into a
//! word and are removed.

use super::argv::MAX_ARGS;
use crate::error::{Error, Result};
use std::borrow::Cow;

/// ipset's restore line buffer (the text of one read, newline included).
pub const LINE_BUFFER: usize = 1024;

/// One restore input line, as ipset sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// Blank or comment.
    Skip,
    Commit,
    /// A command line (leading blanks removed, newline kept).
    Command(&'a str),
}

/// Split restore input into (line number, line) the way `fgets` with
/// ipset's buffer reads it.
pub fn lines(input: &str) -> Vec<(usize, Line<'_>)> {
    let mut out = Vec::new();
    let mut n = 0;
    let mut rest = input;
    while !rest.is_empty() {
        let max = LINE_BUFFER - 1;
        let end = match rest.find('\n') {
            Some(i) if i < max => i + 1,
            _ => floor_char_boundary(rest, max.min(rest.len())),
        };
        let (chunk, tail) = rest.split_at(end);
        rest = tail;
        n += 1;
        out.push((n, classify(chunk)));
    }
    out
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    if i == 0 {
        s.len()
            .min(s.char_indices().nth(1).map_or(s.len(), |c| c.0))
    } else {
        i
    }
}

fn classify(chunk: &str) -> Line<'_> {
    let c = chunk.trim_start_matches(|c: char| c.is_ascii_whitespace());
    if c.is_empty() || c.starts_with('#') {
        Line::Skip
    } else if c == "COMMIT\n" || c == "COMMIT\r\n" {
        Line::Commit
    } else {
        Line::Command(c)
    }
}

/// Split a command line into words (ipset's `build_argv`). Words without
/// quotes borrow from `line`.
///
/// Cost: one pass over the line; a line without `"` allocates only the
/// word list (restores of a million members split a million lines).
pub fn words(line: &str) -> Result<Vec<Cow<'_, str>>> {
    if line.contains('"') {
        return quoted_words(line);
    }
    let out: Vec<Cow<'_, str>> = line
        .split([' ', '\r', '\n', '\t'])
        .filter(|w| !w.is_empty())
        .map(Cow::Borrowed)
        .collect();
    // Near the word limit, where the limit's check depends on what follows
    // the last word, the general scan decides.
    if out.len() + 3 >= MAX_ARGS {
        return quoted_words(line);
    }
    Ok(out)
}

/// [`words`] for any line: quotes group blanks and are removed; the word
/// limit is checked before every character, as ipset does.
fn quoted_words(line: &str) -> Result<Vec<Cow<'_, str>>> {
    let mut out: Vec<Cow<'_, str>> = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if out.len() + 2 == MAX_ARGS {
            return Err(Error::parameter("Line is too long to parse."));
        }
        let last = chars.peek().is_none();
        match c {
            '"' => {
                quoted = !quoted;
                if !last {
                    continue;
                }
            }
            ' ' | '\r' | '\n' | '\t' => {
                if quoted {
                    cur.push(c);
                    continue;
                }
            }
            _ => {
                cur.push(c);
                if !last {
                    continue;
                }
            }
        }
        if last && quoted {
            return Err(Error::parameter("Missing close quote!"));
        }
        if cur.is_empty() {
            continue;
        }
        out.push(Cow::Owned(std::mem::take(&mut cur)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_kinds_and_numbers() {
        let input = "create a hash:ip\n\n  # note\nadd a 1.1.1.1\nCOMMIT\nCOMMIT";
        let got: Vec<_> = lines(input)
            .into_iter()
            .map(|(n, l)| (n, format!("{l:?}")))
            .collect();
        assert_eq!(
            got,
            [
                (1, "Command(\"create a hash:ip\\n\")".to_string()),
                (2, "Skip".into()),
                (3, "Skip".into()),
                (4, "Command(\"add a 1.1.1.1\\n\")".into()),
                (5, "Commit".into()),
                (6, "Command(\"COMMIT\")".into()),
            ]
        );
        let long = format!("add a 1.1.1.1 comment \"{}\"\n", "x".repeat(1100));
        assert_eq!(lines(&long).len(), 2);
    }

    #[test]
    fn word_splitting() {
        let cases: [(&str, Result<Vec<&str>>); 6] = [
            ("add test 1.1.1.1\n", Ok(vec!["add", "test", "1.1.1.1"])),
            (
                "add test 1.1.1.1 comment \"a b\"\n",
                Ok(vec!["add", "test", "1.1.1.1", "comment", "a b"]),
            ),
            (
                "add test x comment \"\"\n",
                Ok(vec!["add", "test", "x", "comment"]),
            ),
            ("add \"te\"st x", Ok(vec!["add", "test", "x"])),
            // An open quote at a line end swallows the rest, as in ipset.
            ("add test \"x\n", Ok(vec!["add", "test"])),
            (
                "add test \"x",
                Err(Error::parameter("Missing close quote!")),
            ),
        ];
        for (line, want) in cases {
            let want = want.map(|v| v.into_iter().map(Cow::from).collect::<Vec<_>>());
            assert_eq!(words(line), want, "{line:?}");
        }
        let many = format!("{}\n", vec!["w"; 31].join(" "));
        assert_eq!(
            words(&many),
            Err(Error::parameter("Line is too long to parse."))
        );
        let ok = format!("{}\n", vec!["w"; 30].join(" "));
        assert_eq!(words(&ok).unwrap().len(), 30);
    }

    /// The borrowing split and the general scan agree on every line
    /// without quotes, across the word limit and every trailing blank.
    #[test]
    fn fast_split_agrees_with_the_scan() {
        for n in 0..=33 {
            for tail in ["", "\n", " ", " \n", "\t\r\n", "  x"] {
                for sep in [" ", "  ", "\t", " \t "] {
                    let line = format!("{}{tail}", vec!["ab"; n].join(sep));
                    assert_eq!(words(&line), quoted_words(&line), "{line:?}");
                }
            }
        }
    }
}

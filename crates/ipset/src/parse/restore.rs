//! Restore input: lines, words, `COMMIT`, comments, as ipset reads them.
//!
//! ipset reads restore input with a 1024-byte line buffer, so a longer line
//! is read as several lines (each counted); blank lines and lines starting
//! with `#` (after leading blanks) are skipped; `COMMIT` alone on a line ends
//! a batch. Words are split at blanks; double quotes group blanks into a
//! word and are removed.

use super::argv::MAX_ARGS;
use crate::error::{Error, Result};

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

/// Split a command line into words (ipset's `build_argv`).
pub fn words(line: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let chars: Vec<char> = line.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if out.len() + 2 == MAX_ARGS {
            return Err(Error::parameter("Line is too long to parse."));
        }
        let last = i + 1 == chars.len();
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
        out.push(std::mem::take(&mut cur));
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
            let want = want.map(|v| v.into_iter().map(String::from).collect::<Vec<_>>());
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
}

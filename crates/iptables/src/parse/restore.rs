//! iptables-restore input: the line tokenizer (quoting exactly as
//! iptables-restore splits a line) and the file parser.

use crate::error::{Error, Result};

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
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote_open = false;
    let mut escaped = false;
    let mut quoted = false;
    let push = |words: &mut Vec<String>, w: String| -> Result<()> {
        // iptables checks argc + 1 >= MAX_ARGC before adding a word.
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
        }
        match c {
            '"' => {}
            ' ' | '\t' | '\n' => {
                if cur.is_empty() && !quoted {
                    continue;
                }
            }
            _ => {
                cur.push(c);
                if cur.len() >= MAX_PARAM {
                    return Err(Error::param("Parameter too long!"));
                }
                continue;
            }
        }
        // A closing quote or a blank ends the word. (iptables also ends an
        // empty unquoted word only at a quote, which is the `""` case.)
        if !cur.is_empty() || quoted {
            push(&mut words, std::mem::take(&mut cur))?;
        }
        quoted = false;
    }
    if !cur.is_empty() {
        push(&mut words, cur)?;
    }
    Ok(words)
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

    #[test]
    fn too_many_words() {
        let line = "x ".repeat(300);
        assert!(tokenize(&line).is_err());
        let line = "x ".repeat(250);
        assert!(tokenize(&line).is_ok());
    }
}

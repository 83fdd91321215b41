//! GNU `getopt_long` as iptables-save and iptables-restore call it: short
//! options (clustered, `-T filter` or `-Tfilter`), long options by any
//! unique prefix (`--noflu`, `--table=filter`), optional arguments,
//! permutation of non-option words to the end, `--` ending the options,
//! and glibc's messages for what it refuses (printed by the caller, as
//! getopt prints them before the program's own).
//!
//! Cost: O(words × options).

/// Whether an option takes an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HasArg {
    No,
    Required,
    /// Only an attached value (`-wVALUE`, `--wait=VALUE`).
    Optional,
    /// An attached value, else the next word if it does not start with
    /// `-` or `!` (what iptables-restore does for `-w`/`-W` after getopt,
    /// iptables' `xs_has_arg`). In the short string: `c?`.
    OptionalOrNext,
}

/// One long option and the short option it stands for (`val`).
#[derive(Clone, Copy, Debug)]
pub struct LongOpt {
    pub name: &'static str,
    pub has_arg: HasArg,
    pub val: char,
}

/// An option found, with its argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found<'a> {
    pub val: char,
    pub arg: Option<&'a str>,
}

/// What `getopt_long` returns for each option word; errors carry glibc's
/// message (without the program name: `invalid option -- 'x'`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    Opt(Found<'a>),
    /// getopt's `'?'` with the message it printed.
    Bad(String),
}

/// The parsed command line: options in order, then the non-option words
/// in order (getopt permutes them to the end).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed<'a> {
    pub items: Vec<Item<'a>>,
    pub operands: Vec<&'a str>,
}

/// Parse `words` (without argv\[0\]) against the short option string
/// `short` (getopt's syntax: `c`, `t:` required, `w::` optional; and `w?`
/// for [`HasArg::OptionalOrNext`]) and the long options `long`.
pub fn getopt_long<'a>(words: &[&'a str], short: &str, long: &[LongOpt]) -> Parsed<'a> {
    let mut items = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        i += 1;
        if w == "--" {
            operands.extend_from_slice(&words[i..]);
            break;
        }
        if let Some(body) = w.strip_prefix("--") {
            let (name, attached) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            items.push(long_opt(w, name, attached, long, words, &mut i));
            continue;
        }
        if w.len() > 1 && w.starts_with('-') {
            let mut rest = &w[1..];
            while let Some(c) = rest.chars().next() {
                rest = &rest[c.len_utf8()..];
                match short_arg(short, c) {
                    None => {
                        items.push(Item::Bad(format!("invalid option -- '{c}'")));
                    }
                    Some(HasArg::No) => items.push(Item::Opt(Found { val: c, arg: None })),
                    Some(HasArg::Optional) => {
                        let arg = (!rest.is_empty()).then_some(rest);
                        items.push(Item::Opt(Found { val: c, arg }));
                        break;
                    }
                    Some(HasArg::OptionalOrNext) => {
                        let arg = if rest.is_empty() {
                            next_plain(words, &mut i)
                        } else {
                            Some(rest)
                        };
                        items.push(Item::Opt(Found { val: c, arg }));
                        break;
                    }
                    Some(HasArg::Required) => {
                        if !rest.is_empty() {
                            items.push(Item::Opt(Found {
                                val: c,
                                arg: Some(rest),
                            }));
                        } else if let Some(v) = words.get(i) {
                            i += 1;
                            items.push(Item::Opt(Found {
                                val: c,
                                arg: Some(v),
                            }));
                        } else {
                            items.push(Item::Bad(format!("option requires an argument -- '{c}'")));
                        }
                        break;
                    }
                }
            }
            continue;
        }
        operands.push(w);
    }
    Parsed { items, operands }
}

/// A short option's argument kind, if `c` is in `short`.
fn short_arg(short: &str, c: char) -> Option<HasArg> {
    if c == ':' {
        return None;
    }
    let at = short.find(c)?;
    let after = &short[at + c.len_utf8()..];
    Some(if after.starts_with('?') {
        HasArg::OptionalOrNext
    } else if after.starts_with("::") {
        HasArg::Optional
    } else if after.starts_with(':') {
        HasArg::Required
    } else {
        HasArg::No
    })
}

fn long_opt<'a>(
    word: &str,
    name: &str,
    attached: Option<&'a str>,
    long: &[LongOpt],
    words: &[&'a str],
    i: &mut usize,
) -> Item<'a> {
    let exact = long.iter().find(|o| o.name == name);
    let o: &LongOpt = match exact {
        Some(o) => o,
        None => {
            let cands: Vec<&LongOpt> = long.iter().filter(|o| o.name.starts_with(name)).collect();
            let distinct = cands
                .iter()
                .any(|c| c.val != cands[0].val || c.has_arg != cands[0].has_arg);
            match cands.as_slice() {
                [] => return Item::Bad(format!("unrecognized option '{}'", word_name(word))),
                [first, ..] if !distinct => first,
                _ => {
                    let list: String = cands.iter().map(|c| format!(" '--{}'", c.name)).collect();
                    return Item::Bad(format!(
                        "option '--{name}' is ambiguous; possibilities:{list}"
                    ));
                }
            }
        }
    };
    match o.has_arg {
        HasArg::No if attached.is_some() => {
            Item::Bad(format!("option '--{}' doesn't allow an argument", o.name))
        }
        HasArg::No => Item::Opt(Found {
            val: o.val,
            arg: None,
        }),
        HasArg::Optional => Item::Opt(Found {
            val: o.val,
            arg: attached,
        }),
        HasArg::OptionalOrNext => Item::Opt(Found {
            val: o.val,
            arg: attached.or_else(|| next_plain(words, i)),
        }),
        HasArg::Required => match attached {
            Some(v) => Item::Opt(Found {
                val: o.val,
                arg: Some(v),
            }),
            None => match words.get(*i) {
                Some(v) => {
                    *i += 1;
                    Item::Opt(Found {
                        val: o.val,
                        arg: Some(v),
                    })
                }
                None => Item::Bad(format!("option '--{}' requires an argument", o.name)),
            },
        },
    }
}

/// The next word if it is an argument, not an option (`xs_has_arg`).
fn next_plain<'a>(words: &[&'a str], i: &mut usize) -> Option<&'a str> {
    let w = words
        .get(*i)
        .filter(|w| !w.starts_with('-') && !w.starts_with('!'))?;
    *i += 1;
    Some(w)
}

/// The option as glibc names it in "unrecognized option" (without `=value`).
fn word_name(word: &str) -> &str {
    word.split_once('=').map_or(word, |(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: &[LongOpt] = &[
        LongOpt {
            name: "counters",
            has_arg: HasArg::No,
            val: 'c',
        },
        LongOpt {
            name: "test",
            has_arg: HasArg::No,
            val: 't',
        },
        LongOpt {
            name: "noflush",
            has_arg: HasArg::No,
            val: 'n',
        },
        LongOpt {
            name: "table",
            has_arg: HasArg::Required,
            val: 'T',
        },
        LongOpt {
            name: "wait",
            has_arg: HasArg::Optional,
            val: 'w',
        },
        LongOpt {
            name: "wait-interval",
            has_arg: HasArg::OptionalOrNext,
            val: 'W',
        },
    ];

    fn opt(val: char, arg: Option<&str>) -> Item<'_> {
        Item::Opt(Found { val, arg })
    }

    #[test]
    fn parses_as_glibc_does() {
        type Case = (
            &'static [&'static str],
            Vec<Item<'static>>,
            Vec<&'static str>,
        );
        let cases: Vec<Case> = vec![
            (&["-nc"], vec![opt('n', None), opt('c', None)], vec![]),
            (&["-Tfilter"], vec![opt('T', Some("filter"))], vec![]),
            (&["-T", "nat", "f"], vec![opt('T', Some("nat"))], vec!["f"]),
            (&["--table=filter"], vec![opt('T', Some("filter"))], vec![]),
            (
                &["--noflu", "--coun"],
                vec![opt('n', None), opt('c', None)],
                vec![],
            ),
            (&["f", "-n"], vec![opt('n', None)], vec!["f"]),
            (&["-w", "5"], vec![opt('w', None)], vec!["5"]),
            (&["--wait=5"], vec![opt('w', Some("5"))], vec![]),
            (&["--", "-n"], vec![], vec!["-n"]),
            (&["-W", "5", "f"], vec![opt('W', Some("5"))], vec!["f"]),
            (&["-W", "-n"], vec![opt('W', None), opt('n', None)], vec![]),
            (&["--wait-i", "7"], vec![opt('W', Some("7"))], vec![]),
            (
                &["-x"],
                vec![Item::Bad("invalid option -- 'x'".into())],
                vec![],
            ),
            (
                &["-T"],
                vec![Item::Bad("option requires an argument -- 'T'".into())],
                vec![],
            ),
            (
                &["--table"],
                vec![Item::Bad("option '--table' requires an argument".into())],
                vec![],
            ),
            (
                &["--t"],
                vec![Item::Bad(
                    "option '--t' is ambiguous; possibilities: '--test' '--table'".into(),
                )],
                vec![],
            ),
            (
                &["--bogus=1"],
                vec![Item::Bad("unrecognized option '--bogus'".into())],
                vec![],
            ),
            (
                &["--counters=1"],
                vec![Item::Bad(
                    "option '--counters' doesn't allow an argument".into(),
                )],
                vec![],
            ),
        ];
        for (words, items, operands) in cases {
            let p = getopt_long(words, "ctnT:w::W?", LONG);
            assert_eq!(p.items, items, "{words:?}");
            assert_eq!(p.operands, operands, "{words:?}");
        }
    }
}

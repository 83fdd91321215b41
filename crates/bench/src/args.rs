//! What the command lines of nfkeeper-bench and model-bench share: the
//! clap arguments of the common kinds (built with clap's builder: the
//! derive macros can't be built here, see Cargo.toml) and the value
//! parsers clap calls (each returns the message clap shows after "invalid
//! value … for --OPTION").

use clap::builder::ValueParser;
use clap::{Arg, ArgAction, ArgMatches};

/// A list of sizes, one option value (`--sizes 100,1000`): a later
/// `--sizes` replaces an earlier one.
pub type Sizes = Vec<usize>;

/// `--NAME`, a switch.
pub fn flag(name: &'static str) -> Arg {
    Arg::new(name).long(name).action(ArgAction::SetTrue)
}

/// `--NAME VALUE`, parsed by `parser`; the last one given counts.
pub fn value(name: &'static str, value_name: &'static str, parser: impl Into<ValueParser>) -> Arg {
    Arg::new(name)
        .long(name)
        .value_name(value_name)
        .value_parser(parser)
        .action(ArgAction::Set)
}

/// `--NAME A,B,...`, words separated by commas; repeated, the lists add
/// up.
pub fn words(name: &'static str, value_name: &'static str) -> Arg {
    Arg::new(name)
        .long(name)
        .value_name(value_name)
        .value_delimiter(',')
        .action(ArgAction::Append)
}

/// The words of a [`words`] argument (none when absent).
pub fn get_words(m: &ArgMatches, name: &str) -> Vec<String> {
    m.get_many::<String>(name)
        .map(|v| v.cloned().collect())
        .unwrap_or_default()
}

/// A count: decimal digits, `_` allowed as a separator (`100_000`).
pub fn num(v: &str) -> Result<usize, String> {
    v.replace('_', "")
        .parse()
        .map_err(|_| format!("not a number: {v}"))
}

/// A count of at least 1.
pub fn count(v: &str) -> Result<usize, String> {
    match num(v)? {
        0 => Err("must be at least 1".into()),
        n => Ok(n),
    }
}

/// Counts separated by commas.
pub fn list(v: &str) -> Result<Vec<usize>, String> {
    v.split(',').map(num).collect()
}

/// Sizes of at least `min` each.
fn sizes_from(v: &str, min: usize) -> Result<Sizes, String> {
    let s = list(v)?;
    if s.iter().any(|&n| n < min) {
        return Err(format!("each size must be at least {min}"));
    }
    Ok(s)
}

/// Sizes of the kernel suites: at least 1 each.
pub fn sizes(v: &str) -> Result<Sizes, String> {
    sizes_from(v, 1)
}

/// Sizes of the model suite: at least 10 each (its operations work on a
/// tenth of a chain).
pub fn model_sizes(v: &str) -> Result<Sizes, String> {
    sizes_from(v, 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_lists() {
        let ok: [(&str, &[usize]); 3] = [("5", &[5]), ("100_000,1", &[100_000, 1]), ("0", &[0])];
        for (v, want) in ok {
            assert_eq!(list(v).unwrap(), want, "{v}");
        }
        let bad = [
            ("x", "not a number: x"),
            ("1,,2", "not a number: "),
            ("-1", "not a number: -1"),
        ];
        for (v, want) in bad {
            assert_eq!(list(v).unwrap_err(), want, "{v}");
        }
        assert_eq!(sizes("0").unwrap_err(), "each size must be at least 1");
        assert_eq!(
            model_sizes("100,9").unwrap_err(),
            "each size must be at least 10"
        );
        assert_eq!(model_sizes("10").unwrap(), [10]);
        assert_eq!(count("1_000"), Ok(1000));
        assert_eq!(count("0").unwrap_err(), "must be at least 1");
        assert_eq!(count("x").unwrap_err(), "not a number: x");
    }
}

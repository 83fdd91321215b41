//! `-m set`: membership in an ipset (iptables' libxt_set, revision 4 — the
//! latest — with its save format).
//!
//! iptables asks the kernel's ipset for the set's index while parsing and
//! fails for a set that does not exist. nfkeeper keeps the set name and
//! accepts any name here; whether the set exists (and has the right family)
//! is checked by the later layers that apply the ruleset.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

/// A packet/byte counter condition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CounterOp {
    #[default]
    None,
    Eq(u64),
    Ne(u64),
    Lt(u64),
    Gt(u64),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Set {
    pub name: String,
    /// Direction per dimension: `true` = src, `false` = dst (1..=6 entries).
    pub dirs: Vec<bool>,
    pub inv: bool,
    pub return_nomatch: bool,
    /// `! --update-counters`
    pub skip_counters: bool,
    /// `! --update-subcounters`
    pub skip_subcounters: bool,
    pub packets: CounterOp,
    pub bytes: CounterOp,
}

const MATCH_SET: u8 = 0;
const RETURN_NOMATCH: u8 = 1;
const UPDATE_COUNTERS: u8 = 2;
const PACKETS_EQ: u8 = 3;
const PACKETS_LT: u8 = 4;
const PACKETS_GT: u8 = 5;
const BYTES_EQ: u8 = 6;
const BYTES_LT: u8 = 7;
const BYTES_GT: u8 = 8;
const UPDATE_SUBCOUNTERS: u8 = 9;

/// IPSET_MAXNAMELEN - 1 (also the SET target's limit)
pub(crate) const MAX_NAME: usize = 31;
/// IPSET_DIM_MAX
const DIM_MAX: usize = 6;

/// The comma separated list of `src`/`dst` (only the first three letters of
/// each word count, as in iptables); the SET target's too.
pub(crate) fn parse_dirs(arg: &str) -> Result<Vec<bool>> {
    let mut dirs = Vec::new();
    let mut parts = arg.split(',');
    for part in parts.by_ref() {
        if part.starts_with("src") {
            dirs.push(true);
        } else if part.starts_with("dst") {
            dirs.push(false);
        } else {
            return Err(Error::param(
                "You must specify (the comma separated list of) 'src' or 'dst'.",
            ));
        }
        if dirs.len() == DIM_MAX {
            break;
        }
    }
    if parts.next().is_some() {
        return Err(Error::param(format!(
            "Can't be more src/dst options than {DIM_MAX}."
        )));
    }
    Ok(dirs)
}

fn parse_counter(s: &str) -> Result<u64> {
    crate::opt::parse_uint(s, 0, u64::MAX)
        .ok_or_else(|| Error::param(format!("Cannot parse {s} as a counter value")))
}

fn put_counter(out: &mut String, c: CounterOp, name: &str, sep: &str) {
    let _ = match c {
        CounterOp::None => Ok(()),
        CounterOp::Eq(v) => write!(out, " {sep}{name}-eq {v}"),
        CounterOp::Ne(v) => write!(out, " ! {sep}{name}-eq {v}"),
        CounterOp::Lt(v) => write!(out, " {sep}{name}-lt {v}"),
        CounterOp::Gt(v) => write!(out, " {sep}{name}-gt {v}"),
    };
}

impl Set {
    fn put(&self, out: &mut String, sep: &str) {
        if self.inv {
            out.push_str(" !");
        }
        let _ = write!(out, " {sep}match-set {}", self.name);
        for (i, src) in self.dirs.iter().enumerate() {
            out.push(if i == 0 { ' ' } else { ',' });
            out.push_str(if *src { "src" } else { "dst" });
        }
        if self.return_nomatch {
            let _ = write!(out, " {sep}return-nomatch");
        }
        if self.skip_counters {
            let _ = write!(out, " ! {sep}update-counters");
        }
        if self.skip_subcounters {
            let _ = write!(out, " ! {sep}update-subcounters");
        }
        put_counter(out, self.packets, "packets", sep);
        put_counter(out, self.bytes, "bytes", sep);
    }
}

impl Ext for Set {
    const NAME: &'static str = "set";
    const FAMILY: Fam = Fam::Both;
    // iptables parses these options itself (old-style getopt): any may be
    // repeated or preceded by '!' as far as the generic checks go; the
    // extension's own messages follow in `parse`.
    const OPTS: &'static [OptDef] = &[
        OptDef::new("match-set", MATCH_SET, Arg::Required)
            .inv()
            .multi(),
        OptDef::new("set", MATCH_SET, Arg::Required).inv().multi(),
        OptDef::new("return-nomatch", RETURN_NOMATCH, Arg::None)
            .inv()
            .multi(),
        OptDef::new("update-counters", UPDATE_COUNTERS, Arg::None)
            .inv()
            .multi(),
        OptDef::new("packets-eq", PACKETS_EQ, Arg::Required)
            .inv()
            .multi(),
        OptDef::new("packets-lt", PACKETS_LT, Arg::Required)
            .inv()
            .multi(),
        OptDef::new("packets-gt", PACKETS_GT, Arg::Required)
            .inv()
            .multi(),
        OptDef::new("bytes-eq", BYTES_EQ, Arg::Required)
            .inv()
            .multi(),
        OptDef::new("bytes-lt", BYTES_LT, Arg::Required)
            .inv()
            .multi(),
        OptDef::new("bytes-gt", BYTES_GT, Arg::Required)
            .inv()
            .multi(),
        OptDef::new("update-subcounters", UPDATE_SUBCOUNTERS, Arg::None)
            .inv()
            .multi(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Set {
            name: String::new(),
            dirs: Vec::new(),
            inv: false,
            return_nomatch: false,
            skip_counters: false,
            skip_subcounters: false,
            packets: CounterOp::None,
            bytes: CounterOp::None,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let id = c.opt.id;
        match id {
            MATCH_SET => {
                if !self.dirs.is_empty() {
                    return Err(Error::param("--match-set can be specified only once"));
                }
                let dirs = match c.rest.peek() {
                    Some(w) if !w.starts_with('-') && !w.starts_with('!') => {
                        c.rest.pos += 1;
                        w
                    }
                    _ => return Err(Error::param("--match-set requires two args.")),
                };
                if c.arg.len() > MAX_NAME {
                    return Err(Error::param(format!(
                        "setname `{}' too long, max {MAX_NAME} characters.",
                        c.arg
                    )));
                }
                if c.arg.is_empty() {
                    // No set can have an empty name.
                    return Err(Error::param(format!("Set {} doesn't exist.\n", c.arg)));
                }
                self.inv = c.inv;
                self.name = c.arg.to_string();
                self.dirs = parse_dirs(dirs)?;
            }
            RETURN_NOMATCH => {
                if c.inv {
                    return Err(Error::param("--return-nomatch flag cannot be inverted"));
                }
                self.return_nomatch = true;
            }
            // Without '!' these two are the default and change nothing.
            UPDATE_COUNTERS => self.skip_counters |= c.inv,
            UPDATE_SUBCOUNTERS => self.skip_subcounters |= c.inv,
            _ => {
                let (slot, what) = if id <= PACKETS_GT {
                    (&mut self.packets, "packets")
                } else {
                    (&mut self.bytes, "bytes")
                };
                if *slot != CounterOp::None {
                    return Err(Error::param(format!(
                        "only one of the --{what}-[eq|lt|gt] is allowed"
                    )));
                }
                let is_eq = id == PACKETS_EQ || id == BYTES_EQ;
                if c.inv && !is_eq {
                    return Err(Error::param(format!(
                        "--{} option cannot be inverted",
                        c.opt.name
                    )));
                }
                let v = parse_counter(c.arg)?;
                *slot = match id {
                    PACKETS_EQ | BYTES_EQ if c.inv => CounterOp::Ne(v),
                    PACKETS_EQ | BYTES_EQ => CounterOp::Eq(v),
                    PACKETS_LT | BYTES_LT => CounterOp::Lt(v),
                    _ => CounterOp::Gt(v),
                };
            }
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        if seen & (1 << MATCH_SET) == 0 {
            return Err(Error::param(
                "You must specify `--match-set' with proper arguments",
            ));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.put(out, "--");
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        self.put(out, "");
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

    #[test]
    fn list_output() {
        let cases = [
            ("-m set --match-set foo src,dst", " match-set foo src,dst"),
            (
                "-m set ! --match-set bar dst --return-nomatch ! --update-counters",
                " ! match-set bar dst return-nomatch ! update-counters",
            ),
            (
                "-m set --set x srcx,dstx,src --bytes-gt 0x10 ! --packets-eq 3 ! --update-subcounters",
                " match-set x src,dst,src ! update-subcounters ! packets-eq 3 bytes-gt 16",
            ),
            (
                "-m set --match-set s src --update-counters --packets-lt 5 --bytes-eq 7",
                " match-set s src packets-lt 5 bytes-eq 7",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(list(args, false), want, "{args}");
            assert_eq!(list(args, true), want, "{args} -n");
        }
    }

    #[test]
    fn save_output() {
        assert_eq!(
            save("-m set ! --match-set a src,src --return-nomatch ! --update-counters --bytes-lt 9 --packets-gt 1"),
            " ! --match-set a src,src --return-nomatch ! --update-counters --packets-gt 1 --bytes-lt 9"
        );
    }

    #[test]
    fn errors() {
        let cases = [
            ("-m set --match-set foo", "--match-set requires two args."),
            (
                "-m set --match-set foo ! src",
                "--match-set requires two args.",
            ),
            (
                "-m set --match-set foo src --match-set bar dst",
                "--match-set can be specified only once",
            ),
            (
                "-m set --match-set foo sr",
                "You must specify (the comma separated list of) 'src' or 'dst'.",
            ),
            (
                "-m set --match-set foo src,src,src,src,src,src,src",
                "Can't be more src/dst options than 6.",
            ),
            (
                "-m set --match-set abcdefghijklmnopqrstuvwxyz0123456 src",
                "setname `abcdefghijklmnopqrstuvwxyz0123456' too long, max 31 characters.",
            ),
            (
                "-m set --match-set a src ! --return-nomatch",
                "--return-nomatch flag cannot be inverted",
            ),
            (
                "-m set --match-set a src ! --bytes-gt 1",
                "--bytes-gt option cannot be inverted",
            ),
            (
                "-m set --match-set a src --packets-eq 1 --packets-lt 2",
                "only one of the --packets-[eq|lt|gt] is allowed",
            ),
            (
                "-m set --match-set a src --bytes-eq x",
                "Cannot parse x as a counter value",
            ),
            (
                "-m set --return-nomatch",
                "You must specify `--match-set' with proper arguments",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

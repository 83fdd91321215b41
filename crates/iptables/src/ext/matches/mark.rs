//! `-m mark`: the packet's nfmark against `value[/mask]` (iptables'
//! libxt_mark, revision 1).

use crate::error::Result;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mark {
    pub mark: u32,
    pub mask: u32,
    pub inv: bool,
}

const MARK: u8 = 0;

/// xtables' value/mask printing: ` 0xV/0xM`, or ` 0xV` for a full mask.
pub fn put_val_mask(out: &mut String, val: u32, mask: u32) {
    if mask == u32::MAX {
        let _ = write!(out, " 0x{val:x}");
    } else {
        let _ = write!(out, " 0x{val:x}/0x{mask:x}");
    }
}

impl Ext for Mark {
    const NAME: &'static str = "mark";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[OptDef::new("mark", MARK, Arg::Required).inv().mand()];

    fn new(_: &ParseCtx) -> Self {
        Mark {
            mark: 0,
            mask: 0,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let (v, m) = opt::parse_val_mask(c.ext, c.opt.name, c.arg)?;
        self.mark = v;
        self.mask = m;
        self.inv = c.inv;
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        out.push_str(" --mark");
        put_val_mask(out, self.mark, self.mask);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" mark match");
        if self.inv {
            out.push_str(" !");
        }
        put_val_mask(out, self.mark, self.mask);
    }
}

/// Helpers for the unit tests of the match modules: parse one rule the way
/// iptables-restore would and print its first match.
#[cfg(test)]
pub(crate) mod testutil {
    use crate::ext::PrintCtx;
    use crate::parse::{parse, ParseOpts};
    use ruleset::{Family, TableKind};

    pub fn rule(
        family: Family,
        table: TableKind,
        chain: &str,
        args: &str,
    ) -> crate::error::Result<crate::rule::Rule> {
        let words: Vec<&str> = args.split_whitespace().collect();
        rule_words(family, table, chain, &words)
    }

    /// Like `rule` with the words given one by one (for empty words or
    /// words with white space).
    pub fn rule_words(
        family: Family,
        table: TableKind,
        chain: &str,
        words: &[&str],
    ) -> crate::error::Result<crate::rule::Rule> {
        let mut argv: Vec<&str> = vec!["-A", chain];
        argv.extend_from_slice(words);
        let o = ParseOpts {
            family,
            restore: true,
            table: Some(table),
            prog: "iptables",
        };
        let mut parsed = parse(&argv, o)?;
        Ok(parsed.rules.remove(0))
    }

    fn print(family: Family, table: TableKind, chain: &str, args: &str, mode: Mode) -> String {
        let r = rule(family, table, chain, args).unwrap_or_else(|e| panic!("{args}: {e:?}"));
        let ctx = PrintCtx {
            family,
            proto: r.proto,
            numeric: mode == Mode::Numeric,
        };
        let mut out = String::new();
        let m = &r.matches[0];
        if mode == Mode::Save {
            m.save(&ctx, &mut out);
        } else {
            m.list(&ctx, &mut out);
        }
        out
    }

    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Mode {
        List,
        Numeric,
        Save,
    }

    /// `-L` text of the first match (numeric or not), IPv4 filter INPUT
    /// unless given.
    pub fn list_in(
        family: Family,
        table: TableKind,
        chain: &str,
        args: &str,
        numeric: bool,
    ) -> String {
        let mode = if numeric { Mode::Numeric } else { Mode::List };
        print(family, table, chain, args, mode)
    }

    pub fn list(args: &str, numeric: bool) -> String {
        list_in(Family::Ipv4, TableKind::Filter, "INPUT", args, numeric)
    }

    pub fn save_in(family: Family, table: TableKind, chain: &str, args: &str) -> String {
        print(family, table, chain, args, Mode::Save)
    }

    pub fn save(args: &str) -> String {
        save_in(Family::Ipv4, TableKind::Filter, "INPUT", args)
    }

    /// The error message of a rule that must be rejected.
    pub fn err_in(family: Family, table: TableKind, chain: &str, args: &str) -> String {
        match rule(family, table, chain, args) {
            Ok(r) => panic!("{args}: accepted as {r:?}"),
            Err(e) => e.msg,
        }
    }

    pub fn err(args: &str) -> String {
        err_in(Family::Ipv4, TableKind::Filter, "INPUT", args)
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::{err, list, save};

    #[test]
    fn list_output() {
        let cases = [
            ("-m mark --mark 1", " mark match 0x1"),
            ("-m mark ! --mark 0x10/0xf0", " mark match ! 0x10/0xf0"),
            (
                "-m mark --mark 0xffffffff/0xffffffff",
                " mark match 0xffffffff",
            ),
            ("-m mark --mark 0/0", " mark match 0x0/0x0"),
        ];
        for (args, want) in cases {
            assert_eq!(list(args, false), want, "{args}");
            assert_eq!(list(args, true), want, "{args} -n");
        }
    }

    #[test]
    fn save_output() {
        assert_eq!(save("-m mark ! --mark 255/0xff0"), " ! --mark 0xff/0xff0");
        assert_eq!(save("-m mark --mark 010"), " --mark 0x8");
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m mark --mark 4294967296",
                "mark: bad integer value for option \"--mark\", or out of range.\n",
            ),
            (
                "-m mark --mark -1",
                "mark: bad integer value for option \"--mark\", or out of range.\n",
            ),
            (
                "-m mark --mark 1x",
                "mark: trailing garbage after value for option \"--mark\".\n",
            ),
            (
                "-m mark --mark 1/2x",
                "mark: trailing garbage after value for option \"--mark\".\n",
            ),
            (
                "-m mark --mark 1/",
                "mark: bad integer value for option \"--mark\", or out of range.\n",
            ),
            ("-m mark", "mark: option \"--mark\" must be specified\n"),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

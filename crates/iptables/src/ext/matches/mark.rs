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

/// `[!] --mark value[/mask]`, the one option of `-m mark` and `-m connmark`:
/// (value, mask, inverted).
pub(crate) fn parse_mark(c: &Call) -> Result<(u32, u32, bool)> {
    let (v, m) = opt::parse_val_mask(c.ext, c.opt.name, c.arg)?;
    Ok((v, m, c.inv))
}

/// Save form of `[!] --mark value[/mask]`.
pub(crate) fn save_mark(out: &mut String, mark: u32, mask: u32, inv: bool) {
    if inv {
        out.push_str(" !");
    }
    out.push_str(" --mark");
    put_val_mask(out, mark, mask);
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
        (self.mark, self.mask, self.inv) = parse_mark(c)?;
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        save_mark(out, self.mark, self.mask, self.inv);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" mark match");
        if self.inv {
            out.push_str(" !");
        }
        put_val_mask(out, self.mark, self.mask);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

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

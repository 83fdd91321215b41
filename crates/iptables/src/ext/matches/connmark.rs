//! `-m connmark`: the connection's ctmark against `value[/mask]` (iptables'
//! libxt_connmark, revision 1).

use super::mark::{parse_mark, put_val_mask, save_mark};
use crate::error::Result;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Connmark {
    pub mark: u32,
    pub mask: u32,
    pub inv: bool,
}

const MARK: u8 = 0;

impl Ext for Connmark {
    const NAME: &'static str = "connmark";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[OptDef::new("mark", MARK, Arg::Required).inv().mand()];

    fn new(_: &ParseCtx) -> Self {
        Connmark {
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
        // iptables prints "connmark match " and then the value with its own
        // leading space, so an uninverted match has two spaces.
        out.push_str(" connmark match ");
        if self.inv {
            out.push('!');
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
            ("-m connmark --mark 1", " connmark match  0x1"),
            (
                "-m connmark ! --mark 0x10/0xf0",
                " connmark match ! 0x10/0xf0",
            ),
            ("-m connmark --mark 7/0xffffffff", " connmark match  0x7"),
        ];
        for (args, want) in cases {
            assert_eq!(list(args, false), want, "{args}");
            assert_eq!(list(args, true), want, "{args} -n");
        }
    }

    #[test]
    fn save_output() {
        assert_eq!(save("-m connmark --mark 0/0xffffffff"), " --mark 0x0");
        assert_eq!(
            save("-m connmark ! --mark 0xffffffff/0"),
            " ! --mark 0xffffffff/0x0"
        );
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m connmark --mark 0xfffffffff",
                "connmark: bad integer value for option \"--mark\", or out of range.\n",
            ),
            (
                "-m connmark",
                "connmark: option \"--mark\" must be specified\n",
            ),
            (
                "-m connmark --mark 1 --mark 2",
                "connmark: option \"--mark\" can only be used once.\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

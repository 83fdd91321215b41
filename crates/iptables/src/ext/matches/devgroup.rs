//! `-m devgroup`: the device group of the input and/or output interface
//! (iptables' libxt_devgroup). Group names come from `/etc/iproute2/group`.

use crate::error::{Error, Result};
use crate::ext::lmap::{self, put_val_mask};
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;

/// One side's test: group value, mask, inverted.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Group {
    pub group: u32,
    pub mask: u32,
    pub inv: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Devgroup {
    /// Input device (`--src-group`).
    pub src: Option<Group>,
    /// Output device (`--dst-group`).
    pub dst: Option<Group>,
}

const SRC: u8 = 0;
const DST: u8 = 1;

impl Devgroup {
    fn show(&self, out: &mut String, prefix: &str, map: Option<&lmap::Lmap>) {
        for (g, word) in [(&self.src, "src-group"), (&self.dst, "dst-group")] {
            if let Some(g) = g {
                if g.inv {
                    out.push_str(" !");
                }
                out.push(' ');
                out.push_str(prefix);
                out.push_str(word);
                put_val_mask(out, g.group, g.mask, map);
            }
        }
    }
}

impl Ext for Devgroup {
    const NAME: &'static str = "devgroup";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("src-group", SRC, Arg::Required).inv(),
        OptDef::new("dst-group", DST, Arg::Required).inv(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Devgroup {
            src: None,
            dst: None,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let (group, mask) = lmap::parse_val_mask(c, lmap::devgroups())?;
        let g = Some(Group {
            group,
            mask,
            inv: c.inv,
        });
        if c.opt.id == SRC {
            self.src = g;
        } else {
            self.dst = g;
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        if seen == 0 {
            return Err(Error::param(
                "devgroup match: You must specify either '--src-group' or '--dst-group'",
            ));
        }
        // The kernel's checks: an input device exists only on the input
        // side of the stack, an output device only on the output side.
        if self.src.is_some() {
            opt::check_hooks(
                "devgroup match --src-group",
                ctx.table,
                ctx.chain,
                &["PREROUTING", "INPUT", "FORWARD"],
            )?;
        }
        if self.dst.is_some() {
            opt::check_hooks(
                "devgroup match --dst-group",
                ctx.table,
                ctx.chain,
                &["FORWARD", "OUTPUT", "POSTROUTING"],
            )?;
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.show(out, "--", Some(lmap::devgroups()));
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        self.show(out, "", (!ctx.numeric).then(lmap::devgroups));
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, err_in, list_in, save_in};
    use ruleset::{Family, TableKind};

    // Groups above 255 have no name in any map file.
    #[test]
    fn forms() {
        let cases = [
            (
                "-m devgroup --src-group 0x200",
                " --src-group 0x200",
                " src-group 0x200",
            ),
            (
                "-m devgroup ! --dst-group 0xc/0xc",
                " ! --dst-group 0xc/0xc",
                " ! dst-group 0xc/0xc",
            ),
            (
                "-m devgroup --dst-group 512 ! --src-group 0x300/7",
                " ! --src-group 0x300/0x7 --dst-group 0x200",
                " ! src-group 0x300/0x7 dst-group 0x200",
            ),
        ];
        for (args, s, l) in cases {
            let at = |f: fn(Family, TableKind, &str, &str) -> String| {
                f(Family::Ipv4, TableKind::Filter, "FORWARD", args)
            };
            assert_eq!(at(save_in), s, "{args}");
            for numeric in [false, true] {
                let got = list_in(Family::Ipv4, TableKind::Filter, "FORWARD", args, numeric);
                assert_eq!(got, l, "{args}");
            }
        }
    }

    #[test]
    fn errors() {
        assert_eq!(
            err("-m devgroup"),
            "devgroup match: You must specify either '--src-group' or '--dst-group'"
        );
        assert_eq!(
            err("-m devgroup --dst-group 1"),
            "Invalid argument: devgroup match --dst-group: used from hooks INPUT, but only valid from FORWARD/OUTPUT/POSTROUTING."
        );
        assert_eq!(
            err_in(Family::Ipv6, TableKind::Mangle, "OUTPUT", "-m devgroup --src-group 1"),
            "Invalid argument: devgroup match --src-group: used from hooks OUTPUT, but only valid from PREROUTING/INPUT/FORWARD."
        );
    }
}

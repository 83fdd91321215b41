//! `-m socket`: a local socket exists for the packet (iptables'
//! libxt_socket, revision 3 — the newest this kernel offers).

use crate::error::Result;
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Socket {
    /// XT_SOCKET_* flags: 1 transparent, 2 nowildcard, 4 restore-skmark.
    pub flags: u8,
}

pub const TRANSPARENT: u8 = 1;
pub const NOWILDCARD: u8 = 2;
pub const RESTORESKMARK: u8 = 4;

/// Options in print order with their flag bits.
const WORDS: &[(&str, u8)] = &[
    (" --transparent", TRANSPARENT),
    (" --nowildcard", NOWILDCARD),
    (" --restore-skmark", RESTORESKMARK),
];

impl Ext for Socket {
    const NAME: &'static str = "socket";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("transparent", 0, Arg::None),
        OptDef::new("nowildcard", 1, Arg::None),
        OptDef::new("restore-skmark", 2, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Socket { flags: 0 }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.flags |= 1 << c.opt.id;
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        // The kernel looks sockets up on the input path only.
        opt::check_hooks(
            "socket match",
            ctx.table,
            ctx.chain,
            &["PREROUTING", "INPUT"],
        )
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        for (word, bit) in WORDS {
            if self.flags & bit != 0 {
                out.push_str(word);
            }
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" socket");
        self.save(ctx, out);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, list_in, save_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        let cases = [
            ("-m socket", "", " socket"),
            (
                "-m socket --restore-skmark --nowildcard --transparent",
                " --transparent --nowildcard --restore-skmark",
                " socket --transparent --nowildcard --restore-skmark",
            ),
            (
                "-m socket --restore-skmark",
                " --restore-skmark",
                " socket --restore-skmark",
            ),
        ];
        for (args, s, l) in cases {
            for fam in [Family::Ipv4, Family::Ipv6] {
                assert_eq!(save_in(fam, TableKind::Mangle, "PREROUTING", args), s);
                for numeric in [false, true] {
                    let got = list_in(fam, TableKind::Mangle, "PREROUTING", args, numeric);
                    assert_eq!(got, l, "{args}");
                }
            }
        }
    }

    #[test]
    fn errors() {
        assert_eq!(
            err_in(Family::Ipv4, TableKind::Mangle, "OUTPUT", "-m socket"),
            "Invalid argument: socket match: used from hooks OUTPUT, but only valid from PREROUTING/INPUT."
        );
        assert_eq!(
            err_in(
                Family::Ipv4,
                TableKind::Mangle,
                "INPUT",
                "-m socket --transparent --transparent"
            ),
            "socket: option \"--transparent\" can only be used once.\n"
        );
    }
}

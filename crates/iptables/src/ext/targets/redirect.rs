//! `-j REDIRECT` (iptables' libxt_NAT, REDIRECT for IPv4 and IPv6): send
//! to the local machine, optionally to other ports; nat PREROUTING/OUTPUT.

use super::snat::{check_table_hooks, NatRange, O_RANDOM, O_TO_PORTS, PROTO_OFFSET};
use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Redirect {
    pub range: NatRange,
}

impl Ext for Redirect {
    const NAME: &'static str = "REDIRECT";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("to-ports", O_TO_PORTS, Arg::Required),
        OptDef::new("random", O_RANDOM, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Redirect {
            range: NatRange::default(),
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.range.parse_opt(c)
    }

    fn finish(&mut self, _: u32, ctx: &ParseCtx) -> Result<()> {
        if self.range.flags & PROTO_OFFSET != 0 {
            return Err(Error::param(
                "Shifted portmap ranges not supported with this kernel",
            ));
        }
        check_table_hooks("REDIRECT", ctx, TableKind::Nat, &["PREROUTING", "OUTPUT"])
    }

    fn save(&self, ctx: &PrintCtx, out: &mut String) {
        self.range
            .print(out, ctx.is_v6(), "--to-ports ", "--", true);
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        self.range.print(out, ctx.is_v6(), "redir ports ", "", true);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{run, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn list_forms() {
        let cases: &[(Family, &str, &str, &str)] = &[
            (Family::Ipv4, "-j REDIRECT", "", ""),
            (Family::Ipv4, "-j REDIRECT --random", " --random", " random"),
            (
                Family::Ipv4,
                "-p tcp -j REDIRECT --to-ports 8080",
                " --to-ports 8080",
                " redir ports 8080",
            ),
            (
                Family::Ipv6,
                "-p udp -j REDIRECT --to-ports 42-1234 --random",
                " --to-ports 42-1234 --random",
                " redir ports 42-1234 random",
            ),
            (
                Family::Ipv6,
                "-p tcp -j REDIRECT --to-ports ssh",
                " --to-ports 22",
                " redir ports 22",
            ),
        ];
        for (fam, rule, save, want) in cases {
            let Printed {
                save: s,
                list: l,
                list_numeric: n,
            } = run(*fam, TableKind::Nat, "PREROUTING", rule).unwrap();
            assert_eq!(s, *save, "{rule}");
            assert_eq!(l, *want, "{rule}");
            assert_eq!(n, *want, "{rule} -n");
        }
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "OUTPUT",
                "-p tcp -j REDIRECT --to-ports 42-1234/567",
                "Shifted portmap ranges not supported with this kernel",
            ),
            (
                "OUTPUT",
                "-p tcp -j REDIRECT --to-ports 10-ssh",
                "Port `ssh' not valid",
            ),
            (
                "OUTPUT",
                "-j REDIRECT --to-ports 42",
                "Need TCP, UDP, SCTP or DCCP with port specification",
            ),
            (
                "INPUT",
                "-j REDIRECT",
                "Invalid argument: REDIRECT target: used from hooks INPUT, but only usable from PREROUTING/OUTPUT.",
            ),
        ];
        for (chain, rule, want) in cases {
            let e = run(Family::Ipv4, TableKind::Nat, chain, rule)
                .unwrap_err()
                .msg;
            assert_eq!(e, *want, "{rule}");
        }
    }
}

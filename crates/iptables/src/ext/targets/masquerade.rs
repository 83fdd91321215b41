//! `-j MASQUERADE` (iptables' libxt_NAT, MASQUERADE for IPv4 and IPv6):
//! source NAT to the outgoing interface's address, nat POSTROUTING only.

use super::snat::{check_table_hooks, NatRange, O_RANDOM, O_RANDOM_FULLY, O_TO_PORTS};
use crate::error::Result;
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Masquerade {
    pub range: NatRange,
}

impl Ext for Masquerade {
    const NAME: &'static str = "MASQUERADE";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("to-ports", O_TO_PORTS, Arg::Required),
        OptDef::new("random", O_RANDOM, Arg::None),
        OptDef::new("random-fully", O_RANDOM_FULLY, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Masquerade {
            range: NatRange::default(),
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.range.parse_opt(c)?;
        // Neither MASQUERADE structure keeps a base port: iptables keeps the
        // "shifted" flag and loses the value.
        self.range.base_port = 0;
        Ok(())
    }

    fn finish(&mut self, _: u32, ctx: &ParseCtx) -> Result<()> {
        check_table_hooks("MASQUERADE", ctx, TableKind::Nat, &["POSTROUTING"])
    }

    fn save(&self, ctx: &PrintCtx, out: &mut String) {
        self.range
            .print(out, ctx.is_v6(), "--to-ports ", "--", true);
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        self.range.print(out, ctx.is_v6(), "masq ports: ", "", true);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{run, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn list_forms() {
        let cases: &[(Family, &str, &str, &str)] = &[
            (Family::Ipv4, "-j MASQUERADE", "", ""),
            (
                Family::Ipv4,
                "-p tcp -j MASQUERADE --to-ports 1024-65535 --random",
                " --to-ports 1024-65535 --random",
                " masq ports: 1024-65535 random",
            ),
            (
                Family::Ipv6,
                "-p udp -j MASQUERADE --to-ports 53 --random-fully",
                " --to-ports 53 --random-fully",
                " masq ports: 53 random-fully",
            ),
            (
                Family::Ipv6,
                "-p udp -j MASQUERADE --to-ports 0x10-0x20",
                " --to-ports 16-32",
                " masq ports: 16-32",
            ),
        ];
        for (fam, rule, save, want) in cases {
            let Printed {
                save: s,
                list: l,
                list_numeric: n,
            } = run(*fam, TableKind::Nat, "POSTROUTING", rule).unwrap();
            assert_eq!(s, *save, "{rule}");
            assert_eq!(l, *want, "{rule}");
            assert_eq!(n, *want, "{rule} -n");
        }
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "POSTROUTING",
                "-j MASQUERADE --to-ports 1024",
                "Need TCP, UDP, SCTP or DCCP with port specification",
            ),
            (
                "POSTROUTING",
                "-p udp -j MASQUERADE --to-ports 1024-65536",
                "Port `65536' not valid",
            ),
            (
                "POSTROUTING",
                "-p udp -j MASQUERADE --to-ports -1",
                "Port `-1' not valid",
            ),
            (
                "PREROUTING",
                "-j MASQUERADE",
                "Invalid argument: MASQUERADE target: used from hooks PREROUTING, but only usable from POSTROUTING.",
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

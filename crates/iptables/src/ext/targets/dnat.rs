//! `-j DNAT` (iptables' libxt_NAT, DNAT revision 2 for IPv4 and IPv6: the
//! one with shifted port maps `:lo-hi/base`). The range value and its
//! parser live in `snat.rs`.

use super::snat::{check_table_hooks, NatRange, O_PERSISTENT, O_RANDOM, O_TO_DEST};
use crate::error::Result;
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dnat {
    pub range: NatRange,
}

impl Ext for Dnat {
    const NAME: &'static str = "DNAT";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("to-destination", O_TO_DEST, Arg::Required).mand(),
        OptDef::new("random", O_RANDOM, Arg::None),
        OptDef::new("persistent", O_PERSISTENT, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Dnat {
            range: NatRange::default(),
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.range.parse_opt(c)
    }

    fn finish(&mut self, _: u32, ctx: &ParseCtx) -> Result<()> {
        check_table_hooks("DNAT", ctx, TableKind::Nat, &["PREROUTING", "OUTPUT"])
    }

    fn save(&self, ctx: &PrintCtx, out: &mut String) {
        self.range
            .print(out, ctx.is_v6(), "--to-destination ", "--", false);
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        self.range.print(out, ctx.is_v6(), "to:", "", false);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{run, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn list_forms() {
        let cases: &[(Family, &str, &str, &str)] = &[
            (
                Family::Ipv4,
                "-j DNAT --to-destination 1.1.1.1",
                " --to-destination 1.1.1.1",
                " to:1.1.1.1",
            ),
            (
                Family::Ipv4,
                "-p tcp -j DNAT --to-destination 1.1.1.1:1000-2000/ftp --random --persistent",
                " --to-destination 1.1.1.1:1000-2000/21 --random --persistent",
                " to:1.1.1.1:1000-2000/21 random persistent",
            ),
            (
                Family::Ipv4,
                "-p tcp -j DNAT --to-destination :ssh",
                " --to-destination :22",
                " to::22",
            ),
            (
                Family::Ipv4,
                "-p tcp -j DNAT --to-destination 1.1.1.1-1.1.1.1:80-80",
                " --to-destination 1.1.1.1:80",
                " to:1.1.1.1:80",
            ),
            (
                Family::Ipv6,
                "-p udp -j DNAT --to-destination [::ffff:1.2.3.4]:53",
                " --to-destination [::ffff:1.2.3.4]:53",
                " to:[::ffff:1.2.3.4]:53",
            ),
            (
                Family::Ipv6,
                "-j DNAT --to-destination 2001:db8::1-2001:db8::9",
                " --to-destination 2001:db8::1-2001:db8::9",
                " to:2001:db8::1-2001:db8::9",
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
        let cases: &[(Family, &str, &str, &str)] = &[
            (
                Family::Ipv4,
                "PREROUTING",
                "-p tcp -j DNAT --to-destination 1.1.1.1:echo-ssh",
                "Port `echo-ssh' not valid",
            ),
            (
                Family::Ipv6,
                "PREROUTING",
                "-p tcp -j DNAT --to-destination [::1]:1:2",
                "Invalid port:port syntax - use dash",
            ),
            // Two colons without brackets: all of it is taken as an address.
            (
                Family::Ipv4,
                "PREROUTING",
                "-p tcp -j DNAT --to-destination 1.1.1.1:1:2",
                "Bad IP address \"1.1.1.1:1:2\"",
            ),
            (
                Family::Ipv4,
                "PREROUTING",
                "-p tcp -j DNAT --to-destination 1.1.1.1:1-2/0",
                "Port `0' not valid",
            ),
            (
                Family::Ipv6,
                "PREROUTING",
                "-j DNAT --to-destination [dead::beef]:80",
                "Need TCP, UDP, SCTP or DCCP with port specification",
            ),
            (
                Family::Ipv6,
                "PREROUTING",
                "-p tcp -j DNAT --to-destination [dead::beef:80",
                "Invalid address format",
            ),
            (
                Family::Ipv6,
                "PREROUTING",
                "-j DNAT --to-destination dead::beef-xyz",
                "Bad IP address \"xyz\"",
            ),
            (
                Family::Ipv4,
                "POSTROUTING",
                "-j DNAT --to-destination 1.1.1.1",
                "Invalid argument: DNAT target: used from hooks POSTROUTING, but only usable from PREROUTING/OUTPUT.",
            ),
            (
                Family::Ipv4,
                "PREROUTING",
                "-j DNAT --to-destination 1.1.1.1 --random-fully",
                "unknown option \"--random-fully\"",
            ),
        ];
        for (fam, chain, rule, want) in cases {
            let e = run(*fam, TableKind::Nat, chain, rule).unwrap_err().msg;
            assert_eq!(e, *want, "{rule}");
        }
    }
}

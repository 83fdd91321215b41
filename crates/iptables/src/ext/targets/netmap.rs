//! `-j NETMAP`: map a whole network onto another, address by address
//! (iptables' libipt_NETMAP / libip6t_NETMAP). Nat table only.

use super::snat::check_table;
use super::xtypes::{fmt_addr, parse_hostmask};
use crate::error::Result;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use ruleset::TableKind;

/// The target network. Canonical: `addr` has no bits outside `mask`; IPv4
/// uses the first 4 bytes of both (the rest zero). The kernel's range is
/// `addr` to `addr | !mask`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Netmap {
    pub addr: [u8; 16],
    pub mask: [u8; 16],
}

const TO: u8 = 0;

impl Netmap {
    /// `ADDR/BITS`, or `ADDR/MASK` for a mask with holes.
    fn network(&self, out: &mut String, v6: bool) {
        fmt_addr(out, &self.addr, v6);
        out.push('/');
        let n = if v6 { 16 } else { 4 };
        match opt::mask_prefix(&self.mask[..n]) {
            Some(bits) => out.push_str(&bits.to_string()),
            None => fmt_addr(out, &self.mask, v6),
        }
    }
}

impl Ext for Netmap {
    const NAME: &'static str = "NETMAP";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[OptDef::new("to", TO, Arg::Required).mand()];

    fn new(_: &ParseCtx) -> Self {
        Netmap {
            addr: [0; 16],
            mask: [0; 16],
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let v6 = c.ctx.is_v6();
        let (addr, mut mask, _) = parse_hostmask(c, v6)?;
        if !v6 {
            mask[4..].fill(0);
        }
        for i in 0..16 {
            self.addr[i] = addr[i] & mask[i];
        }
        self.mask = mask;
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        crate::ext::postcheck(Self::NAME, Self::OPTS, seen)?;
        check_table("NETMAP", ctx, TableKind::Nat)
    }

    fn save(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" --to ");
        self.network(out, ctx.is_v6());
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" to:");
        self.network(out, ctx.is_v6());
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // family, rule, network as printed
        let cases: &[(Family, &str, &str)] = &[
            (Family::Ipv4, "-j NETMAP --to 1.2.3.0/24", "1.2.3.0/24"),
            (Family::Ipv4, "-j NETMAP --to 1.2.3.4", "1.2.3.4/32"),
            (Family::Ipv4, "-j NETMAP --to 1.2.3.4/24", "1.2.3.0/24"),
            (
                Family::Ipv4,
                "-j NETMAP --to 10.1/255.255.0.0",
                "10.0.0.0/16",
            ),
            (Family::Ipv4, "-j NETMAP --to 1.2.3.4/0", "0.0.0.0/0"),
            (
                Family::Ipv4,
                "-j NETMAP --to 1.2.3.4/255.0.255.0",
                "1.0.3.0/255.0.255.0",
            ),
            // A number beyond 32 is read as an address: a mask with holes.
            (
                Family::Ipv4,
                "-j NETMAP --to 1.2.3.0/33",
                "0.0.0.0/0.0.0.33",
            ),
            (Family::Ipv6, "-j NETMAP --to dead::/64", "dead::/64"),
            (Family::Ipv6, "-j NETMAP --to dead::beef", "dead::beef/128"),
            (
                Family::Ipv6,
                "-j NETMAP --to dead::beef/ffff::",
                "dead::/16",
            ),
            (
                Family::Ipv6,
                "-j NETMAP --to dead::beef/ffff::ff00",
                "dead::be00/ffff::ff00",
            ),
        ];
        for (fam, rule, net) in cases {
            for chain in ["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING", "mychain"] {
                let got = ok_in(*fam, TableKind::Nat, chain, rule);
                assert_eq!(got.save, format!(" --to {net}"), "{rule}");
                assert_eq!(got.list, format!(" to:{net}"), "{rule}");
                assert_eq!(got.list_numeric, got.list, "{rule}");
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(Family, TableKind, &str, &str)] = &[
            (
                Family::Ipv4,
                TableKind::Nat,
                "-j NETMAP",
                "NETMAP: option \"--to\" must be specified\n",
            ),
            (
                Family::Ipv4,
                TableKind::Nat,
                "-j NETMAP --to 1.2.3.0/x",
                "NETMAP: bad value for option \"--to\", neither a valid network mask nor valid CIDR (0-32).\n",
            ),
            (
                Family::Ipv6,
                TableKind::Nat,
                "-j NETMAP --to dead::/129",
                "NETMAP: bad value for option \"--to\", neither a valid network mask nor valid CIDR (0-128).\n",
            ),
            (
                Family::Ipv4,
                TableKind::Nat,
                "-j NETMAP --to example.org/24",
                "getaddrinfo: Name or service not known\n",
            ),
            (
                Family::Ipv4,
                TableKind::Mangle,
                "-j NETMAP --to 1.2.3.0/24",
                "Invalid argument: NETMAP target: only valid in nat table, not mangle.",
            ),
        ];
        for (fam, table, rule, want) in cases {
            assert_eq!(err_in(*fam, *table, "PREROUTING", rule), *want, "{rule}");
        }
    }
}

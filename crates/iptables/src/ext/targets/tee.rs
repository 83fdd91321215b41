//! `-j TEE`: send a copy of the packet to a gateway (iptables' libxt_TEE,
//! revision 1). Usable everywhere.

use super::xtypes::{check_plain_word, einval, fmt_addr, parse_host, put_string};
use crate::error::Result;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};

/// IFNAMSIZ: the interface name's `char` array, NUL included.
pub const OIF_SIZE: usize = 16;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tee {
    /// IPv4 in the first 4 bytes (the rest zero).
    pub gw: [u8; 16],
    /// The output interface ("" = any), at most `OIF_SIZE - 1` bytes.
    pub oif: String,
}

const GATEWAY: u8 = 0;
const OIF: u8 = 1;

impl Ext for Tee {
    const NAME: &'static str = "TEE";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("gateway", GATEWAY, Arg::Required).mand(),
        OptDef::new("oif", OIF, Arg::Required),
    ];

    fn new(_: &ParseCtx) -> Self {
        Tee {
            gw: [0; 16],
            oif: String::new(),
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            GATEWAY => self.gw = parse_host(c.arg, c.ctx.is_v6())?,
            _ => self.oif = put_string(c.arg, OIF_SIZE),
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        crate::ext::postcheck(Self::NAME, Self::OPTS, seen)?;
        if self.gw == [0; 16] {
            return Err(einval("TEE", "the gateway may not be the any address"));
        }
        if !self.oif.is_empty() {
            check_plain_word(Self::NAME, "oif", &self.oif)?;
        }
        Ok(())
    }

    fn save(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" --gateway ");
        fmt_addr(out, &self.gw, ctx.is_v6());
        if !self.oif.is_empty() {
            out.push_str(" --oif ");
            out.push_str(&self.oif);
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" TEE gw:");
        fmt_addr(out, &self.gw, ctx.is_v6());
        if !self.oif.is_empty() {
            out.push_str(" oif=");
            out.push_str(&self.oif);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // family, rule, save, -L
        let cases: &[(Family, &str, &str, &str)] = &[
            (
                Family::Ipv4,
                "-j TEE --gateway 1.1.1.1",
                " --gateway 1.1.1.1",
                " TEE gw:1.1.1.1",
            ),
            (
                Family::Ipv4,
                "-j TEE --oif eth0 --gateway 10.1",
                " --gateway 10.0.0.1 --oif eth0",
                " TEE gw:10.0.0.1 oif=eth0",
            ),
            (
                Family::Ipv6,
                "-j TEE --gateway 2001:db8::1",
                " --gateway 2001:db8::1",
                " TEE gw:2001:db8::1",
            ),
            (
                Family::Ipv6,
                "-j TEE --gateway 2001:DB8:0::1 --oif abcdefghijklmnopq",
                " --gateway 2001:db8::1 --oif abcdefghijklmno",
                " TEE gw:2001:db8::1 oif=abcdefghijklmno",
            ),
        ];
        for (fam, rule, save, list) in cases {
            for (table, chain) in [
                (TableKind::Mangle, "PREROUTING"),
                (TableKind::Filter, "INPUT"),
            ] {
                let got = ok_in(*fam, table, chain, rule);
                assert_eq!(got.save, *save, "{rule}");
                assert_eq!(got.list, *list, "{rule}");
                assert_eq!(got.list_numeric, *list, "{rule}");
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(Family, &str, &str)] = &[
            (
                Family::Ipv4,
                "-j TEE",
                "TEE: option \"--gateway\" must be specified\n",
            ),
            (
                Family::Ipv4,
                "-j TEE ! --gateway 1.1.1.1",
                "TEE: option \"--gateway\" cannot be inverted.\n",
            ),
            (
                Family::Ipv6,
                "-j TEE --gateway 1.1.1.1",
                "getaddrinfo: Address family for hostname not supported\n",
            ),
            (
                Family::Ipv4,
                "-j TEE --gateway ::1",
                "getaddrinfo: Address family for hostname not supported\n",
            ),
            (
                Family::Ipv4,
                "-j TEE --gateway 0.0.0.0",
                "Invalid argument: TEE target: the gateway may not be the any address.",
            ),
            (
                Family::Ipv6,
                "-j TEE --gateway ::",
                "Invalid argument: TEE target: the gateway may not be the any address.",
            ),
            (
                Family::Ipv4,
                "-j TEE --gateway 1.1.1.1 --oif \"a\\\"b\"",
                "TEE: \"--oif a\"b\" would not read back from the saved rule; nfkeeper cannot keep this rule",
            ),
        ];
        for (fam, rule, want) in cases {
            assert_eq!(
                err_in(*fam, TableKind::Filter, "INPUT", rule),
                *want,
                "{rule}"
            );
        }
    }
}

//! `-j TCPMSS`: set or clamp the MSS option of TCP SYN packets (iptables'
//! libxt_TCPMSS). Needs `-p tcp`; like iptables-nft, a SYN match is not
//! required.

use crate::error::{Error, Result};
use crate::ext::{require_proto, Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tcpmss {
    /// The MSS to set, or [`CLAMP_PMTU`].
    pub mss: u16,
}

/// The kernel's XT_TCPMSS_CLAMP_PMTU.
pub const CLAMP_PMTU: u16 = 0xffff;

const SET_MSS: u8 = 0;
const CLAMP_MSS: u8 = 1;

/// Built-in chains whose hooks allow path-MTU clamping.
const CLAMP_CHAINS: &[&str] = &["FORWARD", "OUTPUT", "POSTROUTING"];
const BUILTIN_CHAINS: &[&str] = &["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"];

impl Ext for Tcpmss {
    const NAME: &'static str = "TCPMSS";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("set-mss", SET_MSS, Arg::Required),
        OptDef::new("clamp-mss-to-pmtu", CLAMP_MSS, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Tcpmss { mss: 0 }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            SET_MSS => {
                // Room for the IP header within 65535.
                let hdr = if c.ctx.is_v6() { 40 } else { 20 };
                self.mss = c.uint(0, 65535 - hdr)? as u16;
            }
            CLAMP_MSS => self.mss = CLAMP_PMTU,
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        if seen == 0 {
            return Err(Error::param(
                "TCPMSS target: At least one parameter is required",
            ));
        }
        require_proto("TCPMSS target", ctx, &[6])?;
        if self.mss == CLAMP_PMTU
            && BUILTIN_CHAINS.contains(&ctx.chain)
            && !CLAMP_CHAINS.contains(&ctx.chain)
        {
            return Err(Error::op(
                "Invalid argument: TCPMSS target: path-MTU clamping only supported in FORWARD, OUTPUT and POSTROUTING hooks.",
            ));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.mss == CLAMP_PMTU {
            out.push_str(" --clamp-mss-to-pmtu");
        } else {
            let _ = write!(out, " --set-mss {}", self.mss);
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        if self.mss == CLAMP_PMTU {
            out.push_str(" TCPMSS clamp to PMTU");
        } else {
            let _ = write!(out, " TCPMSS set {}", self.mss);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, run, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // family, chain, rule, save, -L
        let cases: &[(Family, &str, &str, &str, &str)] = &[
            (
                Family::Ipv4,
                "FORWARD",
                "-p tcp -j TCPMSS --set-mss 1400",
                " --set-mss 1400",
                " TCPMSS set 1400",
            ),
            (
                Family::Ipv4,
                "INPUT",
                "-p tcp --syn -j TCPMSS --set-mss 0x10",
                " --set-mss 16",
                " TCPMSS set 16",
            ),
            (
                Family::Ipv4,
                "OUTPUT",
                "-p 6 -j TCPMSS --set-mss 65515",
                " --set-mss 65515",
                " TCPMSS set 65515",
            ),
            (
                Family::Ipv6,
                "POSTROUTING",
                "-p tcp -j TCPMSS --set-mss 65495",
                " --set-mss 65495",
                " TCPMSS set 65495",
            ),
            (
                Family::Ipv4,
                "POSTROUTING",
                "-p tcp -j TCPMSS --clamp-mss-to-pmtu",
                " --clamp-mss-to-pmtu",
                " TCPMSS clamp to PMTU",
            ),
            (
                Family::Ipv6,
                "mychain",
                "-p tcp -j TCPMSS --clamp-mss-to-pmtu",
                " --clamp-mss-to-pmtu",
                " TCPMSS clamp to PMTU",
            ),
            (
                Family::Ipv4,
                "FORWARD",
                "-p tcp -j TCPMSS --clamp-mss-to-pmtu --set-mss 500",
                " --set-mss 500",
                " TCPMSS set 500",
            ),
            (
                Family::Ipv4,
                "FORWARD",
                "-p tcp -j TCPMSS --set-mss 500 --clamp-mss-to-pmtu",
                " --clamp-mss-to-pmtu",
                " TCPMSS clamp to PMTU",
            ),
        ];
        for (family, chain, rule, save, list) in cases {
            let Printed {
                save: s,
                list: l,
                list_numeric: n,
            } = run(*family, TableKind::Mangle, chain, rule).unwrap();
            assert_eq!(s, *save, "{rule}");
            assert_eq!(l, *list, "{rule}");
            assert_eq!(n, *list, "{rule} -n");
        }
    }

    #[test]
    fn errors() {
        let cases: &[(Family, &str, &str, &str)] = &[
            (
                Family::Ipv4,
                "FORWARD",
                "-p tcp -j TCPMSS",
                "TCPMSS target: At least one parameter is required",
            ),
            (
                Family::Ipv4,
                "FORWARD",
                "-j TCPMSS --set-mss 1000",
                "Invalid argument: TCPMSS target: only valid for protocol 6.",
            ),
            (
                Family::Ipv4,
                "FORWARD",
                "! -p tcp -j TCPMSS --set-mss 1000",
                "Invalid argument: TCPMSS target: only valid for protocol 6.",
            ),
            (
                Family::Ipv4,
                "FORWARD",
                "-p tcp -j TCPMSS --set-mss 65516",
                "TCPMSS: bad value for option \"--set-mss\", or out of range (0-65515).\n",
            ),
            (
                Family::Ipv6,
                "FORWARD",
                "-p tcp -j TCPMSS --set-mss 65496",
                "TCPMSS: bad value for option \"--set-mss\", or out of range (0-65495).\n",
            ),
            (
                Family::Ipv4,
                "PREROUTING",
                "-p tcp -j TCPMSS --clamp-mss-to-pmtu",
                "Invalid argument: TCPMSS target: path-MTU clamping only supported in FORWARD, OUTPUT and POSTROUTING hooks.",
            ),
            (
                Family::Ipv6,
                "INPUT",
                "-p tcp -j TCPMSS --clamp-mss-to-pmtu",
                "Invalid argument: TCPMSS target: path-MTU clamping only supported in FORWARD, OUTPUT and POSTROUTING hooks.",
            ),
        ];
        for (family, chain, rule, want) in cases {
            assert_eq!(
                err_in(*family, TableKind::Mangle, chain, rule),
                *want,
                "{rule}"
            );
        }
    }
}

//! `-j SYNPROXY`: answer TCP SYNs with SYN cookies and hand the connection
//! to the server once the client completed the handshake (iptables'
//! libxt_SYNPROXY). The kernel takes it from the INPUT and FORWARD hooks,
//! in TCP rules only.

use super::snat::check_target_hooks;
use crate::error::Result;
use crate::ext::{require_proto, Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

/// xt_synproxy_info.options bits.
pub const OPT_MSS: u8 = 0x01;
pub const OPT_WSCALE: u8 = 0x02;
pub const OPT_SACK_PERM: u8 = 0x04;
pub const OPT_TIMESTAMP: u8 = 0x08;
pub const OPT_ECN: u8 = 0x10;

/// Canonical: `wscale`/`mss` are zero unless their option bit is set.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Synproxy {
    pub options: u8,
    pub wscale: u8,
    pub mss: u16,
}

const SACK_PERM: u8 = 0;
const TIMESTAMP: u8 = 1;
const WSCALE: u8 = 2;
const MSS: u8 = 3;
const ECN: u8 = 4;

impl Ext for Synproxy {
    const NAME: &'static str = "SYNPROXY";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("sack-perm", SACK_PERM, Arg::None),
        OptDef::new("timestamp", TIMESTAMP, Arg::None),
        OptDef::new("wscale", WSCALE, Arg::Required),
        OptDef::new("mss", MSS, Arg::Required),
        OptDef::new("ecn", ECN, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Synproxy {
            options: 0,
            wscale: 0,
            mss: 0,
        }
    }

    // wscale and mss are read as 32-bit numbers and stored in 8 and 16
    // bits: iptables keeps the low bits.
    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            SACK_PERM => self.options |= OPT_SACK_PERM,
            TIMESTAMP => self.options |= OPT_TIMESTAMP,
            WSCALE => {
                self.wscale = c.uint(0, u32::MAX as u64)? as u8;
                self.options |= OPT_WSCALE;
            }
            MSS => {
                self.mss = c.uint(0, u32::MAX as u64)? as u16;
                self.options |= OPT_MSS;
            }
            _ => self.options |= OPT_ECN,
        }
        Ok(())
    }

    fn finish(&mut self, _: u32, ctx: &ParseCtx) -> Result<()> {
        check_target_hooks("SYNPROXY", ctx, &["INPUT", "FORWARD"])?;
        require_proto("SYNPROXY target", ctx, &[6])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        let o = self.options;
        if o & OPT_SACK_PERM != 0 {
            out.push_str(" --sack-perm");
        }
        if o & OPT_TIMESTAMP != 0 {
            out.push_str(" --timestamp");
        }
        if o & OPT_WSCALE != 0 {
            let _ = write!(out, " --wscale {}", self.wscale);
        }
        if o & OPT_MSS != 0 {
            let _ = write!(out, " --mss {}", self.mss);
        }
        if o & OPT_ECN != 0 {
            out.push_str(" --ecn");
        }
    }

    // Every piece is followed by a space, as iptables prints it.
    fn list(&self, _: &PrintCtx, out: &mut String) {
        let o = self.options;
        out.push_str(" SYNPROXY ");
        if o & OPT_SACK_PERM != 0 {
            out.push_str("sack-perm ");
        }
        if o & OPT_TIMESTAMP != 0 {
            out.push_str("timestamp ");
        }
        if o & OPT_WSCALE != 0 {
            let _ = write!(out, "wscale {} ", self.wscale);
        }
        if o & OPT_MSS != 0 {
            let _ = write!(out, "mss {} ", self.mss);
        }
        if o & OPT_ECN != 0 {
            out.push_str("ecn ");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // rule, save, -L
        let cases: &[(&str, &str, &str)] = &[
            (
                "-p tcp -j SYNPROXY --sack-perm --timestamp --wscale 9 --mss 1460",
                " --sack-perm --timestamp --wscale 9 --mss 1460",
                " SYNPROXY sack-perm timestamp wscale 9 mss 1460 ",
            ),
            (
                "-p tcp -j SYNPROXY --ecn --mss 1460 --wscale 7 --timestamp --sack-perm",
                " --sack-perm --timestamp --wscale 7 --mss 1460 --ecn",
                " SYNPROXY sack-perm timestamp wscale 7 mss 1460 ecn ",
            ),
            ("-p tcp -j SYNPROXY", "", " SYNPROXY "),
            (
                "-p tcp -j SYNPROXY --wscale 300 --mss 65537",
                " --wscale 44 --mss 1",
                " SYNPROXY wscale 44 mss 1 ",
            ),
        ];
        for fam in [Family::Ipv4, Family::Ipv6] {
            for (table, chain) in [
                (TableKind::Filter, "INPUT"),
                (TableKind::Raw, "mychain"),
                (TableKind::Mangle, "FORWARD"),
            ] {
                for (rule, save, list) in cases {
                    let got = ok_in(fam, table, chain, rule);
                    assert_eq!(got.save, *save, "{rule}");
                    assert_eq!(got.list, *list, "{rule}");
                    assert_eq!(got.list_numeric, *list, "{rule}");
                }
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "INPUT",
                "-j SYNPROXY --sack-perm --timestamp --mss 1460 --wscale 9",
                "Invalid argument: SYNPROXY target: only valid for protocol 6.",
            ),
            (
                "INPUT",
                "! -p tcp -j SYNPROXY",
                "Invalid argument: SYNPROXY target: only valid for protocol 6.",
            ),
            (
                "OUTPUT",
                "-p tcp -j SYNPROXY",
                "Invalid argument: SYNPROXY target: used from hooks OUTPUT, but only usable from INPUT/FORWARD.",
            ),
            (
                "INPUT",
                "-p tcp -j SYNPROXY --mss 1 --mss 2",
                "SYNPROXY: option \"--mss\" can only be used once.\n",
            ),
            (
                "INPUT",
                "-p tcp -j SYNPROXY --wscale 4294967296",
                "SYNPROXY: bad value for option \"--wscale\", or out of range (0-4294967295).\n",
            ),
        ];
        for (chain, rule, want) in cases {
            assert_eq!(
                err_in(Family::Ipv4, TableKind::Filter, chain, rule),
                *want,
                "{rule}"
            );
        }
    }
}

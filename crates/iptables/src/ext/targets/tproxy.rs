//! `-j TPROXY`: deliver the packet to a local socket without changing it
//! (iptables' libxt_TPROXY, revision 1). Mangle PREROUTING only, TCP and
//! UDP rules only.

use super::snat::check_table_hooks;
use super::xtypes::{einval, fmt_addr, parse_host};
use crate::error::{Error, Result};
use crate::ext::{getportbyname, Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tproxy {
    /// The mark set on the packet: (mark & !mark_mask) ^ mark_value.
    pub mark_mask: u32,
    pub mark_value: u32,
    /// The local address (zero: the address the packet came in on); IPv4 in
    /// the first 4 bytes.
    pub laddr: [u8; 16],
    /// The local port (0: the packet's destination port).
    pub lport: u16,
}

const PORT: u8 = 0;
const ADDR: u8 = 1;
const MARK: u8 = 2;

impl Tproxy {
    fn print(&self, out: &mut String, v6: bool, list: bool) {
        if list {
            out.push_str(" TPROXY redirect ");
            fmt_addr(out, &self.laddr, v6);
            let _ = write!(out, ":{} mark", self.lport);
        } else {
            let _ = write!(out, " --on-port {} --on-ip ", self.lport);
            fmt_addr(out, &self.laddr, v6);
            out.push_str(" --tproxy-mark");
        }
        let _ = write!(out, " {:#x}/{:#x}", self.mark_value, self.mark_mask);
    }
}

impl Ext for Tproxy {
    const NAME: &'static str = "TPROXY";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("on-port", PORT, Arg::Required).mand(),
        OptDef::new("on-ip", ADDR, Arg::Required),
        OptDef::new("tproxy-mark", MARK, Arg::Required),
    ];

    fn new(_: &ParseCtx) -> Self {
        Tproxy {
            mark_mask: 0,
            mark_value: 0,
            laddr: [0; 16],
            lport: 0,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            PORT => {
                self.lport = getportbyname(c.arg).ok_or_else(|| {
                    Error::param(format!(
                        "Port \"{}\" does not resolve to anything.\n",
                        c.arg
                    ))
                })?
            }
            ADDR => self.laddr = parse_host(c.arg, c.ctx.is_v6())?,
            _ => {
                (self.mark_value, self.mark_mask) =
                    crate::opt::parse_val_mask(c.ext, c.opt.name, c.arg)?
            }
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        crate::ext::postcheck(Self::NAME, Self::OPTS, seen)?;
        check_table_hooks("TPROXY", ctx, TableKind::Mangle, &["PREROUTING"])?;
        if !matches!(ctx.proto, 6 | 17) || ctx.inv_proto {
            return Err(einval("TPROXY", "Can be used only with -p tcp or -p udp"));
        }
        Ok(())
    }

    fn save(&self, ctx: &PrintCtx, out: &mut String) {
        self.print(out, ctx.is_v6(), false);
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        self.print(out, ctx.is_v6(), true);
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
                "-p udp -j TPROXY --on-port 12345 --on-ip 10.0.0.1 --tproxy-mark 0x23/0xff",
                " --on-port 12345 --on-ip 10.0.0.1 --tproxy-mark 0x23/0xff",
                " TPROXY redirect 10.0.0.1:12345 mark 0x23/0xff",
            ),
            (
                Family::Ipv4,
                "-p tcp -j TPROXY --on-port ssh",
                " --on-port 22 --on-ip 0.0.0.0 --tproxy-mark 0x0/0x0",
                " TPROXY redirect 0.0.0.0:22 mark 0x0/0x0",
            ),
            (
                Family::Ipv4,
                "-p tcp -j TPROXY --on-port 0 --tproxy-mark 7",
                " --on-port 0 --on-ip 0.0.0.0 --tproxy-mark 0x7/0xffffffff",
                " TPROXY redirect 0.0.0.0:0 mark 0x7/0xffffffff",
            ),
            (
                Family::Ipv6,
                "-p tcp -m tcp --dport 2342 -j TPROXY --on-port 12345 --on-ip 2001:db8::1 --tproxy-mark 0x23/0xff",
                " --on-port 12345 --on-ip 2001:db8::1 --tproxy-mark 0x23/0xff",
                " TPROXY redirect 2001:db8::1:12345 mark 0x23/0xff",
            ),
            (
                Family::Ipv6,
                "-p udp -j TPROXY --on-port 1",
                " --on-port 1 --on-ip :: --tproxy-mark 0x0/0x0",
                " TPROXY redirect :::1 mark 0x0/0x0",
            ),
        ];
        for (fam, rule, save, list) in cases {
            for chain in ["PREROUTING", "mychain"] {
                let got = ok_in(*fam, TableKind::Mangle, chain, rule);
                assert_eq!(got.save, *save, "{rule}");
                assert_eq!(got.list, *list, "{rule}");
                assert_eq!(got.list_numeric, *list, "{rule}");
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(Family, TableKind, &str, &str, &str)] = &[
            (
                Family::Ipv4,
                TableKind::Mangle,
                "PREROUTING",
                "-j TPROXY --on-port 12345 --on-ip 10.0.0.1 --tproxy-mark 0x23/0xff",
                "Invalid argument: TPROXY target: Can be used only with -p tcp or -p udp.",
            ),
            (
                Family::Ipv6,
                TableKind::Mangle,
                "PREROUTING",
                "! -p tcp -j TPROXY --on-port 1",
                "Invalid argument: TPROXY target: Can be used only with -p tcp or -p udp.",
            ),
            (
                Family::Ipv4,
                TableKind::Mangle,
                "PREROUTING",
                "-p tcp -j TPROXY --on-ip 1.2.3.4",
                "TPROXY: option \"--on-port\" must be specified\n",
            ),
            (
                Family::Ipv4,
                TableKind::Mangle,
                "PREROUTING",
                "-p tcp -j TPROXY --on-port nosuchservice",
                "Port \"nosuchservice\" does not resolve to anything.\n",
            ),
            (
                Family::Ipv4,
                TableKind::Mangle,
                "PREROUTING",
                "-p tcp -j TPROXY --on-port 1 --tproxy-mark 1/x",
                "TPROXY: bad integer value for option \"--tproxy-mark\", or out of range.\n",
            ),
            (
                Family::Ipv4,
                TableKind::Mangle,
                "INPUT",
                "-p tcp -j TPROXY --on-port 1",
                "Invalid argument: TPROXY target: used from hooks INPUT, but only usable from PREROUTING.",
            ),
            (
                Family::Ipv4,
                TableKind::Filter,
                "INPUT",
                "-p tcp -j TPROXY --on-port 1",
                "Invalid argument: TPROXY target: only valid in mangle table, not filter.",
            ),
        ];
        for (fam, table, chain, rule, want) in cases {
            assert_eq!(err_in(*fam, *table, chain, rule), *want, "{rule}");
        }
    }
}

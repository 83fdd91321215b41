//! `-m ipvs`: properties of IPVS connections (iptables' libxt_ipvs). This
//! kernel is built without xt_ipvs: rules parse and print as iptables'
//! do, and the kernel refuses them when loaded.

use super::policy::put_tunnel;
use super::srh::parse_hostmask;
use crate::error::{Error, Result};
use crate::ext::{getportbyname, Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

/// XT_IPVS_* bits (bit N is option id N).
pub const PROPERTY: u8 = 1 << 0;
pub const PROTO: u8 = 1 << 1;
pub const VADDR: u8 = 1 << 2;
pub const VPORT: u8 = 1 << 3;
pub const DIR: u8 = 1 << 4;
pub const METHOD: u8 = 1 << 5;
pub const VPORTCTL: u8 = 1 << 6;
/// IP_VS_CONN_F_* forwarding methods.
pub const METHOD_MASQ: u8 = 0;
pub const METHOD_TUNNEL: u8 = 2;
pub const METHOD_DROUTE: u8 = 3;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ipvs {
    /// Tests given (XT_IPVS_*; any test implies PROPERTY).
    pub bitmask: u8,
    /// Inverted tests; DIR set means REPLY.
    pub invert: u8,
    pub l4proto: u8,
    /// As given (not masked); IPv4 in the first 4 bytes.
    pub vaddr: [u8; 16],
    pub vmask: [u8; 16],
    pub vport: u16,
    pub fwd_method: u8,
    pub vportctl: u16,
}

fn bad(opt: &str, arg: &str) -> Error {
    Error::param(format!("ipvs: Bad value for \"{opt}\" option: \"{arg}\""))
}

fn port(arg: &str) -> Result<u16> {
    getportbyname(arg)
        .ok_or_else(|| Error::param(format!("Port \"{arg}\" does not resolve to anything.\n")))
}

impl Ipvs {
    fn dump(&self, out: &mut String, v6: bool, numeric: bool, prefix: &str) {
        let bang = |out: &mut String, bit: u8| {
            if self.invert & bit != 0 {
                out.push_str(" !");
            }
        };
        if self.bitmask == PROPERTY {
            bang(out, PROPERTY);
            let _ = write!(out, " {prefix}ipvs");
        }
        if self.bitmask & PROTO != 0 {
            bang(out, PROTO);
            let _ = write!(out, " {prefix}vproto {}", self.l4proto);
        }
        if self.bitmask & VADDR != 0 {
            bang(out, VADDR);
            let _ = write!(out, " {prefix}vaddr");
            let len = if v6 { 16 } else { 4 };
            if !numeric && self.vaddr[..len].iter().all(|&b| b == 0) {
                out.push_str(" anywhere");
            } else {
                out.push(' ');
                put_tunnel(out, &(self.vaddr, self.vmask, false), v6);
            }
        }
        if self.bitmask & VPORT != 0 {
            bang(out, VPORT);
            let _ = write!(out, " {prefix}vport {}", self.vport);
        }
        if self.bitmask & DIR != 0 {
            let d = if self.invert & DIR != 0 {
                "REPLY"
            } else {
                "ORIGINAL"
            };
            let _ = write!(out, " {prefix}vdir {d}");
        }
        if self.bitmask & METHOD != 0 {
            bang(out, METHOD);
            let m = match self.fwd_method {
                METHOD_DROUTE => "GATE",
                METHOD_TUNNEL => "IPIP",
                METHOD_MASQ => "MASQ",
                _ => "UNKNOWN",
            };
            let _ = write!(out, " {prefix}vmethod {m}");
        }
        if self.bitmask & VPORTCTL != 0 {
            bang(out, VPORTCTL);
            let _ = write!(out, " {prefix}vportctl {}", self.vportctl);
        }
    }
}

impl Ext for Ipvs {
    const NAME: &'static str = "ipvs";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("ipvs", 0, Arg::None).inv(),
        OptDef::new("vproto", 1, Arg::Required).inv(),
        OptDef::new("vaddr", 2, Arg::Required).inv(),
        OptDef::new("vport", 3, Arg::Required).inv(),
        OptDef::new("vdir", 4, Arg::Required),
        OptDef::new("vmethod", 5, Arg::Required).inv(),
        OptDef::new("vportctl", 6, Arg::Required).inv(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Ipvs::default()
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let id = c.opt.id;
        match id {
            1 => self.l4proto = opt::parse_protocol(c.arg)?,
            2 => {
                (self.vaddr, self.vmask) = parse_hostmask(c.ext, c.opt.name, c.arg, c.ctx.is_v6())?
            }
            3 => self.vport = port(c.arg)?,
            4 => {
                if c.arg.eq_ignore_ascii_case("ORIGINAL") {
                    self.invert &= !DIR;
                } else if c.arg.eq_ignore_ascii_case("REPLY") {
                    self.invert |= DIR;
                } else {
                    return Err(bad("--vdir", c.arg));
                }
            }
            5 => {
                self.fwd_method = match c.arg.to_ascii_uppercase().as_str() {
                    "GATE" => METHOD_DROUTE,
                    "IPIP" => METHOD_TUNNEL,
                    "MASQ" => METHOD_MASQ,
                    _ => return Err(bad("--vmethod", c.arg)),
                }
            }
            6 => self.vportctl = port(c.arg)?,
            _ => {}
        }
        self.bitmask |= 1 << id;
        if c.inv {
            self.invert |= 1 << id;
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        if seen == 0 {
            return Err(Error::param("IPVS: At least one option is required"));
        }
        if self.bitmask & !PROPERTY != 0 {
            if self.invert & PROPERTY != 0 {
                return Err(Error::param(
                    "! --ipvs cannot be together with other options",
                ));
            }
            self.bitmask |= PROPERTY;
        }
        Ok(())
    }

    fn save(&self, ctx: &PrintCtx, out: &mut String) {
        self.dump(out, ctx.is_v6(), true, "--");
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        self.dump(out, ctx.is_v6(), ctx.numeric, "");
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, ok, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // (options, save, -L)
        let cases = [
            ("! --ipvs", " ! --ipvs", " ! ipvs"),
            ("--vproto tcp", " --vproto 6", " vproto 6"),
            ("! --vport ssh", " ! --vport 22", " ! vport 22"),
            ("--vdir reply", " --vdir REPLY", " vdir REPLY"),
            ("! --vmethod ipip", " ! --vmethod IPIP", " ! vmethod IPIP"),
            ("--vportctl 21", " --vportctl 21", " vportctl 21"),
            (
                "! --vaddr 1.2.3.4/255.255.255.0 --vproto 6 --vport 22 --vdir ORIGINAL --vmethod GATE",
                " --vproto 6 ! --vaddr 1.2.3.4/24 --vport 22 --vdir ORIGINAL --vmethod GATE",
                " vproto 6 ! vaddr 1.2.3.4/24 vport 22 vdir ORIGINAL vmethod GATE",
            ),
            ("--vaddr 0.0.0.0/0", " --vaddr 0.0.0.0/0", " vaddr anywhere"),
        ];
        for (opts, s, l) in cases {
            let p = ok(&format!("-m ipvs {opts}"));
            assert_eq!((p.save.as_str(), p.list.as_str()), (s, l), "{opts}");
        }
        let p = ok_in(
            Family::Ipv6,
            TableKind::Filter,
            "INPUT",
            "-m ipvs ! --vaddr 2001:db8::/64",
        );
        assert_eq!(p.save, " ! --vaddr 2001:db8::/64");
    }

    #[test]
    fn errors() {
        let cases = [
            ("-m ipvs", "IPVS: At least one option is required"),
            (
                "-m ipvs ! --ipvs --vport 1",
                "! --ipvs cannot be together with other options",
            ),
            (
                "-m ipvs --vdir up",
                "ipvs: Bad value for \"--vdir\" option: \"up\"",
            ),
            (
                "-m ipvs --vmethod x",
                "ipvs: Bad value for \"--vmethod\" option: \"x\"",
            ),
            (
                "-m ipvs --vport nope",
                "Port \"nope\" does not resolve to anything.\n",
            ),
            (
                "-m ipvs ! --vdir REPLY",
                "ipvs: option \"--vdir\" cannot be inverted.\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

//! `-m dccp`: DCCP ports, packet types and options (iptables' libxt_dccp).
//! Unlike tcp, a port option given prints back even for the full range.

use crate::error::{Error, Result};
use crate::ext::{
    list_ports, parse_portrc, require_proto, Arg, Call, Ext, OptDef, ParseCtx, PrintCtx,
};
use std::fmt::Write;

/// A port range test: (low, high, inverted).
pub type Ports = (u16, u16, bool);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dccp {
    pub spts: Option<Ports>,
    pub dpts: Option<Ports>,
    /// Bit N for packet type N; INVALID (10) brings 11-15 along.
    pub types: Option<(u16, bool)>,
    pub option: Option<(u8, bool)>,
}

const SPORT: u8 = 0;
const DPORT: u8 = 1;
const TYPES: u8 = 2;
const OPTION: u8 = 3;

const TYPE_NAMES: [&str; 11] = [
    "REQUEST", "RESPONSE", "DATA", "ACK", "DATAACK", "CLOSEREQ", "CLOSE", "RESET", "SYNC",
    "SYNCACK", "INVALID",
];
const INVALID: usize = 10;
/// Types 11-15, taken with INVALID.
const INVALID_OTHER: u16 = 0xf800;

fn parse_types(s: &str) -> Result<u16> {
    let mut mask = 0u16;
    for t in s.split(',').filter(|t| !t.is_empty()) {
        let i = TYPE_NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(t))
            .ok_or_else(|| Error::param(format!("Unknown DCCP type `{t}'")))?;
        mask |= 1 << i;
    }
    if mask & (1 << INVALID) != 0 {
        mask |= INVALID_OTHER;
    }
    Ok(mask)
}

/// By name, types 11-15 are not printed (INVALID stands for them).
fn put_types(out: &mut String, mask: u16, numeric: bool) {
    out.push(' ');
    let mut first = true;
    for i in 0..16 {
        if mask & (1 << i) == 0 {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        if numeric {
            let _ = write!(out, "{i}");
        } else {
            out.push_str(TYPE_NAMES[i.min(INVALID)]);
            if i >= INVALID {
                break;
            }
        }
    }
}

fn save_ports(out: &mut String, opt: &str, p: &Ports) {
    if p.2 {
        out.push_str(" !");
    }
    if p.0 != p.1 {
        let _ = write!(out, " --{opt} {}:{}", p.0, p.1);
    } else {
        let _ = write!(out, " --{opt} {}", p.0);
    }
}

impl Ext for Dccp {
    const NAME: &'static str = "dccp";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("source-port", SPORT, Arg::Required).inv(),
        OptDef::new("sport", SPORT, Arg::Required).inv(),
        OptDef::new("destination-port", DPORT, Arg::Required).inv(),
        OptDef::new("dport", DPORT, Arg::Required).inv(),
        OptDef::new("dccp-types", TYPES, Arg::Required).inv(),
        OptDef::new("dccp-option", OPTION, Arg::Required).inv(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Dccp {
            spts: None,
            dpts: None,
            types: None,
            option: None,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            SPORT | DPORT => {
                let (lo, hi) = parse_portrc(c)?;
                let p = Some((lo, hi, c.inv));
                if c.opt.id == SPORT {
                    self.spts = p;
                } else {
                    self.dpts = p;
                }
            }
            TYPES => self.types = Some((parse_types(c.arg)?, c.inv)),
            _ => self.option = Some((c.uint(1, 255)? as u8, c.inv)),
        }
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        require_proto("dccp match", ctx, &[33])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if let Some(p) = &self.spts {
            save_ports(out, "sport", p);
        }
        if let Some(p) = &self.dpts {
            save_ports(out, "dport", p);
        }
        if let Some((mask, inv)) = self.types {
            out.push_str(if inv {
                " ! --dccp-types"
            } else {
                " --dccp-types"
            });
            put_types(out, mask, false);
        }
        if let Some((o, inv)) = self.option {
            let _ = write!(out, "{} --dccp-option {o}", if inv { " !" } else { "" });
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" dccp");
        for (p, label) in [(&self.spts, "spt"), (&self.dpts, "dpt")] {
            if let Some((lo, hi, inv)) = *p {
                list_ports(out, label, lo, hi, inv, "dccp", ctx.numeric);
            }
        }
        if let Some((mask, inv)) = self.types {
            if inv {
                out.push_str(" !");
            }
            put_types(out, mask, ctx.numeric);
        }
        if let Some((o, inv)) = self.option {
            let _ = write!(out, " option={}{o}", if inv { "!" } else { "" });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, ok};

    const ALL: &str = "REQUEST,RESPONSE,DATA,ACK,DATAACK,CLOSEREQ,CLOSE,RESET,SYNC,SYNCACK,INVALID";

    #[test]
    fn forms() {
        // (options, save, -L, -L -n)
        let cases = [
            (
                "".to_string(),
                String::new(),
                " dccp".to_string(),
                " dccp".to_string(),
            ),
            (
                "--sport :".into(),
                " --sport 0:65535".into(),
                " dccp".into(),
                " dccp".into(),
            ),
            (
                "! --sport 4:4 --dport 1024:".into(),
                " ! --sport 4 --dport 1024:65535".into(),
                " dccp spt:!4 dpts:1024:65535".into(),
                " dccp spt:!4 dpts:1024:65535".into(),
            ),
            (
                format!("! --dccp-types {}", ALL.to_lowercase()),
                format!(" ! --dccp-types {ALL}"),
                format!(" dccp ! {ALL}"),
                " dccp ! 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15".into(),
            ),
            (
                "--dccp-types sync,request ! --dccp-option 255".into(),
                " --dccp-types REQUEST,SYNC ! --dccp-option 255".into(),
                " dccp REQUEST,SYNC option=!255".into(),
                " dccp 0,8 option=!255".into(),
            ),
        ];
        for (opts, s, l, n) in cases {
            let p = ok(&format!("-p dccp -m dccp {opts}"));
            assert_eq!((p.save, p.list, p.list_numeric), (s, l, n), "{opts}");
        }
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m dccp --sport 1",
                "Invalid argument: dccp match: only valid for protocol 33.",
            ),
            (
                "-p dccp -m dccp --sport 4:3",
                "Port range 4-3 is negative.\n",
            ),
            (
                "-p dccp -m dccp --dport -1",
                "Port \"-1\" does not resolve to anything.\n",
            ),
            (
                "-p dccp -m dccp --dccp-types FOO",
                "Unknown DCCP type `FOO'",
            ),
            (
                "-p dccp -m dccp --dccp-option 0",
                "dccp: bad value for option \"--dccp-option\", or out of range (1-255).\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}

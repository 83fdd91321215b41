//! `-m multiport`: up to 15 ports or port ranges (iptables' libxt_multiport,
//! revision 1).

use crate::error::{Error, Result};
use crate::ext::{fmt_port, Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

/// Port slots in the kernel structure; a range takes two.
const MAX_SLOTS: usize = 15;

/// Which ports are compared (kernel values).
pub const SOURCE: u8 = 0;
pub const DESTINATION: u8 = 1;
pub const EITHER: u8 = 2;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Multiport {
    pub kind: u8,
    /// Ports as (lo, hi); a single port has lo == hi (a range always has
    /// lo < hi, iptables refuses others).
    pub ports: Vec<(u16, u16)>,
    pub inv: bool,
}

const SPORTS: u8 = 0;
const DPORTS: u8 = 1;
const PORTS: u8 = 2;
const ANY: u32 = 0b111;

fn proto_name(p: u8) -> Option<&'static str> {
    match p {
        6 => Some("tcp"),
        17 => Some("udp"),
        136 => Some("udplite"),
        132 => Some("sctp"),
        33 => Some("dccp"),
        _ => None,
    }
}

/// The protocol the ports are for; multiport needs one of five, not inverted.
fn check_proto(ctx: &ParseCtx) -> Result<&'static str> {
    const ONLY: &str = "multiport only works with TCP, UDP, UDPLITE, SCTP and DCCP";
    if ctx.inv_proto {
        return Err(Error::param(ONLY));
    }
    match proto_name(ctx.proto) {
        Some(p) => Ok(p),
        None if ctx.proto == 0 => Err(Error::param(
            "multiport needs `-p tcp', `-p udp', `-p udplite', `-p sctp' or `-p dccp'",
        )),
        None => Err(Error::param(ONLY)),
    }
}

fn parse_list(s: &str, proto: &str) -> Result<Vec<(u16, u16)>> {
    const TOO_MANY: &str = "too many ports specified";
    let mut out = Vec::new();
    let mut slots = 0usize;
    let mut parts = s.split(',');
    loop {
        if slots == MAX_SLOTS {
            if parts.next().is_some() {
                return Err(Error::param(TOO_MANY));
            }
            break;
        }
        let Some(part) = parts.next() else { break };
        match part.split_once(':') {
            Some((a, b)) => {
                if slots == MAX_SLOTS - 1 {
                    return Err(Error::param(TOO_MANY));
                }
                let lo = opt::parse_port(a, proto)?;
                let hi = opt::parse_port(b, proto)?;
                if lo >= hi {
                    return Err(Error::param("invalid portrange specified"));
                }
                out.push((lo, hi));
                slots += 2;
            }
            None => {
                let p = opt::parse_port(part, proto)?;
                out.push((p, p));
                slots += 1;
            }
        }
    }
    Ok(out)
}

fn write_ports(out: &mut String, ports: &[(u16, u16)], proto: Option<&str>, numeric: bool) {
    for (i, &(lo, hi)) in ports.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        one_port(out, lo, proto, numeric);
        if lo != hi {
            out.push(':');
            one_port(out, hi, proto, numeric);
        }
    }
}

fn one_port(out: &mut String, port: u16, proto: Option<&str>, numeric: bool) {
    match proto {
        Some(p) => fmt_port(out, port, p, numeric),
        None => {
            let _ = write!(out, "{port}");
        }
    }
}

impl Ext for Multiport {
    const NAME: &'static str = "multiport";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("source-ports", SPORTS, Arg::Required)
            .inv()
            .excl(ANY),
        OptDef::new("sports", SPORTS, Arg::Required).inv().excl(ANY),
        OptDef::new("destination-ports", DPORTS, Arg::Required)
            .inv()
            .excl(ANY),
        OptDef::new("dports", DPORTS, Arg::Required).inv().excl(ANY),
        OptDef::new("ports", PORTS, Arg::Required).inv().excl(ANY),
    ];

    fn new(_: &ParseCtx) -> Self {
        Multiport {
            kind: SOURCE,
            ports: Vec::new(),
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let proto = check_proto(c.ctx)?;
        self.ports = parse_list(c.arg, proto)?;
        self.kind = match c.opt.id {
            SPORTS => SOURCE,
            DPORTS => DESTINATION,
            _ => EITHER,
        };
        self.inv |= c.inv;
        Ok(())
    }

    fn finish(&mut self, seen: u32, _ctx: &ParseCtx) -> Result<()> {
        if seen & ANY == 0 {
            return Err(Error::param("no ports specified"));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        out.push_str(match self.kind {
            SOURCE => " --sports ",
            DESTINATION => " --dports ",
            _ => " --ports ",
        });
        write_ports(out, &self.ports, None, true);
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" multiport ");
        out.push_str(match self.kind {
            SOURCE => "sports ",
            DESTINATION => "dports ",
            _ => "ports ",
        });
        if self.inv {
            out.push_str(" !");
        }
        write_ports(out, &self.ports, proto_name(ctx.proto), ctx.numeric);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::print_ext;
    use ruleset::Family;

    fn value(kind: u8, arg: &str, inv: bool) -> Multiport {
        Multiport {
            kind,
            ports: parse_list(arg, "tcp").unwrap(),
            inv,
        }
    }

    #[test]
    fn list_forms() {
        let cases: &[(u8, &str, bool, u8, bool, &str)] = &[
            (
                DESTINATION,
                "22,80",
                false,
                6,
                false,
                " multiport dports ssh,http",
            ),
            (
                DESTINATION,
                "22,80",
                false,
                6,
                true,
                " multiport dports 22,80",
            ),
            (
                SOURCE,
                "53,1024:65535",
                true,
                17,
                false,
                " multiport sports  !domain,1024:65535",
            ),
            (EITHER, "1:2", false, 17, true, " multiport ports 1:2"),
            (EITHER, "9999", false, 136, false, " multiport ports 9999"),
        ];
        for (kind, arg, inv, proto, numeric, want) in cases {
            let p = print_ext(&value(*kind, arg, *inv), Family::Ipv4, *proto);
            assert_eq!(p.listed(*numeric), *want, "{arg}");
        }
    }

    #[test]
    fn save_forms() {
        let m = value(DESTINATION, "ssh,1024:65535", true);
        assert_eq!(
            print_ext(&m, Family::Ipv6, 6).save,
            " ! --dports 22,1024:65535"
        );
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str)] = &[
            ("1024:65536", "invalid port/service `65536' specified"),
            ("5:5", "invalid portrange specified"),
            ("1,,2", "invalid port/service `' specified"),
            (
                "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16",
                "too many ports specified",
            ),
            (
                "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15:16",
                "too many ports specified",
            ),
        ];
        for (arg, want) in cases {
            assert_eq!(parse_list(arg, "tcp").unwrap_err().msg, *want, "{arg}");
        }
        assert_eq!(
            parse_list("1,2,3,4,5,6,7,8,9,10,11,12,13,14:15", "tcp")
                .unwrap()
                .len(),
            14
        );
    }
}

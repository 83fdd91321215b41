//! `-m ipv6header`: which IPv6 extension headers the packet has
//! (ip6tables' libip6t_ipv6header).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::names;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ipv6header {
    /// MASK_* bits of the headers listed.
    pub flags: u8,
    pub inv: bool,
    /// `--soft`: the packet has at least these headers (else exactly).
    pub soft: bool,
}

const HEADER: u8 = 0;
const SOFT: u8 = 1;

/// iptables' built-in header names, tried after the protocol database.
const CHAIN_PROTOS: &[(&str, u8)] = &[
    ("hop-by-hop", 0),
    ("protocol", 255),
    ("hop", 0),
    ("dst", 60),
    ("route", 43),
    ("frag", 44),
    ("auth", 51),
    ("esp", 50),
    ("none", 59),
    ("prot", 255),
    ("0", 0),
    ("60", 60),
    ("43", 43),
    ("44", 44),
    ("51", 51),
    ("50", 50),
    ("59", 59),
    ("255", 255),
];

/// Header protocol and its flag, in print order.
const FLAGS: &[(u8, u8)] = &[
    (0, 0x80),
    (60, 0x40),
    (43, 0x20),
    (44, 0x10),
    (51, 0x08),
    (50, 0x04),
    (59, 0x02),
    (255, 0x01),
];

fn header_flag(name: &str) -> Result<u8> {
    let proto = match names::proto_by_name(name) {
        Some(p) => p,
        None => CHAIN_PROTOS
            .iter()
            .find(|e| e.0 == name)
            .map(|e| e.1)
            .ok_or_else(|| Error::param(format!("unknown header `{name}' specified")))?,
    };
    FLAGS
        .iter()
        .find(|e| e.0 == proto)
        .map(|e| e.1)
        .ok_or_else(|| Error::param(format!("unknown header `{proto}' specified")))
}

/// A header's print name: the protocol database's name (not for 0), else
/// iptables' built-in one.
fn header_name(proto: u8) -> &'static str {
    (proto != 0)
        .then(|| names::proto_by_number(proto))
        .flatten()
        .or_else(|| CHAIN_PROTOS.iter().find(|e| e.1 == proto).map(|e| e.0))
        .unwrap_or("")
}

fn put_headers(out: &mut String, flags: u8) {
    let mut first = true;
    for (proto, f) in FLAGS {
        if flags & f != 0 {
            if !first {
                out.push(',');
            }
            out.push_str(header_name(*proto));
            first = false;
        }
    }
    if first {
        out.push_str("NONE");
    }
}

impl Ext for Ipv6header {
    const NAME: &'static str = "ipv6header";
    const FAMILY: Fam = Fam::V6;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("header", HEADER, Arg::Required).inv().mand(),
        OptDef::new("soft", SOFT, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Ipv6header {
            flags: 0,
            inv: false,
            soft: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        if c.opt.id == SOFT {
            self.soft = true;
            return Ok(());
        }
        let mut flags = 0;
        for name in c.arg.split(',').filter(|n| !n.is_empty()) {
            flags |= header_flag(name)?;
        }
        if flags == 0 {
            return Err(Error::param("ip6t_ipv6header: cannot parse header names"));
        }
        self.flags = flags;
        self.inv |= c.inv;
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(if self.inv {
            " ! --header "
        } else {
            " --header "
        });
        put_headers(out, self.flags);
        if self.soft {
            out.push_str(" --soft");
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" ipv6header");
        if self.flags != 0 || self.inv {
            out.push_str(if self.inv { " flags:!" } else { " flags:" });
            if ctx.numeric {
                let _ = write!(out, "0x{:02X}", self.flags);
            } else {
                put_headers(out, self.flags);
            }
        }
        if self.soft {
            out.push_str(" soft");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // (args, save, -L, -L -n)
        let cases = [
            (
                "--header hop-by-hop",
                " --header hop-by-hop",
                " ipv6header flags:hop-by-hop",
                " ipv6header flags:0x80",
            ),
            (
                "! --header ipv6-nonxt,0,,dst --soft",
                " ! --header hop-by-hop,ipv6-opts,ipv6-nonxt --soft",
                " ipv6header flags:!hop-by-hop,ipv6-opts,ipv6-nonxt soft",
                " ipv6header flags:!0xC2 soft",
            ),
            (
                "--header prot,auth,IPv6-Frag,route,esp",
                " --header ipv6-route,ipv6-frag,ah,esp,protocol",
                " ipv6header flags:ipv6-route,ipv6-frag,ah,esp,protocol",
                " ipv6header flags:0x3D",
            ),
        ];
        for (opts, s, l, n) in cases {
            let args = format!("-m ipv6header {opts}");
            let p = ok_in(Family::Ipv6, TableKind::Filter, "INPUT", &args);
            assert_eq!(
                (p.save.as_str(), p.list.as_str(), p.list_numeric.as_str()),
                (s, l, n),
                "{args}"
            );
        }
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m ipv6header",
                "ipv6header: option \"--header\" must be specified\n",
            ),
            ("-m ipv6header --header x", "unknown header `x' specified"),
            ("-m ipv6header --header tcp", "unknown header `6' specified"),
            (
                "-m ipv6header --header ,",
                "ip6t_ipv6header: cannot parse header names",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(
                err_in(Family::Ipv6, TableKind::Filter, "INPUT", args),
                want,
                "{args}"
            );
        }
    }
}

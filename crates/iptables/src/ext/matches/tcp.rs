//! `-m tcp`: ports, flags, option (iptables' libxt_tcp). The worked example of
//! an extension module.

use crate::error::{Error, Result};
use crate::ext::{
    list_ports, require_proto, save_ports, Arg, Call, Ext, OptDef, ParseCtx, PrintCtx,
};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tcp {
    pub spts: (u16, u16),
    pub dpts: (u16, u16),
    pub option: u8,
    pub flg_mask: u8,
    pub flg_cmp: u8,
    pub inv_sport: bool,
    pub inv_dport: bool,
    pub inv_option: bool,
    pub inv_flags: bool,
}

const SPORT: u8 = 0;
const DPORT: u8 = 1;
const SYN: u8 = 2;
const FLAGS: u8 = 3;
const OPTION: u8 = 4;

/// Flag names in print order; ALL and NONE only parse.
const FLAG_NAMES: &[(&str, u8)] = &[
    ("FIN", 0x01),
    ("SYN", 0x02),
    ("RST", 0x04),
    ("PSH", 0x08),
    ("ACK", 0x10),
    ("URG", 0x20),
    ("ALL", 0x3f),
    ("NONE", 0),
];

pub fn parse_tcp_flags(s: &str) -> Result<u8> {
    let mut v = 0u8;
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match FLAG_NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(part))
        {
            Some((_, f)) => v |= f,
            None => return Err(Error::param(format!("Unknown TCP flag `{part}'"))),
        }
    }
    Ok(v)
}

pub fn fmt_tcp_flags(out: &mut String, mut flags: u8) {
    if flags == 0 {
        out.push_str("NONE");
        return;
    }
    let mut first = true;
    for (name, f) in &FLAG_NAMES[..6] {
        if flags & f != 0 {
            if !first {
                out.push(',');
            }
            out.push_str(name);
            first = false;
            flags &= !f;
        }
    }
}

/// `port`, `lo:hi`, `lo:` or `:hi` with service names of `proto` (iptables'
/// parse_tcp_ports / parse_sctp_ports); shared with `-m sctp`.
pub(crate) fn parse_ports(s: &str, proto: &str) -> Result<(u16, u16)> {
    match s.split_once(':') {
        None => {
            let p = opt::parse_port(s, proto)?;
            Ok((p, p))
        }
        Some((a, b)) => {
            let lo = if a.is_empty() {
                0
            } else {
                opt::parse_port(a, proto)?
            };
            let hi = if b.is_empty() {
                65535
            } else {
                opt::parse_port(b, proto)?
            };
            if lo > hi {
                return Err(Error::param("invalid portrange (min > max)"));
            }
            Ok((lo, hi))
        }
    }
}

impl Ext for Tcp {
    const NAME: &'static str = "tcp";
    // Every option is `multi` so that tcp's own "Only one ..." messages win
    // over the framework's generic one.
    const OPTS: &'static [OptDef] = &[
        OptDef::new("source-port", SPORT, Arg::Required)
            .inv()
            .multi(),
        OptDef::new("sport", SPORT, Arg::Required).inv().multi(),
        OptDef::new("destination-port", DPORT, Arg::Required)
            .inv()
            .multi(),
        OptDef::new("dport", DPORT, Arg::Required).inv().multi(),
        OptDef::new("syn", SYN, Arg::None).inv().multi(),
        OptDef::new("tcp-flags", FLAGS, Arg::Required).inv().multi(),
        OptDef::new("tcp-option", OPTION, Arg::Required)
            .inv()
            .multi(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Tcp {
            spts: (0, 65535),
            dpts: (0, 65535),
            option: 0,
            flg_mask: 0,
            flg_cmp: 0,
            inv_sport: false,
            inv_dport: false,
            inv_option: false,
            inv_flags: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            SPORT => {
                if self.spts != (0, 65535) || self.inv_sport {
                    return Err(Error::param("Only one `--source-port' allowed"));
                }
                self.spts = parse_ports(c.arg, "tcp")?;
                self.inv_sport = c.inv;
            }
            DPORT => {
                if self.dpts != (0, 65535) || self.inv_dport {
                    return Err(Error::param("Only one `--destination-port' allowed"));
                }
                self.dpts = parse_ports(c.arg, "tcp")?;
                self.inv_dport = c.inv;
            }
            SYN | FLAGS => {
                if self.flg_mask != 0 || self.inv_flags {
                    return Err(Error::param(
                        "Only one of `--syn' or `--tcp-flags'  allowed",
                    ));
                }
                let (mask, cmp) = if c.opt.id == SYN {
                    ("SYN,RST,ACK,FIN", "SYN")
                } else {
                    let cmp = match c.rest.peek() {
                        Some(w) if !w.starts_with('-') && !w.starts_with('!') => {
                            c.rest.pos += 1;
                            w
                        }
                        _ => return Err(Error::param("--tcp-flags requires two args.")),
                    };
                    (c.arg, cmp)
                };
                self.flg_mask = parse_tcp_flags(mask)?;
                self.flg_cmp = parse_tcp_flags(cmp)?;
                self.inv_flags = c.inv;
            }
            OPTION => {
                if self.option != 0 {
                    return Err(Error::param("Only one `--tcp-option' allowed"));
                }
                self.option = opt::parse_uint(c.arg, 1, 255)
                    .ok_or_else(|| Error::param(format!("Bad TCP option \"{}\"", c.arg)))?
                    as u8;
                self.inv_option = c.inv;
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        require_proto("tcp match", ctx, &[6])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        save_ports(out, "sport", self.spts.0, self.spts.1, self.inv_sport);
        save_ports(out, "dport", self.dpts.0, self.dpts.1, self.inv_dport);
        if self.option != 0 || self.inv_option {
            if self.inv_option {
                out.push_str(" !");
            }
            let _ = write!(out, " --tcp-option {}", self.option);
        }
        if self.flg_mask != 0 || self.inv_flags {
            if self.inv_flags {
                out.push_str(" !");
            }
            out.push_str(" --tcp-flags ");
            fmt_tcp_flags(out, self.flg_mask);
            out.push(' ');
            fmt_tcp_flags(out, self.flg_cmp);
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" tcp");
        list_ports(
            out,
            "spt",
            self.spts.0,
            self.spts.1,
            self.inv_sport,
            "tcp",
            ctx.numeric,
        );
        list_ports(
            out,
            "dpt",
            self.dpts.0,
            self.dpts.1,
            self.inv_dport,
            "tcp",
            ctx.numeric,
        );
        if self.option != 0 || self.inv_option {
            let _ = write!(
                out,
                " option={}{}",
                if self.inv_option { "!" } else { "" },
                self.option
            );
        }
        if self.flg_mask != 0 || self.inv_flags {
            out.push_str(" flags:");
            if self.inv_flags {
                out.push('!');
            }
            if ctx.numeric {
                let _ = write!(out, "0x{:02X}/0x{:02X}", self.flg_mask, self.flg_cmp);
            } else {
                fmt_tcp_flags(out, self.flg_mask);
                out.push('/');
                fmt_tcp_flags(out, self.flg_cmp);
            }
        }
    }
}

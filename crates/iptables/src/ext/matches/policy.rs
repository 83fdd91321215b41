//! `-m policy`: the IPsec policy a packet was (or will be) processed with
//! (iptables' libxt_policy).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::{names, opt};
use std::fmt::Write;

pub const MATCH_IN: u16 = 0x1;
pub const MATCH_OUT: u16 = 0x2;
pub const MATCH_NONE: u16 = 0x4;
pub const MATCH_STRICT: u16 = 0x8;
/// XT_POLICY_MAX_ELEM.
pub const MAX_ELEM: usize = 4;
pub const MODE_TRANSPORT: u8 = 0;
pub const MODE_TUNNEL: u8 = 1;

/// A tunnel address test: address as given, mask (16 bytes as xtables
/// fills them; IPv4 in the first 4), inverted.
pub type Tunnel = ([u8; 16], [u8; 16], bool);

/// One policy element; each test is (value, inverted).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Elem {
    pub reqid: Option<(u32, bool)>,
    /// As iptables stores it (host order).
    pub spi: Option<(u32, bool)>,
    pub proto: Option<(u8, bool)>,
    pub mode: Option<(u8, bool)>,
    pub src: Option<Tunnel>,
    pub dst: Option<Tunnel>,
}

impl Elem {
    fn is_empty(&self) -> bool {
        *self == Elem::default()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Policy {
    /// MATCH_* flags.
    pub flags: u16,
    /// The elements (none for `--pol none`); while parsing, the last one is
    /// the one being filled.
    pub elems: Vec<Elem>,
}

const DIR: u8 = 0;
const POL: u8 = 1;
const STRICT: u8 = 2;
const REQID: u8 = 3;
const SPI: u8 = 4;
const PROTO: u8 = 5;
const MODE: u8 = 6;
const TUNNEL_SRC: u8 = 7;
const TUNNEL_DST: u8 = 8;
const NEXT: u8 = 9;

fn double(what: &str) -> Error {
    Error::param(format!("policy match: double --{what} option"))
}

/// An address and its mask as xtables prints them: no `/32` (`/128`), a
/// prefix length, or a non-contiguous mask in address form. The inversion
/// flag of `t` is not printed here.
pub(crate) fn put_tunnel(out: &mut String, t: &Tunnel, v6: bool) {
    if v6 {
        let a: [u8; 16] = t.0;
        opt::fmt_v6(out, &a);
        match opt::mask_prefix(&t.1) {
            Some(128) => {}
            Some(n) => {
                let _ = write!(out, "/{n}");
            }
            None => {
                out.push('/');
                opt::fmt_v6(out, &t.1);
            }
        }
    } else {
        opt::fmt_v4(out, &t.0[..4]);
        match opt::mask_prefix(&t.1[..4]) {
            Some(32) => {}
            Some(n) => {
                let _ = write!(out, "/{n}");
            }
            None => {
                out.push('/');
                opt::fmt_v4(out, &t.1[..4]);
            }
        }
    }
}

fn put_elem(out: &mut String, prefix: &str, e: &Elem, numeric: bool, v6: bool) {
    let bang = |out: &mut String, inv: bool| {
        if inv {
            out.push_str(" !");
        }
    };
    if let Some((v, inv)) = e.reqid {
        bang(out, inv);
        let _ = write!(out, " {prefix}reqid {v}");
    }
    if let Some((v, inv)) = e.spi {
        bang(out, inv);
        let _ = write!(out, " {prefix}spi 0x{v:x}");
    }
    if let Some((p, inv)) = e.proto {
        bang(out, inv);
        let _ = write!(out, " {prefix}proto ");
        match names::proto_by_number(p).filter(|_| !numeric) {
            Some(n) => out.push_str(n),
            None => {
                let _ = write!(out, "{p}");
            }
        }
    }
    if let Some((m, inv)) = e.mode {
        bang(out, inv);
        let word = match m {
            MODE_TRANSPORT => "transport",
            MODE_TUNNEL => "tunnel",
            _ => "???",
        };
        let _ = write!(out, " {prefix}mode {word}");
    }
    for (t, word) in [(&e.dst, "tunnel-dst"), (&e.src, "tunnel-src")] {
        if let Some(t) = t {
            bang(out, t.2);
            let _ = write!(out, " {prefix}{word} ");
            put_tunnel(out, t, v6);
        }
    }
}

impl Policy {
    fn put_flags(&self, out: &mut String, prefix: &str) {
        let dir = if self.flags & MATCH_IN != 0 {
            "in"
        } else {
            "out"
        };
        let pol = if self.flags & MATCH_NONE != 0 {
            "none"
        } else {
            "ipsec"
        };
        let _ = write!(out, " {prefix}dir {dir} {prefix}pol {pol}");
        if self.flags & MATCH_STRICT != 0 {
            let _ = write!(out, " {prefix}strict");
        }
    }
}

impl Ext for Policy {
    const NAME: &'static str = "policy";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("dir", DIR, Arg::Required),
        OptDef::new("pol", POL, Arg::Required),
        OptDef::new("strict", STRICT, Arg::None),
        OptDef::new("reqid", REQID, Arg::Required).multi().inv(),
        OptDef::new("spi", SPI, Arg::Required).multi().inv(),
        OptDef::new("tunnel-src", TUNNEL_SRC, Arg::Required)
            .multi()
            .inv(),
        OptDef::new("tunnel-dst", TUNNEL_DST, Arg::Required)
            .multi()
            .inv(),
        OptDef::new("proto", PROTO, Arg::Required).multi().inv(),
        OptDef::new("mode", MODE, Arg::Required).multi().inv(),
        OptDef::new("next", NEXT, Arg::None)
            .multi()
            .also(1 << STRICT),
    ];

    fn new(_: &ParseCtx) -> Self {
        Policy {
            flags: 0,
            elems: vec![Elem::default()],
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let v6 = c.ctx.is_v6();
        let inv = c.inv;
        match c.opt.id {
            DIR => {
                self.flags |= match c.arg {
                    "in" => MATCH_IN,
                    "out" => MATCH_OUT,
                    _ => {
                        return Err(Error::param(format!(
                            "policy_match: invalid dir \"{}\"",
                            c.arg
                        )))
                    }
                }
            }
            POL => {
                self.flags |= match c.arg {
                    "none" => MATCH_NONE,
                    "ipsec" => 0,
                    _ => {
                        return Err(Error::param(format!(
                            "policy match: invalid policy \"{}\"",
                            c.arg
                        )))
                    }
                }
            }
            STRICT => self.flags |= MATCH_STRICT,
            NEXT => {
                if self.elems.len() == MAX_ELEM {
                    return Err(Error::param("policy match: maximum policy depth reached"));
                }
                self.elems.push(Elem::default());
            }
            id => {
                let value = match id {
                    REQID | SPI => Some(c.uint(0, u32::MAX as u64)? as u32),
                    _ => None,
                };
                let e = self.elems.last_mut().expect("a current element");
                match id {
                    REQID => {
                        if e.reqid.is_some() {
                            return Err(double("reqid"));
                        }
                        e.reqid = value.map(|v| (v, inv));
                    }
                    SPI => {
                        if e.spi.is_some() {
                            return Err(double("spi"));
                        }
                        e.spi = value.map(|v| (v, inv));
                    }
                    PROTO => {
                        if e.proto.is_some() {
                            return Err(double("proto"));
                        }
                        let p = opt::parse_protocol(c.arg)?;
                        if ![51, 50, 108].contains(&p) {
                            return Err(Error::param(
                                "policy match: protocol must be ah/esp/ipcomp",
                            ));
                        }
                        e.proto = Some((p, inv));
                    }
                    MODE => {
                        if e.mode.is_some() {
                            return Err(double("mode"));
                        }
                        let m = match c.arg {
                            "transport" => MODE_TRANSPORT,
                            "tunnel" => MODE_TUNNEL,
                            _ => {
                                return Err(Error::param(format!(
                                    "policy match: invalid mode \"{}\"",
                                    c.arg
                                )))
                            }
                        };
                        e.mode = Some((m, inv));
                    }
                    _ => {
                        let slot = if id == TUNNEL_SRC {
                            &mut e.src
                        } else {
                            &mut e.dst
                        };
                        if slot.is_some() {
                            return Err(double(c.opt.name));
                        }
                        let (a, m) = super::srh::parse_hostmask(c.ext, c.opt.name, c.arg, v6)?;
                        *slot = Some((a, m, inv));
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        if self.flags & (MATCH_IN | MATCH_OUT) == 0 {
            return Err(Error::param(
                "policy match: neither --dir in nor --dir out specified",
            ));
        }
        if self.flags & MATCH_NONE != 0 {
            if self.flags & MATCH_STRICT != 0 {
                return Err(Error::param("policy match: policy none but --strict given"));
            }
            if self.elems.len() != 1 {
                return Err(Error::param("policy match: policy none but policy given"));
            }
            // The kernel never looks at an element then.
            self.elems.clear();
        }
        for (i, e) in self.elems.iter().enumerate() {
            if self.flags & MATCH_STRICT != 0 && e.is_empty() {
                return Err(Error::param(format!(
                    "policy match: empty policy element {i}. --strict is in effect, but at least one of reqid, spi, tunnel-src, tunnel-dst, proto or mode is required."
                )));
            }
            // No --mode is transport mode.
            let (mode, inv_mode) = e.mode.unwrap_or((MODE_TRANSPORT, false));
            if (e.src.is_some() || e.dst.is_some())
                && ((mode == MODE_TUNNEL && inv_mode) || (mode == MODE_TRANSPORT && !inv_mode))
            {
                return Err(Error::param(
                    "policy match: --tunnel-src/--tunnel-dst is only valid in tunnel mode",
                ));
            }
        }
        // The kernel's hook checks.
        let hook = opt::builtin_hook(ctx.table, ctx.chain);
        if self.flags & MATCH_OUT != 0 && matches!(hook, Some("PREROUTING" | "INPUT")) {
            return Err(opt::einval(
                "policy match: output policy not valid in PREROUTING and INPUT",
            ));
        }
        if self.flags & MATCH_IN != 0 && matches!(hook, Some("POSTROUTING" | "OUTPUT")) {
            return Err(opt::einval(
                "policy match: input policy not valid in POSTROUTING and OUTPUT",
            ));
        }
        Ok(())
    }

    fn save(&self, ctx: &PrintCtx, out: &mut String) {
        self.put_flags(out, "--");
        for (i, e) in self.elems.iter().enumerate() {
            put_elem(out, "--", e, false, ctx.is_v6());
            if i + 1 < self.elems.len() {
                out.push_str(" --next");
            }
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" policy match");
        self.put_flags(out, "");
        for (i, e) in self.elems.iter().enumerate() {
            if self.elems.len() > 1 {
                let _ = write!(out, " [{i}]");
            }
            put_elem(out, "", e, ctx.numeric, ctx.is_v6());
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, err_in, ok, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms_v4() {
        // (args, save, -L, -L -n)
        let cases = [
            (
                "--dir in --pol ipsec",
                " --dir in --pol ipsec",
                " policy match dir in pol ipsec",
                " policy match dir in pol ipsec",
            ),
            (
                "--pol none --dir in",
                " --dir in --pol none",
                " policy match dir in pol none",
                " policy match dir in pol none",
            ),
            (
                "--dir in --pol ipsec --strict --reqid 1 --spi 0x1 --proto esp --mode tunnel --tunnel-dst 10.0.0.0/8 --tunnel-src 10.1.2.3/255.0.255.0 --next ! --reqid 2",
                " --dir in --pol ipsec --strict --reqid 1 --spi 0x1 --proto esp --mode tunnel --tunnel-dst 10.0.0.0/8 --tunnel-src 10.1.2.3/255.0.255.0 --next ! --reqid 2",
                " policy match dir in pol ipsec strict [0] reqid 1 spi 0x1 proto esp mode tunnel tunnel-dst 10.0.0.0/8 tunnel-src 10.1.2.3/255.0.255.0 [1] ! reqid 2",
                " policy match dir in pol ipsec strict [0] reqid 1 spi 0x1 proto 50 mode tunnel tunnel-dst 10.0.0.0/8 tunnel-src 10.1.2.3/255.0.255.0 [1] ! reqid 2",
            ),
            (
                "--dir in --pol ipsec ! --mode transport --tunnel-src 1.2.3.4 --proto 108",
                " --dir in --pol ipsec --proto ipcomp ! --mode transport --tunnel-src 1.2.3.4",
                " policy match dir in pol ipsec proto ipcomp ! mode transport tunnel-src 1.2.3.4",
                " policy match dir in pol ipsec proto 108 ! mode transport tunnel-src 1.2.3.4",
            ),
        ];
        for (opts, s, l, n) in cases {
            let p = ok(&format!("-m policy {opts}"));
            assert_eq!(
                (p.save.as_str(), p.list.as_str(), p.list_numeric.as_str()),
                (s, l, n),
                "{opts}"
            );
        }
    }

    #[test]
    fn forms_v6() {
        let p = ok_in(
            Family::Ipv6,
            TableKind::Filter,
            "FORWARD",
            "-m policy --dir out --pol ipsec --mode tunnel --tunnel-dst 2001:db8::/32 --tunnel-src 2001:db8::1",
        );
        assert_eq!(
            p.save,
            " --dir out --pol ipsec --mode tunnel --tunnel-dst 2001:db8::/32 --tunnel-src 2001:db8::1"
        );
    }

    #[test]
    fn errors() {
        let cases = [
            ("-m policy", "policy match: neither --dir in nor --dir out specified"),
            ("-m policy --dir up", "policy_match: invalid dir \"up\""),
            ("-m policy --dir in --pol x", "policy match: invalid policy \"x\""),
            (
                "-m policy --dir in --pol ipsec --strict",
                "policy match: empty policy element 0. --strict is in effect, but at least one of reqid, spi, tunnel-src, tunnel-dst, proto or mode is required.",
            ),
            (
                "-m policy --dir in --pol ipsec --strict --reqid 1 --spi 0x1 --proto esp --tunnel-dst 10.0.0.0/8",
                "policy match: --tunnel-src/--tunnel-dst is only valid in tunnel mode",
            ),
            (
                "-m policy --dir in --pol ipsec --reqid 1 --next --reqid 2",
                "policy: option \"--next\" also requires \"--strict\".\n",
            ),
            ("-m policy --dir in --reqid 1 --reqid 2", "policy match: double --reqid option"),
            ("-m policy --dir in --proto tcp", "policy match: protocol must be ah/esp/ipcomp"),
            ("-m policy --dir in --pol none --reqid 1 --next", "policy match: policy none but policy given"),
            ("-m policy --dir in --pol none --strict", "policy match: policy none but --strict given"),
            (
                "-m policy --dir in --strict --reqid 1 --next --reqid 2 --next --reqid 3 --next --reqid 4 --next",
                "policy match: maximum policy depth reached",
            ),
            (
                "-m policy --dir out --pol none",
                "Invalid argument: policy match: output policy not valid in PREROUTING and INPUT.",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
        assert_eq!(
            err_in(
                Family::Ipv4,
                TableKind::Filter,
                "OUTPUT",
                "-m policy --dir in --pol none"
            ),
            "Invalid argument: policy match: input policy not valid in POSTROUTING and OUTPUT."
        );
    }
}

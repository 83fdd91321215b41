//! `-m iprange`: source/destination address within an inclusive range
//! (iptables' libxt_iprange, revision 1, IPv4 and IPv6).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::net::Ipv6Addr;

/// An inclusive range; IPv4 addresses use the first 4 bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Range {
    pub lo: [u8; 16],
    pub hi: [u8; 16],
    pub inv: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Iprange {
    pub src: Option<Range>,
    pub dst: Option<Range>,
}

const SRC: u8 = 0;
const DST: u8 = 1;

/// One numeric address (no host names), as xtables_numeric_to_ip(6)addr.
fn parse_addr(s: &str, v6: bool, optname: &str) -> Result<[u8; 16]> {
    let mut a = [0u8; 16];
    let ok = if v6 {
        s.parse::<Ipv6Addr>().map(|x| a = x.octets()).is_ok()
    } else {
        opt::parse_v4_numeric(s, false)
            .map(|x| a[..4].copy_from_slice(&x))
            .is_some()
    };
    if ok {
        Ok(a)
    } else {
        Err(Error::param(format!(
            "iprange: Bad value for \"{optname}\" option: \"{s}\""
        )))
    }
}

/// `from[-to]`; a single address is the range of that one address. A
/// reversed range is accepted (iptables only warns: it never matches).
fn parse_range(arg: &str, v6: bool, optname: &str, inv: bool) -> Result<Range> {
    let (from, to) = arg.split_once('-').unwrap_or((arg, arg));
    Ok(Range {
        lo: parse_addr(from, v6, optname)?,
        hi: parse_addr(to, v6, optname)?,
        inv,
    })
}

fn put_addr(out: &mut String, a: &[u8; 16], v6: bool) {
    if v6 {
        opt::fmt_v6(out, a);
    } else {
        opt::fmt_v4(out, a);
    }
}

fn put_range(out: &mut String, r: &Range, v6: bool) {
    out.push(' ');
    put_addr(out, &r.lo, v6);
    out.push('-');
    put_addr(out, &r.hi, v6);
}

impl Ext for Iprange {
    const NAME: &'static str = "iprange";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("src-range", SRC, Arg::Required).inv(),
        OptDef::new("dst-range", DST, Arg::Required).inv(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Iprange {
            src: None,
            dst: None,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let v6 = c.ctx.is_v6();
        if c.opt.id == SRC {
            self.src = Some(parse_range(c.arg, v6, "--src-range", c.inv)?);
        } else {
            self.dst = Some(parse_range(c.arg, v6, "--dst-range", c.inv)?);
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        if seen == 0 {
            return Err(Error::param(
                "iprange match: You must specify `--src-range' or `--dst-range'",
            ));
        }
        Ok(())
    }

    fn save(&self, ctx: &PrintCtx, out: &mut String) {
        for (r, name) in [(&self.src, " --src-range"), (&self.dst, " --dst-range")] {
            if let Some(r) = r {
                if r.inv {
                    out.push_str(" !");
                }
                out.push_str(name);
                put_range(out, r, ctx.is_v6());
            }
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        for (r, label) in [
            (&self.src, " source IP range"),
            (&self.dst, " destination IP range"),
        ] {
            if let Some(r) = r {
                out.push_str(label);
                if r.inv {
                    out.push_str(" !");
                }
                put_range(out, r, ctx.is_v6());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, err_in, list, list_in, save_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn list_output() {
        let cases = [
            (
                "-m iprange --src-range 10.0.0.1-10.0.0.9",
                " source IP range 10.0.0.1-10.0.0.9",
            ),
            (
                "-m iprange ! --dst-range 1.2.3.4 --src-range 10.1-10.2",
                " source IP range 10.1.0.0-10.2.0.0 destination IP range ! 1.2.3.4-1.2.3.4",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(list(args, false), want, "{args}");
            assert_eq!(list(args, true), want, "{args} -n");
        }
        assert_eq!(
            list_in(
                Family::Ipv6,
                TableKind::Filter,
                "INPUT",
                "-m iprange ! --src-range 2001:db8:0:0::1-2001:DB8::ffff:1.2.3.4",
                false
            ),
            " source IP range ! 2001:db8::1-2001:db8::ffff:102:304"
        );
    }

    #[test]
    fn save_output() {
        assert_eq!(
            save_in(
                Family::Ipv6,
                TableKind::Filter,
                "INPUT",
                "-m iprange --dst-range ::1-::2 ! --src-range ::"
            ),
            " ! --src-range ::-:: --dst-range ::1-::2"
        );
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m iprange --src-range 1.2.3.4-x",
                "iprange: Bad value for \"--src-range\" option: \"x\"",
            ),
            (
                "-m iprange --src-range -1.2.3.4",
                "iprange: Bad value for \"--src-range\" option: \"\"",
            ),
            (
                "-m iprange --dst-range 1.2.3.256",
                "iprange: Bad value for \"--dst-range\" option: \"1.2.3.256\"",
            ),
            (
                "-m iprange --dst-range 1.1.1.1-1.1.1.2-1.1.1.3",
                "iprange: Bad value for \"--dst-range\" option: \"1.1.1.2-1.1.1.3\"",
            ),
            (
                "-m iprange",
                "iprange match: You must specify `--src-range' or `--dst-range'",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
        assert_eq!(
            err_in(
                Family::Ipv6,
                TableKind::Filter,
                "INPUT",
                "-m iprange --src-range 1.2.3.4"
            ),
            "iprange: Bad value for \"--src-range\" option: \"1.2.3.4\""
        );
    }
}

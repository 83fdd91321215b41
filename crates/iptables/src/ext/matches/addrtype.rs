//! `-m addrtype`: the routing type of the source/destination address
//! (iptables' libxt_addrtype, revision 1).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use ruleset::Family;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Addrtype {
    /// Bit i set = type `TYPES[i]`; 0 = not matched on.
    pub src: u16,
    pub dst: u16,
    pub inv_src: bool,
    pub inv_dst: bool,
    pub limit_in: bool,
    pub limit_out: bool,
}

const SRC: u8 = 0;
const DST: u8 = 1;
const LIMIT_IN: u8 = 2;
const LIMIT_OUT: u8 = 3;

/// The kernel's route types (rtnetlink order: bit i is type i).
const TYPES: &[&str] = &[
    "UNSPEC",
    "UNICAST",
    "LOCAL",
    "BROADCAST",
    "ANYCAST",
    "MULTICAST",
    "BLACKHOLE",
    "UNREACHABLE",
    "PROHIBIT",
    "THROW",
    "NAT",
    "XRESOLVE",
];

const BROADCAST: u16 = 1 << 3;
const BLACKHOLE: u16 = 1 << 6;
const PROHIBIT: u16 = 1 << 8;

/// One type name; like iptables, an abbreviation (case-insensitive prefix)
/// selects the first type it begins.
fn type_bit(name: &str) -> Option<u16> {
    let n = name.as_bytes();
    TYPES
        .iter()
        .position(|t| n.len() <= t.len() && t.as_bytes()[..n.len()].eq_ignore_ascii_case(n))
        .map(|i| 1 << i)
}

fn parse_types(arg: &str) -> Result<u16> {
    let mut mask = 0u16;
    let mut rest = arg;
    while let Some(i) = rest.find(',') {
        match type_bit(&rest[..i]) {
            Some(b) if i > 0 => mask |= b,
            _ => return Err(Error::param(format!("addrtype: bad type `{rest}'"))),
        }
        rest = &rest[i + 1..];
    }
    match type_bit(rest) {
        Some(b) if !rest.is_empty() => mask |= b,
        _ => return Err(Error::param(format!("addrtype: bad type \"{rest}\""))),
    }
    Ok(mask)
}

fn put_types(out: &mut String, mask: u16) {
    let mut sep = "";
    for (i, t) in TYPES.iter().enumerate() {
        if mask & (1 << i) != 0 {
            out.push_str(sep);
            out.push_str(t);
            sep = ",";
        }
    }
}

impl Ext for Addrtype {
    const NAME: &'static str = "addrtype";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("src-type", SRC, Arg::Required).inv(),
        OptDef::new("dst-type", DST, Arg::Required).inv(),
        OptDef::new("limit-iface-in", LIMIT_IN, Arg::None).excl(1 << LIMIT_OUT),
        OptDef::new("limit-iface-out", LIMIT_OUT, Arg::None).excl(1 << LIMIT_IN),
    ];

    fn new(_: &ParseCtx) -> Self {
        Addrtype {
            src: 0,
            dst: 0,
            inv_src: false,
            inv_dst: false,
            limit_in: false,
            limit_out: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            SRC => {
                self.src = parse_types(c.arg)?;
                self.inv_src = c.inv;
            }
            DST => {
                self.dst = parse_types(c.arg)?;
                self.inv_dst = c.inv;
            }
            LIMIT_IN => self.limit_in = true,
            _ => self.limit_out = true,
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        if seen & ((1 << SRC) | (1 << DST)) == 0 {
            return Err(Error::param(
                "addrtype: you must specify --src-type or --dst-type",
            ));
        }
        // The kernel's checkentry.
        if self.limit_in && self.limit_out {
            return Err(opt::einval(
                "addrtype: both incoming and outgoing interface limitation cannot be selected",
            ));
        }
        let hook = opt::builtin_hook(ctx.table, ctx.chain);
        if self.limit_out && matches!(hook, Some("PREROUTING" | "INPUT")) {
            return Err(opt::einval(
                "addrtype: output interface limitation not valid in PREROUTING and INPUT",
            ));
        }
        if self.limit_in && matches!(hook, Some("POSTROUTING" | "OUTPUT")) {
            return Err(opt::einval(
                "addrtype: input interface limitation not valid in POSTROUTING and OUTPUT",
            ));
        }
        if ctx.family == Family::Ipv6 {
            let types = self.src | self.dst;
            if types & BLACKHOLE != 0 {
                return Err(opt::einval(
                    "addrtype: ipv6 BLACKHOLE matching not supported",
                ));
            }
            if types >= PROHIBIT {
                return Err(opt::einval(
                    "addrtype: ipv6 PROHIBIT (THROW, NAT ..) matching not supported",
                ));
            }
            if types & BROADCAST != 0 {
                return Err(opt::einval(
                    "addrtype: ipv6 does not support BROADCAST matching",
                ));
            }
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.src != 0 {
            if self.inv_src {
                out.push_str(" !");
            }
            out.push_str(" --src-type ");
            put_types(out, self.src);
        }
        if self.dst != 0 {
            if self.inv_dst {
                out.push_str(" !");
            }
            out.push_str(" --dst-type ");
            put_types(out, self.dst);
        }
        if self.limit_in {
            out.push_str(" --limit-iface-in");
        }
        if self.limit_out {
            out.push_str(" --limit-iface-out");
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" ADDRTYPE match");
        if self.src != 0 {
            out.push_str(" src-type ");
            if self.inv_src {
                out.push('!');
            }
            put_types(out, self.src);
        }
        if self.dst != 0 {
            out.push_str(" dst-type ");
            if self.inv_dst {
                out.push('!');
            }
            put_types(out, self.dst);
        }
        if self.limit_in {
            out.push_str(" limit-in");
        }
        if self.limit_out {
            out.push_str(" limit-out");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, err_in, list, list_in, save};
    use ruleset::{Family, TableKind};

    #[test]
    fn list_output() {
        let cases = [
            (
                "-m addrtype --src-type LOCAL",
                " ADDRTYPE match src-type LOCAL",
            ),
            (
                "-m addrtype ! --dst-type unicast,local,multicast --limit-iface-in",
                " ADDRTYPE match dst-type !UNICAST,LOCAL,MULTICAST limit-in",
            ),
            (
                "-m addrtype --src-type BROAD,un --dst-type xres",
                " ADDRTYPE match src-type UNSPEC,BROADCAST dst-type XRESOLVE",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(list(args, false), want, "{args}");
            assert_eq!(list(args, true), want, "{args} -n");
        }
        assert_eq!(
            list_in(
                Family::Ipv4,
                TableKind::Filter,
                "OUTPUT",
                "-m addrtype --src-type NAT --limit-iface-out",
                false
            ),
            " ADDRTYPE match src-type NAT limit-out"
        );
    }

    #[test]
    fn save_output() {
        assert_eq!(
            save("-m addrtype ! --src-type local,unicast --dst-type BLACKHOLE"),
            " ! --src-type UNICAST,LOCAL --dst-type BLACKHOLE"
        );
    }

    #[test]
    fn errors() {
        let cases = [
            ("-m addrtype --src-type wrong", "addrtype: bad type \"wrong\""),
            ("-m addrtype --src-type wrong,LOCAL", "addrtype: bad type `wrong,LOCAL'"),
            ("-m addrtype --src-type ,LOCAL", "addrtype: bad type `,LOCAL'"),
            ("-m addrtype --src-type LOCAL,", "addrtype: bad type \"\""),
            ("-m addrtype --src-type LOCALX", "addrtype: bad type \"LOCALX\""),
            (
                "-m addrtype --limit-iface-in",
                "addrtype: you must specify --src-type or --dst-type",
            ),
            (
                "-m addrtype --src-type LOCAL --limit-iface-out",
                "Invalid argument: addrtype: output interface limitation not valid in PREROUTING and INPUT.",
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
                "-m addrtype --dst-type BROADCAST"
            ),
            "Invalid argument: addrtype: ipv6 does not support BROADCAST matching."
        );
        assert_eq!(
            err_in(
                Family::Ipv4,
                TableKind::Mangle,
                "POSTROUTING",
                "-m addrtype --dst-type LOCAL --limit-iface-in"
            ),
            "Invalid argument: addrtype: input interface limitation not valid in POSTROUTING and OUTPUT."
        );
    }
}

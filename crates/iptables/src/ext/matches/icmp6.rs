//! `-m icmp6` (also `icmpv6`, `ipv6-icmp`): ICMPv6 type and code
//! (ip6tables' libip6t_icmp6).

use super::icmp::{list_icmp_type, parse_icmp_type, ICMPV6_NAMES};
use crate::error::Result;
use crate::ext::{require_proto, Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Icmp6 {
    pub typ: u8,
    pub code_min: u8,
    pub code_max: u8,
    pub inv: bool,
}

const TYPE: u8 = 0;

impl Ext for Icmp6 {
    const NAME: &'static str = "icmp6";
    const ALIASES: &'static [&'static str] = &["icmpv6", "ipv6-icmp"];
    const FAMILY: Fam = Fam::V6;
    const OPTS: &'static [OptDef] = &[OptDef::new("icmpv6-type", TYPE, Arg::Required).inv().mand()];

    fn new(_: &ParseCtx) -> Self {
        Icmp6 {
            typ: 0,
            code_min: 0,
            code_max: 0xFF,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let (t, lo, hi) = parse_icmp_type(ICMPV6_NAMES, "ICMPv6", c.arg)?;
        self.typ = t;
        self.code_min = lo;
        self.code_max = hi;
        self.inv |= c.inv;
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        require_proto("icmp6 match", ctx, &[58])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        let _ = write!(out, " --icmpv6-type {}", self.typ);
        if self.code_min != 0 || self.code_max != 0xFF {
            let _ = write!(out, "/{}", self.code_min);
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" ipv6-icmp");
        list_icmp_type(
            out,
            ICMPV6_NAMES,
            self.typ,
            self.code_min,
            self.code_max,
            self.inv,
            ctx.numeric,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::print_ext;
    use ruleset::Family;

    fn value(arg: &str, inv: bool) -> Icmp6 {
        let (typ, code_min, code_max) = parse_icmp_type(ICMPV6_NAMES, "ICMPv6", arg).unwrap();
        Icmp6 {
            typ,
            code_min,
            code_max,
            inv,
        }
    }

    #[test]
    fn list_forms() {
        let cases: &[(&str, bool, bool, &str)] = &[
            ("echo-request", false, false, " ipv6-icmp echo-request"),
            ("128", true, false, " ipv6-icmp !echo-request"),
            ("128", false, true, " ipv6-icmptype 128"),
            ("1/0", false, false, " ipv6-icmp no-route"),
            ("1/0", true, true, " ipv6-icmp !type 1 code 0"),
            ("1/7", false, false, " ipv6-icmptype 1 code 7"),
            ("4/0:1", false, false, " ipv6-icmptype 4 codes 0-1"),
            (
                "neighbor-solicitation",
                false,
                false,
                " ipv6-icmp neighbour-solicitation",
            ),
            (
                "mld-listener-reduction",
                false,
                false,
                " ipv6-icmp mld-listener-done",
            ),
            ("200", false, false, " ipv6-icmptype 200"),
        ];
        for (arg, inv, numeric, want) in cases {
            let p = print_ext(&value(arg, *inv), Family::Ipv6, 58);
            assert_eq!(p.listed(*numeric), *want, "{arg} inv={inv} n={numeric}");
        }
    }

    #[test]
    fn save_forms() {
        let cases: &[(&str, bool, &str)] = &[
            ("packet-too-big", false, " --icmpv6-type 2"),
            ("1/0", false, " --icmpv6-type 1/0"),
            ("port-unreachable", true, " ! --icmpv6-type 1/4"),
            ("mld-listener-query", false, " --icmpv6-type 130"),
        ];
        for (arg, inv, want) in cases {
            let p = print_ext(&value(arg, *inv), Family::Ipv6, 58);
            assert_eq!(p.save, *want, "{arg}");
        }
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str)] = &[
            (
                "echo-re",
                "Ambiguous ICMPv6 type `echo-re': `echo-request' or `echo-reply'?",
            ),
            ("nope", "Unknown ICMPv6 type `nope'"),
            ("1/300", "Unknown ICMPv6 code `1/300'"),
            ("1:2", "ICMPv6 type range not supported"),
        ];
        for (arg, want) in cases {
            let e = parse_icmp_type(ICMPV6_NAMES, "ICMPv6", arg).unwrap_err();
            assert_eq!(e.msg, *want, "{arg}");
        }
    }
}

//! `-j ECN`: rewrite the ECN bits of IPv4 and TCP headers (iptables'
//! libipt_ECN). Mangle table only; the TCP operations need `-p tcp`.

use super::snat::check_table;
use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;
use std::fmt::Write;

/// ipt_ECN_info.operation bits.
pub const OP_SET_IP: u8 = 0x01;
pub const OP_SET_ECE: u8 = 0x10;
pub const OP_SET_CWR: u8 = 0x20;

/// Canonical: `ip_ect` is zero unless `OP_SET_IP`, `ece`/`cwr` false
/// unless their operation bit is set.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ecn {
    pub operation: u8,
    /// The ECT code point for the IPv4 header (0..=3).
    pub ip_ect: u8,
    pub ece: bool,
    pub cwr: bool,
}

const TCP_REMOVE: u8 = 0;
const TCP_CWR: u8 = 1;
const TCP_ECE: u8 = 2;
const IP_ECT: u8 = 3;

impl Ecn {
    /// `--ecn-tcp-remove`: both TCP bits set to zero.
    fn is_remove(&self) -> bool {
        self.operation == OP_SET_ECE | OP_SET_CWR && !self.ece && !self.cwr
    }
}

impl Ext for Ecn {
    const NAME: &'static str = "ECN";
    const FAMILY: Fam = Fam::V4;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("ecn-tcp-remove", TCP_REMOVE, Arg::None).excl(1 << TCP_CWR | 1 << TCP_ECE),
        OptDef::new("ecn-tcp-cwr", TCP_CWR, Arg::Required).excl(1 << TCP_REMOVE),
        OptDef::new("ecn-tcp-ece", TCP_ECE, Arg::Required).excl(1 << TCP_REMOVE),
        OptDef::new("ecn-ip-ect", IP_ECT, Arg::Required),
    ];

    fn new(_: &ParseCtx) -> Self {
        Ecn {
            operation: 0,
            ip_ect: 0,
            ece: false,
            cwr: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            // Replaces the operation (an earlier --ecn-ip-ect included).
            TCP_REMOVE => {
                self.operation = OP_SET_ECE | OP_SET_CWR;
                self.ece = false;
                self.cwr = false;
            }
            TCP_CWR => {
                self.cwr = c.uint(0, 1)? == 1;
                self.operation |= OP_SET_CWR;
            }
            TCP_ECE => {
                self.ece = c.uint(0, 1)? == 1;
                self.operation |= OP_SET_ECE;
            }
            _ => {
                self.ip_ect = c.uint(0, 3)? as u8;
                self.operation |= OP_SET_IP;
            }
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        if seen == 0 {
            return Err(Error::param("ECN target: An operation is required"));
        }
        crate::ext::postcheck(Self::NAME, Self::OPTS, seen)?;
        if self.operation & OP_SET_IP == 0 {
            self.ip_ect = 0;
        }
        check_table("ECN", ctx, TableKind::Mangle)?;
        if self.operation & (OP_SET_ECE | OP_SET_CWR) != 0 && (ctx.proto != 6 || ctx.inv_proto) {
            return Err(Error::op(
                "Invalid argument: ECN target: cannot use operation on non-tcp rule.",
            ));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.is_remove() {
            out.push_str(" --ecn-tcp-remove");
            return;
        }
        if self.operation & OP_SET_ECE != 0 {
            let _ = write!(out, " --ecn-tcp-ece {}", u8::from(self.ece));
        }
        if self.operation & OP_SET_CWR != 0 {
            let _ = write!(out, " --ecn-tcp-cwr {}", u8::from(self.cwr));
        }
        if self.operation & OP_SET_IP != 0 {
            let _ = write!(out, " --ecn-ip-ect {}", self.ip_ect);
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" ECN");
        if self.is_remove() {
            out.push_str(" TCP remove");
            return;
        }
        if self.operation & OP_SET_ECE != 0 {
            let _ = write!(out, " ECE={}", u8::from(self.ece));
        }
        if self.operation & OP_SET_CWR != 0 {
            let _ = write!(out, " CWR={}", u8::from(self.cwr));
        }
        if self.operation & OP_SET_IP != 0 {
            let _ = write!(out, " ECT codepoint={}", self.ip_ect);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in, rule, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // rule, save, -L
        let cases: &[(&str, &str, &str)] = &[
            (
                "-p tcp -j ECN --ecn-tcp-remove",
                " --ecn-tcp-remove",
                " ECN TCP remove",
            ),
            (
                "-p tcp -j ECN --ecn-tcp-ece 0 --ecn-tcp-cwr 0",
                " --ecn-tcp-remove",
                " ECN TCP remove",
            ),
            (
                "-p tcp -j ECN --ecn-tcp-cwr 1 --ecn-ip-ect 2",
                " --ecn-tcp-cwr 1 --ecn-ip-ect 2",
                " ECN CWR=1 ECT codepoint=2",
            ),
            (
                "-p tcp -j ECN --ecn-tcp-ece 1 --ecn-tcp-cwr 0",
                " --ecn-tcp-ece 1 --ecn-tcp-cwr 0",
                " ECN ECE=1 CWR=0",
            ),
            (
                "-p udp -j ECN --ecn-ip-ect 1",
                " --ecn-ip-ect 1",
                " ECN ECT codepoint=1",
            ),
            // --ecn-tcp-remove replaces the operation set so far.
            (
                "-p tcp -j ECN --ecn-ip-ect 3 --ecn-tcp-remove",
                " --ecn-tcp-remove",
                " ECN TCP remove",
            ),
            (
                "-p tcp -j ECN --ecn-tcp-remove --ecn-ip-ect 3",
                " --ecn-tcp-ece 0 --ecn-tcp-cwr 0 --ecn-ip-ect 3",
                " ECN ECE=0 CWR=0 ECT codepoint=3",
            ),
        ];
        for (r, save, list) in cases {
            let want = Printed {
                save: save.to_string(),
                list: list.to_string(),
                list_numeric: list.to_string(),
            };
            assert_eq!(
                ok_in(Family::Ipv4, TableKind::Mangle, "FORWARD", r),
                want,
                "{r}"
            );
        }
        let a = rule(
            Family::Ipv4,
            TableKind::Mangle,
            "FORWARD",
            "-p tcp -j ECN --ecn-ip-ect 3 --ecn-tcp-remove",
        );
        let b = rule(
            Family::Ipv4,
            TableKind::Mangle,
            "FORWARD",
            "-p tcp -j ECN --ecn-tcp-remove",
        );
        assert_eq!(a, b);
    }

    #[test]
    fn errors() {
        let cases: &[(TableKind, &str, &str)] = &[
            (
                TableKind::Mangle,
                "-p tcp -j ECN",
                "ECN target: An operation is required",
            ),
            (
                TableKind::Mangle,
                "-p tcp -j ECN --ecn-tcp-cwr 2",
                "ECN: bad value for option \"--ecn-tcp-cwr\", or out of range (0-1).\n",
            ),
            (
                TableKind::Mangle,
                "-p tcp -j ECN --ecn-ip-ect 4",
                "ECN: bad value for option \"--ecn-ip-ect\", or out of range (0-3).\n",
            ),
            (
                TableKind::Mangle,
                "-p tcp -j ECN --ecn-tcp-remove --ecn-tcp-ece 1",
                "ECN: option \"--ecn-tcp-remove\" cannot be used together with \"--ecn-tcp-ece\".\n",
            ),
            (
                TableKind::Mangle,
                "-j ECN --ecn-tcp-remove",
                "Invalid argument: ECN target: cannot use operation on non-tcp rule.",
            ),
            (
                TableKind::Mangle,
                "! -p tcp -j ECN --ecn-tcp-cwr 1",
                "Invalid argument: ECN target: cannot use operation on non-tcp rule.",
            ),
            (
                TableKind::Filter,
                "-p tcp -j ECN --ecn-tcp-remove",
                "Invalid argument: ECN target: only valid in mangle table, not filter.",
            ),
        ];
        for (table, r, want) in cases {
            assert_eq!(err_in(Family::Ipv4, *table, "OUTPUT", r), *want, "{r}");
        }
        assert!(crate::ext::testutil::run(
            Family::Ipv6,
            TableKind::Mangle,
            "OUTPUT",
            "-p tcp -j ECN --ecn-tcp-remove"
        )
        .is_err());
    }
}

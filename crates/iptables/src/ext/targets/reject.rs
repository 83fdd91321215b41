//! `-j REJECT` (iptables' libipt_REJECT for IPv4 and libip6t_REJECT for
//! IPv6): drop and answer with an ICMP error or a TCP reset. Filter table,
//! INPUT/FORWARD/OUTPUT only, as the kernel enforces.

use super::snat::check_table_hooks;
use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;

/// (kernel code, name, alias) in the kernel's numbering (ipt_reject_with).
const V4_TYPES: &[(u8, &str, &str)] = &[
    (0, "icmp-net-unreachable", "net-unreach"),
    (1, "icmp-host-unreachable", "host-unreach"),
    (2, "icmp-proto-unreachable", "proto-unreach"),
    (3, "icmp-port-unreachable", "port-unreach"),
    (5, "icmp-net-prohibited", "net-prohib"),
    (6, "icmp-host-prohibited", "host-prohib"),
    (7, "tcp-reset", "tcp-rst"),
    (8, "icmp-admin-prohibited", "admin-prohib"),
];
const V4_DEFAULT: u8 = 3;
const V4_TCP_RESET: u8 = 7;

/// ip6t_reject_with.
const V6_TYPES: &[(u8, &str, &str)] = &[
    (0, "icmp6-no-route", "no-route"),
    (1, "icmp6-adm-prohibited", "adm-prohibited"),
    (3, "icmp6-addr-unreachable", "addr-unreach"),
    (4, "icmp6-port-unreachable", "port-unreach"),
    (6, "tcp-reset", "tcp-reset"),
    (7, "icmp6-policy-fail", "policy-fail"),
    (8, "icmp6-reject-route", "reject-route"),
];
const V6_DEFAULT: u8 = 4;
const V6_TCP_RESET: u8 = 6;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reject {
    pub v6: bool,
    /// Kernel code of the reject type for the family.
    pub with: u8,
}

fn types(v6: bool) -> &'static [(u8, &'static str, &'static str)] {
    if v6 {
        V6_TYPES
    } else {
        V4_TYPES
    }
}

/// Case-insensitive "`arg` is a prefix of `name`" (strncasecmp over the
/// argument's length).
fn abbrev_of(arg: &str, name: &str) -> bool {
    name.len() >= arg.len() && name.as_bytes()[..arg.len()].eq_ignore_ascii_case(arg.as_bytes())
}

impl Reject {
    fn name(&self) -> &'static str {
        types(self.v6)
            .iter()
            .find(|t| t.0 == self.with)
            .map(|t| t.1)
            .unwrap_or("")
    }
}

impl Ext for Reject {
    const NAME: &'static str = "REJECT";
    const OPTS: &'static [OptDef] = &[OptDef::new("reject-with", 0, Arg::Required)];

    fn new(ctx: &ParseCtx) -> Self {
        let v6 = ctx.is_v6();
        Reject {
            v6,
            with: if v6 { V6_DEFAULT } else { V4_DEFAULT },
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        // The first type (in code order) whose name or alias the argument
        // abbreviates wins.
        match types(self.v6)
            .iter()
            .find(|t| abbrev_of(c.arg, t.1) || abbrev_of(c.arg, t.2))
        {
            Some(t) => {
                self.with = t.0;
                Ok(())
            }
            None => Err(Error::param(format!("unknown reject type \"{}\"", c.arg))),
        }
    }

    fn finish(&mut self, _: u32, ctx: &ParseCtx) -> Result<()> {
        check_table_hooks(
            "REJECT",
            ctx,
            TableKind::Filter,
            &["INPUT", "FORWARD", "OUTPUT"],
        )?;
        let reset = if self.v6 { V6_TCP_RESET } else { V4_TCP_RESET };
        if self.with == reset && (ctx.proto != 6 || ctx.inv_proto) {
            return Err(Error::op(format!(
                "Invalid argument: REJECT target: TCP_RESET {} for non-tcp.",
                if self.v6 { "illegal" } else { "invalid" }
            )));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" --reject-with ");
        out.push_str(self.name());
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" reject-with ");
        out.push_str(self.name());
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{run, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn list_forms() {
        let cases: &[(Family, &str, &str, &str)] = &[
            (
                Family::Ipv4,
                "-j REJECT",
                " --reject-with icmp-port-unreachable",
                " reject-with icmp-port-unreachable",
            ),
            (
                Family::Ipv4,
                "-j REJECT --reject-with host-prohib",
                " --reject-with icmp-host-prohibited",
                " reject-with icmp-host-prohibited",
            ),
            (
                Family::Ipv4,
                "-j REJECT --reject-with ICMP-NET-P",
                " --reject-with icmp-net-prohibited",
                " reject-with icmp-net-prohibited",
            ),
            (
                Family::Ipv4,
                "-p tcp -j REJECT --reject-with tcp-rst",
                " --reject-with tcp-reset",
                " reject-with tcp-reset",
            ),
            (
                Family::Ipv4,
                "-j REJECT --reject-with icmp-",
                " --reject-with icmp-net-unreachable",
                " reject-with icmp-net-unreachable",
            ),
            (
                Family::Ipv6,
                "-j REJECT",
                " --reject-with icmp6-port-unreachable",
                " reject-with icmp6-port-unreachable",
            ),
            (
                Family::Ipv6,
                "-j REJECT --reject-with icmp6-p",
                " --reject-with icmp6-port-unreachable",
                " reject-with icmp6-port-unreachable",
            ),
            (
                Family::Ipv6,
                "-j REJECT --reject-with adm-prohibited",
                " --reject-with icmp6-adm-prohibited",
                " reject-with icmp6-adm-prohibited",
            ),
            (
                Family::Ipv6,
                "-p tcp -j REJECT --reject-with tcp-reset",
                " --reject-with tcp-reset",
                " reject-with tcp-reset",
            ),
        ];
        for (fam, rule, save, want) in cases {
            let Printed {
                save: s,
                list: l,
                list_numeric: n,
            } = run(*fam, TableKind::Filter, "INPUT", rule).unwrap();
            assert_eq!(s, *save, "{rule}");
            assert_eq!(l, *want, "{rule}");
            assert_eq!(n, *want, "{rule} -n");
        }
    }

    #[test]
    fn errors() {
        let cases: &[(Family, TableKind, &str, &str, &str)] = &[
            (
                Family::Ipv4,
                TableKind::Filter,
                "INPUT",
                "-j REJECT --reject-with echo-reply",
                "unknown reject type \"echo-reply\"",
            ),
            (
                Family::Ipv6,
                TableKind::Filter,
                "INPUT",
                "-j REJECT --reject-with icmp-port-unreachable",
                "unknown reject type \"icmp-port-unreachable\"",
            ),
            (
                Family::Ipv4,
                TableKind::Filter,
                "INPUT",
                "-j REJECT --reject-with tcp-reset",
                "Invalid argument: REJECT target: TCP_RESET invalid for non-tcp.",
            ),
            (
                Family::Ipv6,
                TableKind::Filter,
                "INPUT",
                "! -p tcp -j REJECT --reject-with tcp-reset",
                "Invalid argument: REJECT target: TCP_RESET illegal for non-tcp.",
            ),
            (
                Family::Ipv4,
                TableKind::Mangle,
                "INPUT",
                "-j REJECT",
                "Invalid argument: REJECT target: only valid in filter table, not mangle.",
            ),
        ];
        for (fam, table, chain, rule, want) in cases {
            let e = run(*fam, *table, chain, rule).unwrap_err().msg;
            assert_eq!(e, *want, "{rule}");
        }
    }
}

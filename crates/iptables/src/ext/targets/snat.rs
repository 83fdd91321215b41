//! `-j SNAT` (iptables' libxt_NAT, SNAT for IPv4 and IPv6). This file also
//! holds what the NAT family of targets (SNAT, DNAT, MASQUERADE, REDIRECT)
//! shares: the `nf_nat_range` value with its parser and printer, and the
//! table/hook check the kernel makes for targets bound to some chains.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use ruleset::TableKind;
use std::fmt::Write;
use std::net::{Ipv4Addr, Ipv6Addr};

/// nf_nat range flags (linux/netfilter/nf_nat.h).
pub const MAP_IPS: u8 = 0x01;
pub const PROTO_SPECIFIED: u8 = 0x02;
pub const PROTO_RANDOM: u8 = 0x04;
pub const PERSISTENT: u8 = 0x08;
pub const PROTO_RANDOM_FULLY: u8 = 0x10;
pub const PROTO_OFFSET: u8 = 0x20;

/// Option ids shared by the NAT targets (as libxt_NAT numbers them).
pub const O_TO_DEST: u8 = 0;
pub const O_TO_SRC: u8 = 1;
pub const O_TO_PORTS: u8 = 2;
pub const O_RANDOM: u8 = 3;
pub const O_RANDOM_FULLY: u8 = 4;
pub const O_PERSISTENT: u8 = 5;

/// One NAT mapping (nf_nat_range2). Canonical: addresses are zero unless
/// `MAP_IPS`, ports zero unless `PROTO_SPECIFIED`, the base port zero unless
/// `PROTO_OFFSET`; a single address or port has max == min. IPv4 addresses
/// use the first four bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NatRange {
    pub flags: u8,
    pub min_addr: [u8; 16],
    pub max_addr: [u8; 16],
    pub min_port: u16,
    pub max_port: u16,
    pub base_port: u16,
}

/// Protocols for which a port may be given (libxt_NAT's "portok").
fn port_ok(proto: u8) -> bool {
    matches!(proto, 6 | 17 | 132 | 33 | 1)
}

/// getservbyname(name, NULL): a service name of any protocol, no numbers.
fn service_to_port(name: &str) -> Option<u16> {
    crate::names::SERVICES
        .iter()
        .find(|e| e.0 == name)
        .map(|e| e.1)
}

/// xtables_strtoui with an end pointer: a number at the start of `s` within
/// `lo..=hi` and the rest of the string after it.
fn strtoui_end(s: &str, lo: u64, hi: u64) -> Option<(u16, &str)> {
    if s.trim_start().starts_with('-') {
        return None;
    }
    let (v, rest) = opt::strtoul(s, 0)?;
    (v >= lo && v <= hi).then_some((v as u16, rest))
}

fn port_not_valid(s: &str) -> Error {
    Error::param(format!("Port `{s}' not valid"))
}

impl NatRange {
    /// `port[-port[/port]]` (libxt_NAT's parse_ports).
    pub fn parse_ports(&mut self, arg: &str, proto: u8) -> Result<()> {
        if !port_ok(proto) {
            return Err(Error::param(
                "Need TCP, UDP, SCTP or DCCP with port specification",
            ));
        }
        self.flags |= PROTO_SPECIFIED;
        let (port, end) = match strtoui_end(arg, 0, 65535) {
            Some(x) => x,
            None => (service_to_port(arg).ok_or_else(|| port_not_valid(arg))?, ""),
        };
        let arg = match end.chars().next() {
            None => {
                self.min_port = port;
                self.max_port = port;
                return Ok(());
            }
            Some('-') => &end[1..],
            Some(':') => return Err(Error::param("Invalid port:port syntax - use dash")),
            Some(_) => return Err(Error::param(format!("Garbage after port value: `{end}'"))),
        };
        let (maxport, end) = strtoui_end(arg, 0, 65535).ok_or_else(|| port_not_valid(arg))?;
        if maxport < port {
            return Err(Error::param(format!("Port range `{arg}' funky")));
        }
        self.min_port = port;
        self.max_port = maxport;
        let arg = match end.chars().next() {
            None => return Ok(()),
            Some('/') => &end[1..],
            Some(_) => return Err(Error::param(format!("Garbage after port range: `{end}'"))),
        };
        let base = match strtoui_end(arg, 1, 65535) {
            Some((v, _)) => v,
            None => service_to_port(arg).ok_or_else(|| port_not_valid(arg))?,
        };
        self.flags |= PROTO_OFFSET;
        self.base_port = base;
        Ok(())
    }

    /// `[addr[-addr]][:port[-port[/port]]]`, IPv6 addresses in brackets when
    /// a port follows (libxt_NAT's parse_to).
    pub fn parse_to(&mut self, arg: &str, proto: u8, v6: bool) -> Result<()> {
        let bad_format = || Error::param("Invalid address format");
        // (address text, position of the port colon in `arg`)
        let (addrs, colon) = match arg.find('[') {
            Some(open) => {
                let start = &arg[open + 1..];
                let close = start.find(']').ok_or_else(bad_format)?;
                if !v6 {
                    return Err(bad_format());
                }
                let after = open + 1 + close + 1;
                (&start[..close], arg[after..].find(':').map(|c| after + c))
            }
            None => {
                let colon = arg.find(':').filter(|&c| !arg[c + 1..].contains(':'));
                (&arg[..colon.unwrap_or(arg.len())], colon)
            }
        };
        if let Some(c) = colon {
            self.parse_ports(&arg[c + 1..], proto)?;
            // A colon first (or right after "[]"): ports only.
            if c == 0 || c == 2 {
                return Ok(());
            }
        }
        self.flags |= MAP_IPS;
        let (lo, hi) = match addrs.split_once('-') {
            Some((a, b)) => (a, Some(b)),
            None => (addrs, None),
        };
        self.min_addr = parse_addr(lo, v6)?;
        self.max_addr = match hi {
            Some(h) => parse_addr(h, v6)?,
            None => self.min_addr,
        };
        Ok(())
    }

    /// Apply one NAT option.
    pub fn parse_opt(&mut self, c: &Call) -> Result<()> {
        match c.opt.id {
            O_TO_DEST | O_TO_SRC => self.parse_to(c.arg, c.ctx.proto, c.ctx.is_v6())?,
            O_TO_PORTS => self.parse_ports(c.arg, c.ctx.proto)?,
            O_RANDOM => self.flags |= PROTO_RANDOM,
            O_RANDOM_FULLY => self.flags |= PROTO_RANDOM_FULLY,
            O_PERSISTENT => self.flags |= PERSISTENT,
            _ => {}
        }
        Ok(())
    }

    /// libxt_NAT's sprint_range.
    pub fn range_text(&self, v6: bool) -> String {
        let mut s = String::new();
        let brackets = v6 && self.flags & PROTO_SPECIFIED != 0;
        let addr = |s: &mut String, a: &[u8; 16]| {
            if v6 {
                opt::fmt_v6(s, a);
            } else {
                opt::fmt_v4(s, a);
            }
        };
        if self.flags & MAP_IPS != 0 {
            if brackets {
                s.push('[');
            }
            addr(&mut s, &self.min_addr);
            if self.max_addr != self.min_addr {
                s.push('-');
                addr(&mut s, &self.max_addr);
            }
            if brackets {
                s.push(']');
            }
        }
        if self.flags & PROTO_SPECIFIED != 0 {
            let _ = write!(s, ":{}", self.min_port);
            if self.max_port != self.min_port {
                let _ = write!(s, "-{}", self.max_port);
            }
            if self.flags & PROTO_OFFSET != 0 {
                let _ = write!(s, "/{}", self.base_port);
            }
        }
        s
    }

    /// libxt_NAT's __NAT_print: `rangeopt` before the range, `flag_pfx`
    /// ("--" or "") before the flags; `skip_colon` drops a leading ':'.
    pub fn print(
        &self,
        out: &mut String,
        v6: bool,
        rangeopt: &str,
        flag_pfx: &str,
        skip_colon: bool,
    ) {
        let text = self.range_text(v6);
        if !text.is_empty() {
            let t = match text.strip_prefix(':') {
                Some(rest) if skip_colon => rest,
                _ => &text,
            };
            let _ = write!(out, " {rangeopt}{t}");
        }
        if self.flags & PROTO_RANDOM != 0 {
            let _ = write!(out, " {flag_pfx}random");
        }
        if self.flags & PROTO_RANDOM_FULLY != 0 {
            let _ = write!(out, " {flag_pfx}random-fully");
        }
        if self.flags & PERSISTENT != 0 {
            let _ = write!(out, " {flag_pfx}persistent");
        }
    }
}

/// inet_pton for the family, into the 16-byte slot.
fn parse_addr(s: &str, v6: bool) -> Result<[u8; 16]> {
    let bad = || Error::param(format!("Bad IP address \"{s}\""));
    let mut a = [0u8; 16];
    if v6 {
        a = s.parse::<Ipv6Addr>().map_err(|_| bad())?.octets();
    } else {
        a[..4].copy_from_slice(&s.parse::<Ipv4Addr>().map_err(|_| bad())?.octets());
    }
    Ok(a)
}

/// Hook names in the kernel's order (textify_hooks).
const HOOK_ORDER: &[&str] = &["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"];

/// The kernel's table and hook restriction of a target (xt_check_target):
/// only in `table`, and from a built-in chain only if it is one of `hooks`.
/// A user-defined chain is not checked for hooks (its callers are not known
/// here).
pub fn check_table_hooks(
    target: &str,
    ctx: &ParseCtx,
    table: TableKind,
    hooks: &[&str],
) -> Result<()> {
    check_table(target, ctx, table)?;
    check_target_hooks(target, ctx, hooks)
}

/// The table half of [`check_table_hooks`], for targets bound to one table
/// but usable from all of its chains.
pub fn check_table(target: &str, ctx: &ParseCtx, table: TableKind) -> Result<()> {
    if ctx.table != table {
        return Err(Error::op(format!(
            "Invalid argument: {target} target: only valid in {} table, not {}.",
            table.name(),
            ctx.table.name()
        )));
    }
    Ok(())
}

/// The hook half of [`check_table_hooks`], for targets bound to some hooks
/// in any table.
pub fn check_target_hooks(target: &str, ctx: &ParseCtx, hooks: &[&str]) -> Result<()> {
    if ctx.table.builtin_chains().contains(&ctx.chain) && !hooks.contains(&ctx.chain) {
        let usable: Vec<&str> = HOOK_ORDER
            .iter()
            .copied()
            .filter(|h| hooks.contains(h))
            .collect();
        return Err(Error::op(format!(
            "Invalid argument: {target} target: used from hooks {}, but only usable from {}.",
            ctx.chain,
            usable.join("/")
        )));
    }
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Snat {
    pub range: NatRange,
}

impl Ext for Snat {
    const NAME: &'static str = "SNAT";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("to-source", O_TO_SRC, Arg::Required).mand(),
        OptDef::new("random", O_RANDOM, Arg::None),
        OptDef::new("random-fully", O_RANDOM_FULLY, Arg::None),
        OptDef::new("persistent", O_PERSISTENT, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Snat {
            range: NatRange::default(),
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.range.parse_opt(c)?;
        // The SNAT structures (IPv4 compat range, IPv6 nf_nat_range) have no
        // room for a base port: the flag stays, the value is lost.
        self.range.base_port = 0;
        Ok(())
    }

    fn finish(&mut self, _: u32, ctx: &ParseCtx) -> Result<()> {
        check_table_hooks("SNAT", ctx, TableKind::Nat, &["INPUT", "POSTROUTING"])
    }

    fn save(&self, ctx: &PrintCtx, out: &mut String) {
        self.range
            .print(out, ctx.is_v6(), "--to-source ", "--", false);
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        self.range.print(out, ctx.is_v6(), "to:", "", false);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{run, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn list_forms() {
        let cases: &[(Family, &str, &str)] = &[
            (Family::Ipv4, "-j SNAT --to-source 1.1.1.1", " to:1.1.1.1"),
            (
                Family::Ipv4,
                "-p tcp -j SNAT --to-source 1.1.1.1-1.1.1.10:1025-65535 --random --persistent",
                " to:1.1.1.1-1.1.1.10:1025-65535 random persistent",
            ),
            (
                Family::Ipv4,
                "-p udp -j SNAT --to-source :53 --random-fully",
                " to::53 random-fully",
            ),
            (
                Family::Ipv6,
                "-j SNAT --to-source dead::beef",
                " to:dead::beef",
            ),
            (
                Family::Ipv6,
                "-p tcp -j SNAT --to-source [dead::beef-dead::fee7]:80-81",
                " to:[dead::beef-dead::fee7]:80-81",
            ),
            (
                Family::Ipv4,
                "-p tcp -j SNAT --to-source 1.1.1.1:10-20/30",
                " to:1.1.1.1:10-20/0",
            ),
        ];
        for (fam, rule, want) in cases {
            let Printed {
                list: l,
                list_numeric: n,
                ..
            } = run(*fam, TableKind::Nat, "POSTROUTING", rule).unwrap();
            assert_eq!(l, *want, "{rule}");
            assert_eq!(n, *want, "{rule} -n");
        }
    }

    #[test]
    fn errors() {
        let cases: &[(Family, &str, &str, &str)] = &[
            (
                Family::Ipv4,
                "POSTROUTING",
                "-j SNAT --to-source 1.1.1.1:80",
                "Need TCP, UDP, SCTP or DCCP with port specification",
            ),
            (
                Family::Ipv4,
                "POSTROUTING",
                "-j SNAT --to-source [1.1.1.1]",
                "Invalid address format",
            ),
            (
                Family::Ipv4,
                "POSTROUTING",
                "-j SNAT --to-source 1.1.1.300",
                "Bad IP address \"1.1.1.300\"",
            ),
            (
                Family::Ipv4,
                "POSTROUTING",
                "-p tcp -j SNAT --to-source 1.1.1.1:20-10",
                "Port range `10' funky",
            ),
            (
                Family::Ipv4,
                "POSTROUTING",
                "-p tcp -j SNAT --to-source 1.1.1.1:20x",
                "Garbage after port value: `x'",
            ),
            (
                Family::Ipv4,
                "POSTROUTING",
                "-p tcp -j SNAT --to-source 1.1.1.1:10-20x",
                "Garbage after port range: `x'",
            ),
            (
                Family::Ipv4,
                "POSTROUTING",
                "-j SNAT",
                "SNAT: option \"--to-source\" must be specified\n",
            ),
            (
                Family::Ipv4,
                "PREROUTING",
                "-j SNAT --to-source 1.1.1.1",
                "Invalid argument: SNAT target: used from hooks PREROUTING, but only usable from INPUT/POSTROUTING.",
            ),
            (
                Family::Ipv6,
                "OUTPUT",
                "-j SNAT --to-source ::1",
                "Invalid argument: SNAT target: used from hooks OUTPUT, but only usable from INPUT/POSTROUTING.",
            ),
        ];
        for (fam, chain, rule, want) in cases {
            let e = run(*fam, TableKind::Nat, chain, rule).unwrap_err().msg;
            assert_eq!(e, *want, "{rule}");
        }
        let e = run(
            Family::Ipv4,
            TableKind::Filter,
            "INPUT",
            "-j SNAT --to-source 1.1.1.1",
        )
        .unwrap_err()
        .msg;
        assert_eq!(
            e,
            "Invalid argument: SNAT target: only valid in nat table, not filter."
        );
        // User chains are not checked for hooks.
        assert!(run(
            Family::Ipv4,
            TableKind::Nat,
            "mychain",
            "-j SNAT --to-source 1.1.1.1"
        )
        .is_ok());
    }
}
